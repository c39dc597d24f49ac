// The ledger: opens accounts and submits operations exactly once, over any Engine.
//
//   absl::StatusOr<ledger::Ledger> opened = ledger::Ledger::Open(ledger::OpenMemoryEngine());
//   if (!opened.ok()) return opened.status();  // bad options: InvalidArgument naming the field
//   ledger::Ledger& book = *opened;
//   book.DefineAsset({"USD", 2});
//   book.OpenAccount({.id = "alice", .asset = "USD"});
//   ledger::SubmitRequest request{.key = "order-1001",
//                                 .operation = ledger::Operation::Transfer(...)};
//   absl::StatusOr<ledger::Outcome> outcome = book.Submit(request);
//
// Submit runs one database transaction per attempt: claim the key, lock the accounts
// in sorted order, check the business rules, post the entries, record the key and the
// outbox event, commit. A retry with the same key replays the recorded transaction; a
// rejected or faulted attempt leaves the key unused. SubmitBatch runs many operations
// through the same pipeline in one database transaction, each with its own outcome;
// a single Submit is a batch of one.
//
// Thread-safe: share one Ledger across threads.
#ifndef LEDGER_LEDGER_LEDGER_H_
#define LEDGER_LEDGER_LEDGER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "idempotency/key.h"
#include "ledger/account.h"
#include "ledger/engine.h"
#include "ledger/hold.h"
#include "ledger/operation.h"
#include "ledger/outcome.h"
#include "ledger/verify.h"

