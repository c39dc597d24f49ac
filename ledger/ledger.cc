#include "ledger/ledger.h"

#include <algorithm>
#include <limits>
#include <variant>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/check.h"
#include "base/status.h"
#include "idempotency/fingerprint.h"
#include "ledger/batch_attempt.h"
#include "ledger/group_commit.h"
#include "ledger/read_only_engine.h"
#include "ledger/unit_of_work_internal.h"

namespace ledger {
namespace {

constexpr int64_t kPruneBatch = 1000;
// A close refused for a balance that reads zero right after is tried again this often.
constexpr int kCloseAccountRoundsMax = 3;

absl::Status ValidateVelocityLimit(const VelocityLimit& limit, size_t index) {
  std::string field = absl::StrCat("LedgerOptions.velocity_limits[", index, "]");
  if (limit.window <= absl::ZeroDuration() || limit.window == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".window must be positive and finite, not ",
                     absl::FormatDuration(limit.window)));
  }
  if (limit.debit_count_max < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ".debit_count_max must not be negative, not ", limit.debit_count_max));
  }
  if (limit.debit_amount_max < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ".debit_amount_max must not be negative, not ", limit.debit_amount_max));
  }
  if (limit.debit_count_max == 0 && limit.debit_amount_max == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, " sets neither debit_count_max nor debit_amount_max: it would limit nothing"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateLedgerOptions(const LedgerOptions& options) {
  if (options.attempts_max < 1 || options.attempts_max > kAttemptsMaxLimit) {
    return absl::InvalidArgumentError(absl::StrCat("LedgerOptions.attempts_max must be 1 to ",
                                                   kAttemptsMaxLimit, ", not ",
                                                   options.attempts_max));
  }
  if (options.group_commit.batch_items_max < 1 ||
      options.group_commit.batch_items_max > kBatchItemsMax) {
    return absl::InvalidArgumentError(
        absl::StrCat("LedgerOptions.group_commit.batch_items_max must be 1 to ", kBatchItemsMax,
                     ", not ", options.group_commit.batch_items_max));
  }
  if (options.group_commit.transactions_in_flight_max < 1 ||
      options.group_commit.transactions_in_flight_max > kGroupCommitTransactionsInFlightLimit) {
    return absl::InvalidArgumentError(absl::StrCat(
        "LedgerOptions.group_commit.transactions_in_flight_max must be 1 to ",
        kGroupCommitTransactionsInFlightLimit, ", not ",
        options.group_commit.transactions_in_flight_max));
  }
  for (size_t index = 0; index < options.velocity_limits.size(); ++index) {
    LEDGER_RETURN_IF_ERROR(ValidateVelocityLimit(options.velocity_limits[index], index));
  }
  return absl::OkStatus();
}

KeyIdentity KeyIdentityOf(const SubmitRequest& request) {
  return KeyIdentity{request.key_namespace.empty() ? std::string(kDefaultKeyNamespace)
                                                   : request.key_namespace,
                     request.scope, request.key};
}

std::string TransactionCursorText(const Transaction& transaction) {
  return absl::StrCat(absl::ToUnixMicros(transaction.created_at), "_", transaction.id);
}

absl::StatusOr<TransactionCursor> ParseTransactionCursor(std::string_view text) {
  const size_t separator = text.find('_');
  int64_t micros = 0;
  if (separator == std::string_view::npos || separator + 1 == text.size() ||
      !absl::SimpleAtoi(View(text.substr(0, separator)), &micros)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cursor \"", View(text), "\" is not one a transaction listing gave (next_cursor)"));
  }
  return TransactionCursor{absl::FromUnixMicros(micros), std::string(text.substr(separator + 1))};
}

