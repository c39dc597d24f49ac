// The storage contract every engine (memory, sqlite, postgres, mysql) implements.
//
// The submit pipeline (ledger/batch_attempt.h) is engine-agnostic: it opens one
// StorageTransaction per attempt of a batch (a single submit is a batch of one) and calls,
// in this order,
//   ClaimKeys (or ClaimKey per key) -> [LoadTransactions (reversal targets and the
//   transactions replays return), LoadHolds] -> LockAccounts once
//   -> [IsReversed*, LoadHolds, LoadHoldTotals*, LoadDebitUsage*]
//   -> (WriteTransaction -> RecordKey -> AppendEvent) per committing item -> Commit
// EndWithoutWrites when nothing is to be written, and Rollback (or the destructor) on
// every other path. Commit must leave no placeholder (nor claimed record) of a claimed key that
// RecordKey did not store: a rejected item of a committed batch leaves its key unused.
// An engine decides how to make ClaimKey exclusive (advisory lock, the key's row,
// serialized writer, mutex) and how to batch the writes, but every engine shows the same observable semantics: the
// conformance suite in tests/conformance/ runs unchanged against each.
//
// Errors: engines map their driver's errors in one place (engines/<name>/*_errors.cc)
// onto the vocabulary of base/status.h: RetryableError for deadlocks and
// serialization failures (the transaction rolled back), InProgressError when the claim
// wait runs out, InDoubtError when COMMIT's result is unknown, Unavailable for a lost
// connection, AlreadyExists for identity clashes. No driver exception leaves an engine.
//
// Idempotency for work outside the ledger (run-idempotently, the webhook guard) is not
// part of this contract: an engine hands out those stores as separate objects,
// work_claims() and webhooks() (idempotency/stores.h).
//
// Thread safety: an Engine is shared by all threads; a StorageTransaction belongs to
// the one thread that began it.
#ifndef LEDGER_LEDGER_ENGINE_H_
#define LEDGER_LEDGER_ENGINE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "idempotency/key.h"
#include "idempotency/stores.h"
#include "ledger/account.h"
#include "ledger/caller_sql.h"
#include "ledger/hold.h"
#include "ledger/transaction.h"