namespace ledger {

namespace internal {
class LedgerTestingHooks;  // ledger/internal/testing_hooks.h: tests and benchmarks only
struct BatchItem;          // ledger/batch_attempt.h
class GroupCommitter;      // ledger/group_commit.h
struct UnitOfWorkState;    // ledger/unit_of_work_internal.h
}  // namespace internal

class UnitOfWork;          // ledger/unit_of_work.h
struct TransactOptions;    // ledger/unit_of_work.h

// The largest LedgerOptions::attempts_max Open accepts: past it a submit on a hot
// account could hold its caller through minutes of deadlock retries.
inline constexpr int kAttemptsMaxLimit = 100;

// The most operations one SubmitBatch takes (TigerBeetle's request holds 8,189).
inline constexpr size_t kBatchItemsMax = 8190;
// The most entries one SubmitBatch may post, counting each operation's postings before
// the database is read: a reverse counts as kPostingsPerTransactionMax.
inline constexpr size_t kBatchEntriesMax = 65536;
// The most GroupCommitOptions::transactions_in_flight_max accepts.
inline constexpr int kGroupCommitTransactionsInFlightLimit = 64;

// Caps on what one non-system account may debit within a sliding window. Reversals
// are exempt: they correct, they do not spend. A limit sets at least one cap.
struct VelocityLimit {
  // The sliding window the caps apply to. Positive and finite. Default: 1 hour.
  absl::Duration window = absl::Hours(1);
  // Most debits within the window. 0: no count cap; never negative. Default: 0.
  int64_t debit_count_max = 0;
  // Most minor units debited within the window. 0: no amount cap; never negative.
  // Default: 0.
  Amount debit_amount_max = 0;
};

// Group commit: concurrent Submit calls share database transactions (SubmitBatch, not
// atomic), so callers that submit one operation at a time from many threads get batch
// throughput. A submit starts at once while fewer than transactions_in_flight_max shared
// transactions run; submits that arrive while that many are in flight queue and go
// together in the next, up to batch_items_max, and only with others of the same claim
// wait (a batch claims with the least of its items' waits). Each caller gets exactly its
// own result. A lone submit (nothing queued, a slot free) runs exactly what it runs with
// group commit off, on its own thread: the same statements, the same round trips
// (issue 29, docs/benchmarks.md).
struct GroupCommitOptions {
  // Default: true. false: every Submit its own transaction, and SubmitAsync runs on the
  // calling thread.
  bool enabled = true;
  // Most submits one shared transaction takes. 1 .. kBatchItemsMax. Default: 256.
  size_t batch_items_max = 256;
  // Shared transactions running at once. Two let a database server work on one while
  // the ledger prepares or finishes the other (PostgreSQL at 32 clients: 1.2x to 1.8x
  // the rate of one, docs/benchmarks.md). While one runs, another starts only with a
  // share of the waiting callers (the waiters divided by this number). Three were
  // behind or level with two on every engine at 8 and 32 clients once that rule was in
  // (docs/benchmarks.md, issue 29), so the default stays at two.
  // 1 .. kGroupCommitTransactionsInFlightLimit (64). Default: 2.
  int transactions_in_flight_max = 2;
};

// Where a read may be answered from (docs/scaling.md, "Reads off the primary").
enum class ReadConsistency {
  // The read engine (LedgerOptions::read_engine) when the ledger has one: a standby or
  // another Galera node, which may not have applied the latest commits yet; the
  // primary when it has none. The default of every read.
  kReplicaAllowed,
  // The primary, the engine every write goes to: a caller that must see its own write
  // (read-your-writes) asks for it.
  kPrimary,
};

// Checked by Ledger::Open: a bad field is InvalidArgument naming it, never clamped.
struct LedgerOptions {
  // Where time comes from; not owned, must outlive the Ledger. Default: nullptr, the
  // system clock.
  Clock* clock = nullptr;
  // Applied to every debited account without allow_negative. Default: empty, no limit.
  std::vector<VelocityLimit> velocity_limits;
  // Attempts of one submit when the engine reports a retryable error (deadlock,
  // serialization failure). Each attempt rolled back fully, so retrying is safe.
  // 1 .. kAttemptsMaxLimit. Default: 8.
  int attempts_max = 8;
  // Default: on (GroupCommitOptions); `.group_commit = {.enabled = false}` turns it off.
  GroupCommitOptions group_commit;
  // Reads off the primary: an engine on a standby (PostgreSQL, e.g. OpenReadEngine of a
  // URL with target_session_attrs=prefer-standby, engines/open_engine.h) or on another
  // node (Galera) of the same database. Reads with ReadConsistency::kReplicaAllowed
  // (balances, accounts, assets, history, holds, transactions, events) go there; claims,
  // submits, units of work, sweeps, verify and every write stay on the primary: the
  // Ledger holds it behind a wrapper that stops the process (LEDGER_CHECK) if a write
  // ever reaches it (ledger/read_only_engine.h). Must not be the primary engine itself.
  // Default: nullptr, every read from the primary.
  std::shared_ptr<Engine> read_engine;
};

// OK, or InvalidArgument naming the first bad field ("LedgerOptions.attempts_max ...").
absl::Status ValidateLedgerOptions(const LedgerOptions& options);

// The key space of every submit that names none: ONE for every entry point (Submit,
// SubmitBatch, group commit, `ledger submit`, `ledger serve`'s single and batch routes)
// and every kind, so a key names one operation whichever door it came through. The
// same key and payload replays the first; another payload or another kind under the
// same key is a conflict. Before this space, the library and the CLI keyed a submit
// under its kind ("top_up", ...): the schema migration "one_key_space" copies those
// keys here so they still replay (docs/concepts.md, "One key space").
inline constexpr std::string_view kDefaultKeyNamespace = "operations";

struct SubmitRequest {
  std::string key;      // the idempotency key, chosen by the client; required
  Scope scope;          // default: tenant "default", actor "default"
  Operation operation;  // required
  ClaimOptions claim;   // default: idempotency/key.h's defaults (24 h ttl, replay, 10 s wait)
  // The key space: a caller that wants keys apart from every other entry point's names
  // its own (`ledger submit --key-namespace`), e.g. the kind to keep a per-kind space.
  // Checked by ValidateNamespace (1..64 printable ASCII bytes, no '|' or '/'). Default "":
  // kDefaultKeyNamespace, shared by every entry point.
  std::string key_namespace;
};

// The identity `request`'s key is claimed and recorded under: (key_namespace, or
// kDefaultKeyNamespace when empty; scope; key). Not validated.
KeyIdentity KeyIdentityOf(const SubmitRequest& request);

struct SubmitBatchRequest {
  // Applied in order, each as its own operation with its own key: a later item sees
  // the balances, versions and reversals of the earlier ones. 1 .. kBatchItemsMax.
  std::vector<SubmitRequest> items;
  // All items commit or none. When one item is not committed (rejected, bad input,
  // conflict, in progress, an error-policy duplicate) it keeps its own result and every
  // other item is rejected with kBatchItemFailed, naming it; a duplicate replay does not
  // break the batch (the item is committed already). Default: false, each item alone.
  bool atomic = false;
};

// One result per item, in order: exactly what Submit returns for a request.
using SubmitResult = absl::StatusOr<Outcome>;

// The most transactions one ListTransactions page returns, and the default.
inline constexpr int64_t kTransactionPageLimitMax = 1000;
inline constexpr int64_t kTransactionPageLimitDefault = 100;
// The longest metadata member name and value a filter may name, in bytes: what the
// engines index (members with longer names or values, or non-string values, are not).
inline constexpr size_t kMetadataFilterNameBytesMax = 128;
inline constexpr size_t kMetadataFilterValueBytesMax = 512;

// One page of Ledger::ListTransactions: the filter (engine.h, TransactionFilter; every set
// field narrows), where to continue, how many.
struct TransactionQuery {
  TransactionFilter filter;
  // "" for the first page; else the next_cursor of the page before (opaque text).
  std::string cursor;
  // 1 .. kTransactionPageLimitMax. Default: kTransactionPageLimitDefault.
  int64_t limit = kTransactionPageLimitDefault;
};

struct TransactionPage {
  std::vector<Transaction> transactions;  // by (created_at, id)
  // Where the next page starts; "" when this page came back short (there is no more now).
  std::string next_cursor;
};

// OK, or InvalidArgument naming the bad field of the query: an account id, a metadata
// name or value out of bounds, created_from not before created_before, a limit out of
// range, a cursor that is not one ListTransactions gave.
absl::Status ValidateTransactionQuery(const TransactionQuery& query);
// The cursor that continues after `transaction`, and back.
std::string TransactionCursorText(const Transaction& transaction);
absl::StatusOr<TransactionCursor> ParseTransactionCursor(std::string_view text);

// What a key did: its committed record and the transaction it committed.
struct KeyLookup {
  KeyRecord record;
  Transaction transaction;
};

class Ledger {
 public:
  // The one way to make a Ledger. A null engine or bad options: InvalidArgument naming
  // the field, and nothing is touched.
  static absl::StatusOr<Ledger> Open(std::shared_ptr<Engine> engine, LedgerOptions options = {});