absl::Status ValidateTransactionQuery(const TransactionQuery& query) {
  const TransactionFilter& filter = query.filter;
  if (query.limit < 1 || query.limit > kTransactionPageLimitMax) {
    return absl::InvalidArgumentError(absl::StrCat("limit must be 1 to ", kTransactionPageLimitMax,
                                                   ", not ", query.limit));
  }
  if (!filter.account_id.empty()) LEDGER_RETURN_IF_ERROR(ValidateAccountId(filter.account_id));
  if (filter.created_from.has_value() && filter.created_before.has_value() &&
      *filter.created_from >= *filter.created_before) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the time range is empty: from ", FormatTimestamp(*filter.created_from),
        " is not before ", FormatTimestamp(*filter.created_before)));
  }
  if (filter.metadata_key.has_value()) {
    if (filter.metadata_key->empty() || filter.metadata_key->size() > kMetadataFilterNameBytesMax) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a metadata filter names a member of 1 to ", kMetadataFilterNameBytesMax,
          " bytes, not ", filter.metadata_key->size()));
    }
    if (filter.metadata_value.size() > kMetadataFilterValueBytesMax) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a metadata filter's value has at most ", kMetadataFilterValueBytesMax,
          " bytes (longer values are not indexed), not ", filter.metadata_value.size()));
    }
  } else if (!filter.metadata_value.empty()) {
    return absl::InvalidArgumentError("a metadata value needs the member name it belongs to");
  }
  if (!query.cursor.empty()) LEDGER_RETURN_IF_ERROR(ParseTransactionCursor(query.cursor).status());
  return absl::OkStatus();
}

absl::StatusOr<Ledger> Ledger::Open(std::shared_ptr<Engine> engine, LedgerOptions options) {
  if (engine == nullptr) return absl::InvalidArgumentError("Ledger::Open needs an engine, not null");
  LEDGER_RETURN_IF_ERROR(ValidateLedgerOptions(options));
  if (options.read_engine == engine) {
    return absl::InvalidArgumentError(
        "LedgerOptions.read_engine must not be the primary engine itself (leave it null to read "
        "from the primary)");
  }
  return Ledger(std::move(engine), std::move(options));
}

Ledger::Ledger(std::shared_ptr<Engine> engine, LedgerOptions options)
    : engine_(std::move(engine)),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : SystemClock::Default()) {
  if (options_.read_engine != nullptr) {
    read_engine_ = std::make_shared<internal::ReadOnlyEngine>(std::move(options_.read_engine));
    options_.read_engine = nullptr;  // held only behind the wrapper
  }
  if (options_.group_commit.enabled) {
    group_committer_ = std::make_unique<internal::GroupCommitter>(
        options_.group_commit.batch_items_max, options_.group_commit.transactions_in_flight_max);
  }
}

Ledger::Ledger(Ledger&&) = default;
Ledger& Ledger::operator=(Ledger&&) = default;
Ledger::~Ledger() = default;

namespace {

// Checks everything about one request that needs no database. An invalid item is
// decided at once: its result is the error.
void PrepareItem(const SubmitRequest& request, size_t index, internal::BatchItem& item) {
  item.index = index;
  item.request = &request;
  absl::Status valid = ValidateKey(request.key);
  if (valid.ok()) valid = ValidateScope(request.scope);
  if (valid.ok()) valid = ValidateClaimOptions(request.claim);
  if (valid.ok()) valid = ValidateOperation(request.operation);
  if (valid.ok() && !request.key_namespace.empty()) valid = ValidateNamespace(request.key_namespace);
  if (!valid.ok()) {
    item.result = valid;
    return;
  }
  absl::StatusOr<std::string> fingerprint = Fingerprint(OperationPayload(request.operation));
  if (!fingerprint.ok()) {
    item.result = fingerprint.status();
    return;
  }
  item.fingerprint = *std::move(fingerprint);
  item.identity = KeyIdentityOf(request);
  item.encoded_identity = item.identity.Encoded();
  item.entries_bound = internal::PlanFor(request.operation.kind).EntriesBound(request.operation);
}

// The entries a batch may post, counted before the database is read.
size_t EntriesBound(const std::vector<internal::BatchItem>& items) {
  size_t entries = 0;
  for (const internal::BatchItem& item : items) entries += internal::EntriesBoundOf(item);
  return entries;
}

}  // namespace

absl::StatusOr<Outcome> Ledger::Submit(const SubmitRequest& request) {
  internal::BatchItem item;
  PrepareItem(request, 0, item);
  if (!item.result.has_value()) {
    if (group_committer_ != nullptr) {
      group_committer_->Submit(
          item, [this](const std::vector<internal::BatchItem*>& batch) { RunBatch(batch, false); });
    } else {
      RunBatch({&item}, /*atomic=*/false);
    }
  }
  return *std::move(item.result);
}

namespace {

// One SubmitAsync: what it owns until its `done` is called.
struct AsyncSubmit {
  SubmitRequest request;
  internal::BatchItem item;
  std::function<void(SubmitResult)> done;
};

}  // namespace