namespace ledger {

struct DebitUsage {
  int64_t count = 0;   // debit entries
  Amount amount = 0;   // sum of their absolute amounts (saturates at the maximum)
  friend bool operator==(const DebitUsage&, const DebitUsage&) = default;
};

// One line of an account's history: the entry and the transaction it belongs to.
struct HistoryEntry {
  Entry entry;
  std::string transaction_id;
  absl::Time created_at;
  // The story of the transaction, filled by Ledger::ListHistory (engines leave these
  // empty): its kind, the other accounts its entries move money to or from (distinct,
  // in entry order) and its metadata (canonical JSON object).
  std::optional<OperationKind> kind;
  std::vector<std::string> counterparties;
  std::string metadata;
  friend bool operator==(const HistoryEntry&, const HistoryEntry&) = default;
};

// Which transactions Engine::FindTransactions returns: every set field narrows (AND).
// Checked by ValidateTransactionFilter (ledger/ledger.h) before an engine sees it.
struct TransactionFilter {
  // "": every account; else the transactions with an entry of this account (holds,
  // voids and expires post no entry: list them with ListHolds).
  std::string account_id;
  std::optional<OperationKind> kind;
  std::optional<absl::Time> created_from;    // created_at >= it
  std::optional<absl::Time> created_before;  // created_at < it
  // A top-level metadata member whose value is this JSON string: {"order":"A-17"} matches
  // metadata_key "order", metadata_value "A-17" (numbers, objects, arrays never match).
  std::optional<std::string> metadata_key;
  std::string metadata_value;
  friend bool operator==(const TransactionFilter&, const TransactionFilter&) = default;
};

// Whether `transaction` passes every field of `filter`: the meaning each engine's SQL
// implements, and the memory engine's whole implementation.
bool TransactionMatches(const Transaction& transaction, const TransactionFilter& filter);

// A position in the (created_at, id) order of FindTransactions: the last transaction of
// the page before. Keyset paging: a page continues strictly after it.
struct TransactionCursor {
  absl::Time created_at;
  std::string id;
  friend bool operator==(const TransactionCursor&, const TransactionCursor&) = default;
};

// What an account's pending holds amount to at a moment `now` (ledger/hold.h).
struct PendingHoldTotals {
  // Pending holds past their expires_at (released, their expiry not yet recorded): the
  // amounts still counted in the account's stored pending debits and credits.
  Amount lapsed_debits = 0;
  Amount lapsed_credits = 0;
  // Holds out of the account still reserving at `now` that were placed at or after
  // `since`: for velocity limits, a hold counts as a debit while it is pending (its
  // capture then counts as the entry it posts).
  DebitUsage reserving_since;
  friend bool operator==(const PendingHoldTotals&, const PendingHoldTotals&) = default;
};

struct OutboxEvent {
  int64_t sequence = 0;  // assigned by the engine: unique, increasing in insertion order
  std::string transaction_id;
  std::string type;      // "transaction.committed"
  // JSON text: the transaction's JSON (TransactionToJsonText), which a committed
  // transaction never changes. The pipeline appends it empty and the engine stores it
  // empty: ListEvents renders it from the stored transaction (FillEventPayloads), so the
  // outbox does not hold a second copy of every transaction. Events stored before
  // 2026-11-28 keep the payload they were written with.
  std::string payload;
  absl::Time created_at;
  friend bool operator==(const OutboxEvent&, const OutboxEvent&) = default;
};

struct BeginOptions {
  // How long ClaimKey may wait for another holder of the same key. Default: 10 s.
  WaitPolicy wait;
  // Whether the engine may answer the claim and LockAccounts from the account rows it
  // wrote last, before the database confirms them (PostgreSQL: a submit or a batch in
  // one round trip). It must check them before anything commits or the attempt ends with
  // EndWithoutWrites, and answer StaleReadError when they changed; the ledger then
  // reruns the attempt with this false, which reads everything.
  bool use_remembered_rows = true;
};

// One database transaction. Not thread-safe. Destroying it without Commit rolls back.
class StorageTransaction {
 public:
  virtual ~StorageTransaction() = default;

  // A hint, given before the claims when they come in one call (ClaimKeys, or ClaimKey
  // for the only key): the accounts LockAccounts will be asked for (sorted, distinct)
  // if no claimed key has a committed record. An engine may lock them behind the
  // claims, in the same round trip, only when no claimed key has a committed record (a
  // replay locks nothing), and then answer a LockAccounts of these ids (or fewer) from
  // that read. Lock order stays keys, then accounts in id order. A lock error there is
  // LockAccounts' error, returned by it.
  // Given only in a transaction the attempt owns, never in a unit of work (whose
  // transaction goes on): when every claimed key has a live committed record
  // (expires_at after the intended records' created_at), the attempt replays or refuses
  // each and writes nothing, so an engine may end the transaction with the claims. It
  // then answers LoadTransactions of those records' transactions from what the claim
  // read, and Rollback ends nothing more. The default ignores the hint.
  virtual void ExpectAccountLocks(const std::vector<std::string>& sorted_ids) {
    (void)sorted_ids;
  }
  // Whether ExpectAccountLocks does anything: the ledger works the hint out (a pass over
  // the batch's plans) only for an engine that uses it. The default: no.
  virtual bool TakesAccountLockHint() const { return false; }
  // A hint, given before LoadTransactions when every item claimed a live committed
  // record (each replays it or refuses it): this transaction writes nothing, makes no
  // other call after that read, and ends with Rollback. An engine may end it with the
  // read, in the same round trip (PostgreSQL: the read and ROLLBACK pipelined); Rollback
  // then ends nothing more. Never given in a unit of work, whose transaction goes on.
  // The default ignores the hint.
  virtual void ExpectNoWrites() {}