  Ledger(Ledger&&);
  Ledger& operator=(Ledger&&);
  ~Ledger();
  Ledger(const Ledger&) = delete;
  Ledger& operator=(const Ledger&) = delete;

  // Bad input: InvalidArgument. Same key and scope with another payload: IsConflict.
  // The key's first attempt still running past the wait bound: IsInProgress. A
  // committed key under ReplayPolicy::kError: IsDuplicate. A posting plan that breaks
  // an invariant (ledger/invariants.h; a bug, nothing written): Internal,
  // IsInvariantViolation. Otherwise an Outcome.
  absl::StatusOr<Outcome> Submit(const SubmitRequest& request);

  // Submit without waiting for the commit: `done` gets exactly what Submit would have
  // returned, once. With group commit on (the default), the request joins the group
  // committer's queue and this returns at once; its batch runs, and `done` is called, on
  // one of the committer's own threads (at most transactions_in_flight_max), so no thread of the
  // caller's is parked while the batch commits. `done` should be quick (that thread
  // leads no other batch meanwhile); it may submit again. Bad input, or group commit
  // off: the submit runs on this thread and `done` is called before SubmitAsync
  // returns. Every `done` is called before the Ledger's destructor returns; the Ledger
  // is not moved while one is pending.
  void SubmitAsync(SubmitRequest request, std::function<void(SubmitResult)> done);
  // Whether SubmitAsync returns before the submit touches the database (group commit
  // on): a caller that must not block, such as an event loop, calls it only then.
  bool group_commit_enabled() const { return group_committer_ != nullptr; }