void Ledger::SubmitAsync(SubmitRequest request, std::function<void(SubmitResult)> done) {
  LEDGER_CHECK(done != nullptr) << "SubmitAsync needs a done callback";
  auto submit = std::make_shared<AsyncSubmit>();
  submit->request = std::move(request);
  submit->done = std::move(done);
  PrepareItem(submit->request, 0, submit->item);
  if (!submit->item.result.has_value() && group_committer_ != nullptr) {
    group_committer_->SubmitAsync(
        submit->item,
        [this](const std::vector<internal::BatchItem*>& batch) { RunBatch(batch, false); },
        [submit] { submit->done(*std::move(submit->item.result)); });
    return;
  }
  if (!submit->item.result.has_value()) RunBatch({&submit->item}, /*atomic=*/false);
  submit->done(*std::move(submit->item.result));
}

absl::StatusOr<std::vector<SubmitResult>> Ledger::SubmitBatch(const SubmitBatchRequest& batch) {
  return RunSubmitBatch(batch, nullptr);
}

namespace {

// Prepares every item of `batch` into `items` (one per request, in order) and returns
// pointers to them, or InvalidArgument when the batch is refused as a whole (too many
// items or entries, or none), nothing run. `items` must not move afterwards.
absl::StatusOr<std::vector<internal::BatchItem*>> PrepareBatch(const SubmitBatchRequest& batch,
                                                               std::vector<internal::BatchItem>& items) {
  if (batch.items.empty() || batch.items.size() > kBatchItemsMax) {
    return absl::InvalidArgumentError(absl::StrCat("a batch holds 1 to ", kBatchItemsMax,
                                                   " items, not ", batch.items.size()));
  }
  items.resize(batch.items.size());
  for (size_t i = 0; i < items.size(); ++i) PrepareItem(batch.items[i], i, items[i]);
  if (size_t entries = EntriesBound(items); entries > kBatchEntriesMax) {
    return absl::InvalidArgumentError(
        absl::StrCat("a batch may post at most ", kBatchEntriesMax, " entries, not ", entries,
                     " (a reverse counts as ", kPostingsPerTransactionMax, ")"));
  }
  std::vector<internal::BatchItem*> pointers;
  pointers.reserve(items.size());
  for (internal::BatchItem& item : items) pointers.push_back(&item);
  return pointers;
}

// Whether RunBatch on prepared `items` reads the database: some item is still open,
// and the batch is not an atomic one with an item decided (bad) already, which fails
// the rest without a transaction.
bool BatchNeedsDatabase(const std::vector<internal::BatchItem>& items, bool atomic) {
  bool open = false;
  bool decided = false;
  for (const internal::BatchItem& item : items) (item.result.has_value() ? decided : open) = true;
  return open && !(atomic && decided);
}

std::vector<SubmitResult> ResultsOf(std::vector<internal::BatchItem>& items) {
  std::vector<SubmitResult> results;
  results.reserve(items.size());
  for (internal::BatchItem& item : items) {
    LEDGER_CHECK(item.result.has_value()) << "a batch left item " << item.index << " undecided";
    results.push_back(*std::move(item.result));
  }
  return results;
}

// One SubmitBatchAsync: what it owns until its `done` is called.
struct AsyncBatchSubmit {
  SubmitBatchRequest batch;
  std::vector<internal::BatchItem> items;  // prepared from `batch`, never moved after
  Ledger::SubmitBatchDone done;
};

}  // namespace

absl::StatusOr<std::vector<SubmitResult>> Ledger::RunSubmitBatch(const SubmitBatchRequest& batch,
                                                                 internal::UnitOfWorkState* unit) {
  std::vector<internal::BatchItem> items;
  LEDGER_ASSIGN_OR_RETURN(std::vector<internal::BatchItem*> pointers, PrepareBatch(batch, items));
  RunBatch(pointers, batch.atomic, unit);
  return ResultsOf(items);
}