  // Takes this transaction's exclusive hold on `intended.identity` until commit or
  // rollback and returns the committed record stored under it, if any (possibly
  // expired). While another live transaction holds the identity this waits up to the
  // begin options' bound, then fails with InProgressError.
  //
  // `intended` is the record the key will hold if this transaction commits it: its
  // fingerprint, the transaction id minted for it, created_at (the claim's time) and
  // expires_at. An engine whose claim writes a row may write this final record rather
  // than a placeholder (MySQL, PostgreSQL's row mode), as long as no other transaction
  // can read it before COMMIT and Commit removes it when RecordKey did not store it
  // (the key then stays unused). RecordKey is still called for every key that commits,
  // with a record that may differ from `intended` (a second item of the same key in a
  // batch, a second submit of a unit of work): the engine then writes that one.
  virtual absl::StatusOr<std::optional<KeyRecord>> ClaimKey(const KeyRecord& intended) = 0;

  // ClaimKey for each record, in the order given (the pipeline passes distinct
  // identities, in its global claim order), returning the stored records in that order.
  // The default claims one by one; an engine may claim them all in one round trip. When
  // a claim runs out of wait the result is InProgressError without saying which key:
  // the caller claims one by one to find out.
  virtual absl::StatusOr<std::vector<std::optional<KeyRecord>>> ClaimKeys(
      const std::vector<KeyRecord>& intended);

  virtual absl::StatusOr<std::optional<Transaction>> LoadTransaction(std::string_view id) = 0;

  // The transactions with these ids (distinct) that exist, in any order. The default
  // loads them one by one; an engine may read them all in one round trip.
  virtual absl::StatusOr<std::vector<Transaction>> LoadTransactions(
      const std::vector<std::string>& ids);

  // Whether a committed transaction has reversal_of == id.
  virtual absl::StatusOr<bool> IsReversed(std::string_view id) = 0;

  // Locks the accounts for update, in the given (sorted, distinct) order, and returns
  // those that exist, in that order. Missing ids are simply absent from the result.
  virtual absl::StatusOr<std::vector<Account>> LockAccounts(
      const std::vector<std::string>& sorted_ids) = 0;

  // Debits (entries with amount < 0) of the account created at or after `since`.
  virtual absl::StatusOr<DebitUsage> LoadDebitUsage(std::string_view account_id,
                                                    absl::Time since) = 0;

  // The holds with these ids (distinct) that exist, in any order, with their status as
  // last committed. Read before LockAccounts to learn a hold's accounts, and again after
  // it: every settlement locks both accounts first, so the second read is final.
  virtual absl::StatusOr<std::vector<Hold>> LoadHolds(const std::vector<std::string>& ids) = 0;

  // Engine::HoldTotals inside this transaction (the account is locked).
  virtual absl::StatusOr<PendingHoldTotals> LoadHoldTotals(std::string_view account_id,
                                                           absl::Time now,
                                                           absl::Time since) = 0;

  // Inserts the transaction and its entries and stores each account's new balance,
  // version and pending amounts (the accounts were locked by LockAccounts). A hold
  // transaction (transaction.hold) also inserts its hold, pending; a capture, void or
  // expire (transaction.hold_id) also settles that hold: status captured, voided or
  // expired, settled_by the transaction. The id, the reversal_of or the hold_id being
  // taken is RetryableError on every engine (docs/engines/errors.md: a concurrent writer
  // won a race; the retry re-checks and rejects or replays). An engine may hold writes
  // back and send them with Commit, so write errors may surface from Commit too.
  virtual absl::Status WriteTransaction(const Transaction& transaction,
                                        const std::vector<Account>& updated_accounts) = 0;

  // Stores the committed key record: inserts it, or replaces the expired record, the
  // placeholder or the record this transaction's claim wrote under the same identity
  // (when the claim wrote exactly `record`, there is nothing left to send).
  virtual absl::Status RecordKey(const KeyRecord& record) = 0;

  // Stores the event as given; its payload is empty (see OutboxEvent).
  virtual absl::Status AppendEvent(const OutboxEvent& event) = 0;