  // Many operations in one database transaction (see SubmitBatchRequest), each item's
  // result what Submit would return for it alone. Lock order, so two batches never
  // deadlock: every key first, in (namespace, scope, key) byte order, then every
  // account, in id order. A key another transaction holds past the batch's wait (the
  // least of its items' waits) makes its items in progress, and the others go on in a
  // new attempt without them. A retryable error reruns the whole batch (attempts_max);
  // any other fault faults every item not yet decided, each key unused; an in-doubt
  // COMMIT leaves every item that was to commit in doubt. Too many items or entries,
  // or none: InvalidArgument for the whole call, nothing run.
  absl::StatusOr<std::vector<SubmitResult>> SubmitBatch(const SubmitBatchRequest& batch);
  // SubmitBatch without waiting for the commit, as SubmitAsync is Submit: `done` gets
  // exactly what SubmitBatch would have returned, once. With group commit on, the batch
  // joins the group committer's queue as one unit and runs as its own transaction (never
  // merged with other submits: its order and atomicity are its own) on a committer
  // thread, where `done` is called; this returns at once. A batch refused as a whole
  // (too many items or entries, or none), one that needs no database (every item bad,
  // or an atomic batch with a bad item), or group commit off: it runs on this thread
  // and `done` is called before SubmitBatchAsync returns. The rest as SubmitAsync.
  using SubmitBatchDone = std::function<void(absl::StatusOr<std::vector<SubmitResult>>)>;
  void SubmitBatchAsync(SubmitBatchRequest batch, SubmitBatchDone done);

  // Runs `work` in ONE database transaction with the caller's own SQL and submits
  // (ledger/unit_of_work.h, docs/unit-of-work.md): OK from `work` commits it all once;
  // an error (or a throw) rolls it all back. Deadlocks and serialization failures rerun
  // `work` from the start. Returns OK once committed, the work's error, or IsInDoubt.
  absl::Status Transact(const std::function<absl::Status(UnitOfWork&)>& work);
  absl::Status Transact(const std::function<absl::Status(UnitOfWork&)>& work,
                        const TransactOptions& options);

  // Dry runs (ledger/dry_run.cc, docs/api.md "Dry runs"): what Submit and SubmitBatch
  // would return for the same request now, writing nothing. The same validation (a key
  // is required: it decides duplicate and conflict), claims, locks, rules and decisions
  // run in a unit of work that is always rolled back: no key record, transaction, entry,
  // hold, event or balance change stays, and group commit never takes part. `committed`
  // means "would commit" (its id and created_at are the would-be ones); `duplicate`
  // carries the transaction the key recorded; a conflict is IsConflict. In a unit, an
  // engine error (a claim wait run out: IsInProgress) is the whole call's error.
  absl::StatusOr<Outcome> DryRun(const SubmitRequest& request);
  absl::StatusOr<std::vector<SubmitResult>> DryRunBatch(const SubmitBatchRequest& batch);

  absl::Status DefineAsset(const Asset& asset);
  absl::StatusOr<Account> OpenAccount(const AccountSpec& spec);
  // Closes an account whose balance is zero, atomically against concurrent submits:
  // FailedPrecondition (naming the balance) while money is in it, NotFound if missing.
  // Closing a closed account with zero balance is OK.
  absl::Status CloseAccount(std::string_view id);
  // Accounts as they stand now: pending amounts count only holds still reserving (a hold
  // past its expires_at is released even before ExpireHolds records it).
  absl::StatusOr<Account> GetAccount(std::string_view id,
                                     ReadConsistency consistency = ReadConsistency::kReplicaAllowed);
  // By id, strictly after `after_id` ("" for the start).
  absl::StatusOr<std::vector<Account>> ListAccounts(
      std::string_view after_id, int64_t limit,
      ReadConsistency consistency = ReadConsistency::kReplicaAllowed);
  absl::StatusOr<Transaction> GetTransaction(
      std::string_view id, ReadConsistency consistency = ReadConsistency::kReplicaAllowed);