void Ledger::SubmitBatchAsync(SubmitBatchRequest batch, SubmitBatchDone done) {
  LEDGER_CHECK(done != nullptr) << "SubmitBatchAsync needs a done callback";
  auto submit = std::make_shared<AsyncBatchSubmit>();
  submit->batch = std::move(batch);
  submit->done = std::move(done);
  absl::StatusOr<std::vector<internal::BatchItem*>> pointers = PrepareBatch(submit->batch, submit->items);
  if (!pointers.ok()) return submit->done(pointers.status());
  const bool atomic = submit->batch.atomic;
  if (group_committer_ != nullptr && BatchNeedsDatabase(submit->items, atomic)) {
    // The same RunBatch SubmitBatch runs, as one transaction of its own.
    group_committer_->SubmitBatchAsync(
        *std::move(pointers),
        [this, atomic](const std::vector<internal::BatchItem*>& items) { RunBatch(items, atomic); },
        [submit] { submit->done(ResultsOf(submit->items)); });
    return;
  }
  RunBatch(*pointers, atomic);
  submit->done(ResultsOf(submit->items));
}

namespace {

// The first item decided as not committed. Called only when some item failed.
const internal::BatchItem* FirstFailedItem(const std::vector<internal::BatchItem*>& items) {
  for (const internal::BatchItem* item : items) {
    if (item->result.has_value() && !(item->result->ok() && (*item->result)->ok())) return item;
  }
  LEDGER_CHECK(false) << "an atomic batch has open items but none failed";
  return nullptr;
}

}  // namespace

absl::Status Ledger::RunInOwnTransaction(BatchAttempt& attempt, bool use_remembered_rows) {
  BeginOptions options = attempt.begin_options();
  options.use_remembered_rows = use_remembered_rows;
  LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<StorageTransaction> tx, engine_->Begin(options));
  absl::Status status = attempt.Run(*tx);
  if (!status.ok()) {
    tx->Rollback();
    return status;
  }
  if (!attempt.writes()) return tx->EndWithoutWrites();  // the engine confirms what it read
  return tx->Commit();
}

void Ledger::RunBatch(const std::vector<internal::BatchItem*>& items, bool atomic,
                      internal::UnitOfWorkState* unit) {
  int faults = 0;
  std::optional<absl::Time> claim_deadline;  // set once a claim of many keys ran out of wait
  bool use_remembered_rows = true;  // until an engine's remembered rows turn out stale
  while (true) {
    std::vector<internal::BatchItem*> open;
    for (internal::BatchItem* item : items) {
      if (!item->result.has_value()) open.push_back(item);
    }
    if (open.empty()) return;
    if (atomic && open.size() < items.size()) {  // an item failed: none may commit
      const internal::BatchItem* failed = FirstFailedItem(items);
      for (internal::BatchItem* item : open) item->result = LinkedItemFailed(failed->index);
      return;
    }
    const absl::Time attempt_began = absl::Now();
    BatchAttempt attempt(*this, open, atomic, claim_deadline);
    // In a unit of work the attempt runs on the unit's transaction, which Transact
    // commits or rolls back, never the attempt.
    absl::Status status = unit != nullptr ? attempt.Run(*internal::JoinTransaction(*unit))
                                          : RunInOwnTransaction(attempt, use_remembered_rows);
    if (unit != nullptr && !status.ok()) {  // its transaction failed: Transact rolls back
      for (internal::BatchItem* item : open) item->result = status;
      return;
    }
    if (attempt.busy_key().has_value()) {  // its items are in progress; the others go again
      for (internal::BatchItem* item : open) {
        if (item->identity == *attempt.busy_key()) item->result = status;
      }
      continue;
    }
    if (attempt.claims_timed_out()) {  // some key is busy: claim one by one to name it
      if (!claim_deadline.has_value()) {
        claim_deadline = attempt_began + LeastClaimWait(open).wait_max;
      }
      continue;
    }
    if (status.ok() || IsInDoubt(status)) {
      for (size_t i = 0; i < open.size(); ++i) {
        open[i]->result = status.ok() || !attempt.rides_on_commit(i) ? attempt.decision(i)
                                                                     : Outcome::Faulted(status);
      }
      return;
    }
    // Only a rolled-back attempt is safe to rerun. One decided on stale remembered rows
    // wrote nothing and is no fault: it reruns once, reading the rows.
    if (IsStaleRead(status) && std::exchange(use_remembered_rows, false)) continue;
    if (IsRetryable(status) && ++faults < options_.attempts_max) continue;
    for (internal::BatchItem* item : open) item->result = Outcome::Faulted(status);
    return;
  }
}

absl::Status Ledger::DefineAsset(const Asset& asset) {
  LEDGER_RETURN_IF_ERROR(ValidateAsset(asset));
  return engine_->PutAsset(asset);
}