  // InDoubtError when the commit was sent and its result is unknown.
  virtual absl::Status Commit() = 0;
  virtual void Rollback() = 0;
  // Ends an attempt that decided to write nothing (rejections, replays): OK, or
  // StaleReadError when what the engine answered from remembered rows
  // (BeginOptions::use_remembered_rows) was not what the database holds, and the
  // decision must be made again. Either way the transaction is over. Default: Rollback.
  virtual absl::Status EndWithoutWrites() {
    Rollback();
    return absl::OkStatus();
  }

  // Units of work (ledger/unit_of_work.h): the caller's own statement in this
  // transaction, its placeholders the engine's own, its values bound; after the
  // ledger's buffered writes, so it sees them. An error leaves the transaction to be
  // rolled back (PostgreSQL refuses every later statement anyway). Default:
  // Unimplemented (the memory engine has no SQL).
  virtual absl::StatusOr<SqlRows> RunCallerSql(std::string_view sql,
                                               const std::vector<SqlValue>& parameters);
  // The driver's handle this transaction runs on, begun and with the ledger's writes
  // sent: sqlite3*, pqxx::nontransaction*, MYSQL* (each engine's header hands it out
  // typed). Default: Unimplemented.
  virtual absl::StatusOr<void*> NativeHandle();
  // Whether the transaction can still commit: false once a statement failed in a way
  // that aborted it (checked before a unit of work's COMMIT when the caller had the
  // native handle). Default: true.
  virtual absl::StatusOr<bool> StillUsable() { return true; }
};

class Engine {
 public:
  virtual ~Engine() = default;

  virtual std::string_view name() const = 0;

  // Applies the engine's versioned migrations that are not recorded yet. Idempotent.
  virtual absl::Status Migrate() = 0;

  virtual absl::StatusOr<std::unique_ptr<StorageTransaction>> Begin(
      const BeginOptions& options) = 0;

  // Assets: AlreadyExists if the code exists with another scale; OK if identical.
  virtual absl::Status PutAsset(const Asset& asset) = 0;
  virtual absl::StatusOr<std::optional<Asset>> GetAsset(std::string_view code) = 0;
  virtual absl::StatusOr<std::vector<Asset>> ListAssets() = 0;

  // AlreadyExists if the id is taken; FailedPrecondition if the asset is unknown.
  virtual absl::Status InsertAccount(const Account& account) = 0;
  virtual absl::StatusOr<std::optional<Account>> GetAccount(std::string_view id) = 0;
  // Accounts ordered by id, strictly after `after_id` ("" for the start).
  virtual absl::StatusOr<std::vector<Account>> ListAccounts(std::string_view after_id,
                                                            int64_t limit) = 0;
  // Closes the account if its balance and both pending amounts are zero, in one
  // statement under the account's row lock, so a submit holding the account finishes
  // first and is seen. True when the account is now closed; false when no account `id`
  // is empty (missing, money still in it, or a hold still recorded pending): nothing
  // changed.
  virtual absl::StatusOr<bool> CloseAccountIfZeroBalance(std::string_view id) = 0;