  // Holds as they stand now: a pending hold past its expires_at reads as expired.
  // NotFound if there is no hold `id`.
  absl::StatusOr<Hold> GetHold(std::string_view id,
                              ReadConsistency consistency = ReadConsistency::kReplicaAllowed);
  // The holds from or to the account ("" for every hold), by id, strictly after
  // `after_id`, at most `limit`; with `status`, only those with that status as of now
  // (read in id order until `limit` match: a rare status may take many engine pages).
  // NotFound if the account does not exist.
  absl::StatusOr<std::vector<Hold>> ListHolds(
      std::string_view account_id, std::string_view after_id, int64_t limit,
      std::optional<HoldStatus> status = std::nullopt,
      ReadConsistency consistency = ReadConsistency::kReplicaAllowed);
  // Records the expiry of every hold past its expires_at, in pages: each page is a batch
  // of expire items without keys through the submit pipeline (its retries, lock order and
  // invariant checks), in one database transaction that locks the holds' accounts,
  // releases each still-pending hold from the stored pending amounts, marks it expired
  // and commits an expire transaction (kind expire, hold_id, no entries, no key) with its
  // event. Safe to run concurrently with itself, submits, captures and voids: exactly one
  // settles a hold. Returns how many holds it expired. An expiry that breaks an
  // invariant (a bug, or a corrupt stored amount) writes nothing and the sweep returns
  // its error (Internal, IsInvariantViolation) after the page's other expiries commit.
  absl::StatusOr<int64_t> ExpireHolds();
  // Prunes expired keys in batches; returns how many were deleted.
  absl::StatusOr<int64_t> PruneExpiredKeys();

  // Reads for programs (the CLI, the HTTP service), straight from what is committed.
  // Every read takes a ReadConsistency: by default the read engine when the ledger has
  // one (LedgerOptions::read_engine), kPrimary for read-your-writes.
  // Assets by code; NotFound naming the code when it is not defined.
  absl::StatusOr<std::vector<Asset>> ListAssets(
      ReadConsistency consistency = ReadConsistency::kReplicaAllowed);
  absl::StatusOr<Asset> GetAsset(std::string_view code,
                                 ReadConsistency consistency = ReadConsistency::kReplicaAllowed);
  // The account's entries with account_version > after_version, ascending, at most
  // `limit` (none for an account that does not exist: ask GetAccount first), each with its
  // transaction's story (kind, counterparties, metadata: HistoryEntry).
  absl::StatusOr<std::vector<HistoryEntry>> ListHistory(
      std::string_view account_id, int64_t after_version, int64_t limit,
      ReadConsistency consistency = ReadConsistency::kReplicaAllowed);
  // Transactions by (created_at, id), filtered (TransactionQuery), a page at a time.
  // InvalidArgument for a bad query (ValidateTransactionQuery), NotFound for a filter
  // account that does not exist. Each page is a range of one index (docs/api.md).
  absl::StatusOr<TransactionPage> ListTransactions(
      const TransactionQuery& query, ReadConsistency consistency = ReadConsistency::kReplicaAllowed);
  // The record a key committed under `identity` and its transaction, while the key is
  // within its TTL. NotFound when no committed key is stored there, or it expired (it
  // may be pruned any time, and a new submit would run again). Bad identity:
  // InvalidArgument.
  absl::StatusOr<KeyLookup> LookUpKey(
      const KeyIdentity& identity, ReadConsistency consistency = ReadConsistency::kReplicaAllowed);
  // Outbox events with sequence > after_sequence, in commit order, at most `limit`.
  absl::StatusOr<std::vector<OutboxEvent>> ListEvents(
      int64_t after_sequence, int64_t limit,
      ReadConsistency consistency = ReadConsistency::kReplicaAllowed);
  // The verify audit (ledger/verify.h) over the whole database, on the primary.
  absl::StatusOr<VerifyReport> Verify();
  // The posted balance at `as_of`: the balance_after of the account's last entry, in
  // commit order (account_version), before its first entry created after `as_of`
  // (entries store their running balance), or 0 before the first entry. One index
  // lookup (Engine::EntryAsOf), whatever the length of the history. Holds keep no
  // history, so there is no pending amount as of a past instant.
  absl::StatusOr<Amount> BalanceAsOf(std::string_view account_id, absl::Time as_of,
                                     ReadConsistency consistency = ReadConsistency::kReplicaAllowed);
  // The engine's name ("sqlite", "postgres", ...), for logs and health answers.
  std::string_view engine_name() const;
  // Whether reads that allow a replica go to a read engine (LedgerOptions::read_engine).
  bool has_read_engine() const { return read_engine_ != nullptr; }