absl::StatusOr<Account> Ledger::OpenAccount(const AccountSpec& spec) {
  LEDGER_RETURN_IF_ERROR(ValidateAccountSpec(spec));
  LEDGER_ASSIGN_OR_RETURN(std::optional<Asset> asset, engine_->GetAsset(spec.asset));
  if (!asset.has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat("asset ", spec.asset, " is not defined; define it first"));
  }
  Account account;
  account.id = spec.id;
  account.asset = spec.asset;
  account.allow_negative = spec.allow_negative;
  account.overdraft_limit = spec.overdraft_limit;
  account.created_at = clock_->Now();
  absl::Status inserted = engine_->InsertAccount(account);
  if (absl::IsAlreadyExists(inserted)) {
    // One message on every engine and door, never the driver's constraint text.
    return absl::AlreadyExistsError(absl::StrCat("account ", spec.id, " already exists"));
  }
  LEDGER_RETURN_IF_ERROR(inserted);
  return account;
}

absl::Status Ledger::CloseAccount(std::string_view id) {
  LEDGER_RETURN_IF_ERROR(ValidateAccountId(id));
  // The engine decides under the account's lock; the read after a refusal only explains
  // it. If money left the account in between, the close is tried again.
  for (int round = 0; round < kCloseAccountRoundsMax; ++round) {
    LEDGER_ASSIGN_OR_RETURN(bool closed, engine_->CloseAccountIfZeroBalance(id));
    if (closed) return absl::OkStatus();
    LEDGER_ASSIGN_OR_RETURN(std::optional<Account> stored, engine_->GetAccount(id));
    if (!stored.has_value()) {
      return absl::NotFoundError(absl::StrCat("account ", View(id), " does not exist"));
    }
    if (stored->balance != 0) {
      return absl::FailedPreconditionError(absl::StrCat("account ", stored->id, " has balance ",
                                                        stored->balance,
                                                        "; move it out before closing"));
    }
    LEDGER_ASSIGN_OR_RETURN(Account now, AsOfNow(*engine_, *stored, clock_->Now()));
    if (now.pending_debits != 0 || now.pending_credits != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "account ", stored->id, " has pending holds (debits ", now.pending_debits,
          ", credits ", now.pending_credits, "); capture or void them before closing"));
    }
    // Only lapsed holds are left: record their expiry, then the close can go through.
    if (stored->pending_debits != 0 || stored->pending_credits != 0) {
      LEDGER_RETURN_IF_ERROR(ExpireHolds().status());
    }
  }
  return absl::AbortedError(absl::StrCat("account ", View(id), " kept changing while closing; retry"));
}

Engine& Ledger::ReadEngine(ReadConsistency consistency) {
  if (consistency == ReadConsistency::kReplicaAllowed && read_engine_ != nullptr) {
    return *read_engine_;
  }
  LEDGER_CHECK(consistency == ReadConsistency::kPrimary ||
               consistency == ReadConsistency::kReplicaAllowed)
      << "unknown ReadConsistency " << static_cast<int>(consistency);
  return *engine_;
}

absl::StatusOr<Account> Ledger::GetAccount(std::string_view id, ReadConsistency consistency) {
  LEDGER_RETURN_IF_ERROR(ValidateAccountId(id));
  Engine& engine = ReadEngine(consistency);
  LEDGER_ASSIGN_OR_RETURN(std::optional<Account> account, engine.GetAccount(id));
  if (!account.has_value()) {
    return absl::NotFoundError(absl::StrCat("account ", View(id), " does not exist"));
  }
  return AsOfNow(engine, *std::move(account), clock_->Now());
}

absl::StatusOr<std::vector<Asset>> Ledger::ListAssets(ReadConsistency consistency) {
  return ReadEngine(consistency).ListAssets();
}

absl::StatusOr<Asset> Ledger::GetAsset(std::string_view code, ReadConsistency consistency) {
  LEDGER_ASSIGN_OR_RETURN(std::optional<Asset> asset, ReadEngine(consistency).GetAsset(code));
  if (!asset.has_value()) {
    return absl::NotFoundError(absl::StrCat("asset ", View(code), " is not defined"));
  }
  return *std::move(asset);
}