  virtual absl::StatusOr<std::optional<Transaction>> GetTransaction(std::string_view id) = 0;
  // The transactions with these ids (distinct) that exist, in any order: GetTransaction
  // for many ids (verify's key audit, a page at a time). The default reads them one by
  // one; an engine may read them all in one round trip.
  virtual absl::StatusOr<std::vector<Transaction>> GetTransactions(
      const std::vector<std::string>& ids);
  // Transactions ordered by id, strictly after `after_id`: an audit scan (verify, the
  // demo's summary), not a change feed. Ids are time-ordered when a submit starts, not
  // when it commits, so a slower writer can commit behind a page already read; readers
  // that follow new transactions page ListEvents, which is in commit order.
  virtual absl::StatusOr<std::vector<Transaction>> ListTransactions(std::string_view after_id,
                                                                    int64_t limit) = 0;
  // The account's entries with account_version > after_version, ascending.
  virtual absl::StatusOr<std::vector<HistoryEntry>> ListEntries(std::string_view account_id,
                                                                int64_t after_version,
                                                                int64_t limit) = 0;
  // The account's history as of an instant: its last entry, in commit order
  // (account_version), before the first entry created after `as_of`; nullopt when the
  // first entry is already after it (or there is none). Entries keep a running maximum
  // of created_at along account_version (a clock that stepped back, or two hosts' clocks,
  // can make created_at dip), so this is the greatest version whose running maximum is
  // <= as_of: the SQL engines find it by a binary search over (account_id,
  // account_version), at most log2(versions) + 1 primary-key lookups in one statement.
  // DataLoss when a version between 1 and the latest is missing.
  virtual absl::StatusOr<std::optional<HistoryEntry>> EntryAsOf(std::string_view account_id,
                                                                absl::Time as_of) = 0;
  // The transactions matching `filter`, ordered by (created_at, id), strictly after
  // `after` (nullopt for the start), at most `limit`, with their entries. Each filter is
  // answered by an index range (docs/api.md, "Listing transactions"), so a page reads
  // about `limit` rows of the narrowest filter given.
  virtual absl::StatusOr<std::vector<Transaction>> FindTransactions(
      const TransactionFilter& filter, const std::optional<TransactionCursor>& after,
      int64_t limit) = 0;

  // Committed key records ordered by (namespace, Scope::Encoded(), key), byte-wise,
  // strictly after `after`
  // (nullopt for the start).
  virtual absl::StatusOr<std::vector<KeyRecord>> ListKeyRecords(
      const std::optional<KeyIdentity>& after, int64_t limit) = 0;
  // The committed record stored under `identity` (possibly expired), or nullopt.
  virtual absl::StatusOr<std::optional<KeyRecord>> GetKeyRecord(const KeyIdentity& identity) = 0;
  // Deletes up to `limit` key records with expires_at <= now, through the expiry index.
  virtual absl::StatusOr<int64_t> PruneExpiredKeys(absl::Time now, int64_t limit) = 0;

  // Holds: by id; those from or to an account ("" for every account) ordered by id,
  // strictly after `after_id`; pending ones past their expires_at at `now`, ordered by
  // (expires_at, id), for the sweeper.
  virtual absl::StatusOr<std::optional<Hold>> GetHold(std::string_view id) = 0;
  virtual absl::StatusOr<std::vector<Hold>> ListHolds(std::string_view account_id,
                                                      std::string_view after_id,
                                                      int64_t limit) = 0;
  virtual absl::StatusOr<std::vector<Hold>> ListLapsedHolds(absl::Time now, int64_t limit) = 0;
  // The account's pending holds at `now` (see PendingHoldTotals), as last committed.
  virtual absl::StatusOr<PendingHoldTotals> HoldTotals(std::string_view account_id,
                                                       absl::Time now, absl::Time since) = 0;

  // Outbox events with sequence > after_sequence, ascending, each with its payload
  // (FillEventPayloads).
  virtual absl::StatusOr<std::vector<OutboxEvent>> ListEvents(int64_t after_sequence,
                                                              int64_t limit) = 0;

  // The storage for idempotency outside the ledger (idempotency/stores.h), in the same
  // database: run-idempotently's work claims and the webhook guard's events. Owned by
  // the engine and valid as long as it lives; thread-safe like the engine.
  virtual WorkClaimStore& work_claims() = 0;
  virtual WebhookStore& webhooks() = 0;
};

// Gives each event stored without a payload its transaction's JSON, the page's
// transactions read with one call of `read` (GetTransactions' contract): every engine's
// ListEvents ends with it, reading on the connection that read the events, so a replica
// that showed an event shows its transaction. DataLoss when an event's transaction is
// not stored (the two commit together, and transactions are never removed).
using TransactionsReader = absl::FunctionRef<absl::StatusOr<std::vector<Transaction>>(
    const std::vector<std::string>& ids)>;
absl::Status FillEventPayloads(std::vector<OutboxEvent>& events, TransactionsReader read);

}  // namespace ledger

#endif  // LEDGER_LEDGER_ENGINE_H_