  Clock& clock() { return *clock_; }

 private:
  friend class internal::LedgerTestingHooks;
  friend class UnitOfWork;
  class BatchAttempt;  // ledger/batch_attempt.h: one database transaction of a batch

  Ledger(std::shared_ptr<Engine> engine, LedgerOptions options);

  // Runs attempts until every item is decided: every write of the ledger (submits,
  // batches, group commit, the hold sweep's expiries, units of work) goes through it. In
  // a unit of work (`unit` set) there is one attempt, on the unit's transaction: an error
  // decides every open item with it, and Transact commits or rolls back.
  void RunBatch(const std::vector<internal::BatchItem*>& items, bool atomic,
                internal::UnitOfWorkState* unit = nullptr);
  // SubmitBatch, or in a unit of work's transaction when `unit` is set.
  absl::StatusOr<std::vector<SubmitResult>> RunSubmitBatch(const SubmitBatchRequest& batch,
                                                           internal::UnitOfWorkState* unit);
  // Begins a transaction, runs `attempt` in it, and commits what the attempt wrote (or
  // rolls back): the attempt itself never begins or ends a transaction.
  absl::Status RunInOwnTransaction(BatchAttempt& attempt, bool use_remembered_rows);
  // Expires the lapsed holds among `holds` in one batch attempt (ledger/hold_sweep.cc).
  absl::StatusOr<int64_t> ExpireHoldPage(const std::vector<Hold>& holds);
  // The account with its lapsed holds no longer counted as pending, at `now`, read from
  // `engine` (the one the account was read from).
  absl::StatusOr<Account> AsOfNow(Engine& engine, Account account, absl::Time now);
  // The ONE place a read picks its engine: the read engine for kReplicaAllowed when there
  // is one, else the primary. Writes never call it: they use engine_.
  Engine& ReadEngine(ReadConsistency consistency);

  // The primary: every write, claim and transaction.
  std::shared_ptr<Engine> engine_;
  // Reads that allow a replica, behind internal::ReadOnlyEngine; null without one.
  std::shared_ptr<Engine> read_engine_;
  LedgerOptions options_;
  Clock* clock_;
  // Set only by LedgerTestingHooks::OpenWithoutIdempotency: no claim, no key record.
  bool skip_idempotency_ = false;
  // Set only by LedgerTestingHooks::OpenTamperingWithPlans: breaks each posting plan
  // just before the invariant checks, to prove they stop it.
  std::function<void(Transaction&, std::vector<Account>&)> tamper_plan_;
  // Set when options_.group_commit.enabled.
  std::unique_ptr<internal::GroupCommitter> group_committer_;
};

}  // namespace ledger

#endif  // LEDGER_LEDGER_LEDGER_H_