absl::StatusOr<std::vector<HistoryEntry>> Ledger::ListHistory(std::string_view account_id,
                                                              int64_t after_version,
                                                              int64_t limit,
                                                              ReadConsistency consistency) {
  LEDGER_ASSIGN_OR_RETURN(std::vector<HistoryEntry> lines,
                          ReadEngine(consistency).ListEntries(account_id, after_version, limit));
  std::vector<std::string> ids;
  for (const HistoryEntry& line : lines) {
    if (ids.empty() || ids.back() != line.transaction_id) ids.push_back(line.transaction_id);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  LEDGER_ASSIGN_OR_RETURN(std::vector<Transaction> transactions, ReadEngine(consistency).GetTransactions(ids));
  std::map<std::string, const Transaction*> by_id;
  for (const Transaction& transaction : transactions) by_id[transaction.id] = &transaction;
  for (HistoryEntry& line : lines) {
    auto found = by_id.find(line.transaction_id);
    if (found == by_id.end()) {  // the database lost a row: an operating error, not a bug
      return absl::DataLossError(absl::StrCat("entry ", line.entry.account_version, " of account ",
                                              View(account_id), " names transaction ",
                                              line.transaction_id, ", which does not exist"));
    }
    const Transaction& transaction = *found->second;
    line.kind = transaction.kind;
    line.metadata = transaction.metadata;
    for (const Entry& entry : transaction.entries) {
      if (entry.account_id == line.entry.account_id) continue;
      if (std::find(line.counterparties.begin(), line.counterparties.end(), entry.account_id) ==
          line.counterparties.end()) {
        line.counterparties.push_back(entry.account_id);
      }
    }
  }
  return lines;
}

absl::StatusOr<std::vector<OutboxEvent>> Ledger::ListEvents(int64_t after_sequence, int64_t limit,
                                                            ReadConsistency consistency) {
  return ReadEngine(consistency).ListEvents(after_sequence, limit);
}

absl::StatusOr<Amount> Ledger::BalanceAsOf(std::string_view account_id, absl::Time as_of,
                                           ReadConsistency consistency) {
  LEDGER_ASSIGN_OR_RETURN(std::optional<HistoryEntry> entry, ReadEngine(consistency).EntryAsOf(account_id, as_of));
  if (!entry.has_value()) return Amount{0};
  LEDGER_CHECK(entry->entry.account_id == account_id && entry->created_at <= as_of)
      << "EntryAsOf(" << account_id << ", " << FormatTimestamp(as_of) << ") returned an entry of "
      << entry->entry.account_id << " created at " << FormatTimestamp(entry->created_at);
  return entry->entry.balance_after;
}

absl::StatusOr<TransactionPage> Ledger::ListTransactions(const TransactionQuery& query,
                                                       ReadConsistency consistency) {
  LEDGER_RETURN_IF_ERROR(ValidateTransactionQuery(query));
  std::optional<TransactionCursor> after;
  if (!query.cursor.empty()) {
    LEDGER_ASSIGN_OR_RETURN(after, ParseTransactionCursor(query.cursor));
  }
  if (!query.filter.account_id.empty()) {
    LEDGER_ASSIGN_OR_RETURN(std::optional<Account> account,
                            ReadEngine(consistency).GetAccount(query.filter.account_id));
    if (!account.has_value()) {
      return absl::NotFoundError(
          absl::StrCat("account ", query.filter.account_id, " does not exist"));
    }
  }
  TransactionPage page;
  LEDGER_ASSIGN_OR_RETURN(page.transactions,
                          ReadEngine(consistency).FindTransactions(query.filter, after, query.limit));
  LEDGER_CHECK(static_cast<int64_t>(page.transactions.size()) <= query.limit)
      << "FindTransactions returned " << page.transactions.size() << " for a limit of "
      << query.limit;
  if (static_cast<int64_t>(page.transactions.size()) == query.limit) {
    page.next_cursor = TransactionCursorText(page.transactions.back());
  }
  return page;
}

absl::StatusOr<KeyLookup> Ledger::LookUpKey(const KeyIdentity& identity,
                                           ReadConsistency consistency) {
  LEDGER_RETURN_IF_ERROR(ValidateKey(identity.key));
  LEDGER_RETURN_IF_ERROR(ValidateScope(identity.scope));
  LEDGER_RETURN_IF_ERROR(ValidateNamespace(identity.key_namespace));
  LEDGER_ASSIGN_OR_RETURN(std::optional<KeyRecord> record, ReadEngine(consistency).GetKeyRecord(identity));
  if (!record.has_value() || record->ExpiredAt(clock_->Now())) {
    return absl::NotFoundError(absl::StrCat("key ", identity.key, " in namespace ",
                                            identity.key_namespace,
                                            " has committed nothing within its TTL"));
  }
  LEDGER_ASSIGN_OR_RETURN(std::optional<Transaction> transaction,
                          ReadEngine(consistency).GetTransaction(record->transaction_id));
  if (!transaction.has_value()) {
    return absl::DataLossError(absl::StrCat("key ", identity.key, " names transaction ",
                                            record->transaction_id, ", which does not exist"));
  }
  return KeyLookup{*std::move(record), *std::move(transaction)};
}

absl::StatusOr<VerifyReport> Ledger::Verify() { return VerifyLedger(*engine_); }

std::string_view Ledger::engine_name() const { return engine_->name(); }

absl::StatusOr<std::vector<Account>> Ledger::ListAccounts(std::string_view after_id, int64_t limit,
                                                          ReadConsistency consistency) {
  Engine& engine = ReadEngine(consistency);
  LEDGER_ASSIGN_OR_RETURN(std::vector<Account> accounts, engine.ListAccounts(after_id, limit));
  absl::Time now = clock_->Now();
  for (Account& account : accounts) {
    LEDGER_ASSIGN_OR_RETURN(account, AsOfNow(engine, std::move(account), now));
  }
  return accounts;
}

absl::StatusOr<Account> Ledger::AsOfNow(Engine& engine, Account account, absl::Time now) {
  if (account.pending_debits == 0 && account.pending_credits == 0) return account;
  LEDGER_ASSIGN_OR_RETURN(PendingHoldTotals totals, engine.HoldTotals(account.id, now, now));
  account.pending_debits -= totals.lapsed_debits;
  account.pending_credits -= totals.lapsed_credits;
  return account;
}

absl::StatusOr<Hold> Ledger::GetHold(std::string_view id, ReadConsistency consistency) {
  LEDGER_ASSIGN_OR_RETURN(std::optional<Hold> hold, ReadEngine(consistency).GetHold(id));
  if (!hold.has_value()) return absl::NotFoundError(absl::StrCat("hold ", View(id), " does not exist"));
  if (hold->LapsedAt(clock_->Now())) hold->status = HoldStatus::kExpired;
  return *std::move(hold);
}

absl::StatusOr<std::vector<Hold>> Ledger::ListHolds(std::string_view account_id,
                                                    std::string_view after_id, int64_t limit,
                                                    std::optional<HoldStatus> status,
                                                    ReadConsistency consistency) {
  if (!account_id.empty()) LEDGER_RETURN_IF_ERROR(GetAccount(account_id, consistency).status());
  std::vector<Hold> matching;
  std::string after(after_id);
  const absl::Time now = clock_->Now();
  while (static_cast<int64_t>(matching.size()) < limit) {
    const int64_t wanted = limit - static_cast<int64_t>(matching.size());
    LEDGER_ASSIGN_OR_RETURN(std::vector<Hold> holds, ReadEngine(consistency).ListHolds(account_id, after, wanted));
    for (Hold& hold : holds) {
      if (hold.LapsedAt(now)) hold.status = HoldStatus::kExpired;
      if (!status.has_value() || hold.status == *status) matching.push_back(std::move(hold));
    }
    if (static_cast<int64_t>(holds.size()) < wanted) break;  // no more holds
    after = holds.back().id;
  }
  return matching;
}

absl::StatusOr<Transaction> Ledger::GetTransaction(std::string_view id,
                                                   ReadConsistency consistency) {
  LEDGER_ASSIGN_OR_RETURN(std::optional<Transaction> transaction,
                          ReadEngine(consistency).GetTransaction(id));
  if (!transaction.has_value()) {
    return absl::NotFoundError(absl::StrCat("transaction ", View(id), " does not exist"));
  }
  return *std::move(transaction);
}

absl::StatusOr<int64_t> Ledger::PruneExpiredKeys() {
  absl::Time now = clock_->Now();
  int64_t total = 0;
  while (true) {
    LEDGER_ASSIGN_OR_RETURN(int64_t deleted, engine_->PruneExpiredKeys(now, kPruneBatch));
    total += deleted;
    if (deleted < kPruneBatch) return total;
  }
}

}  // namespace ledger
