#include "engines/postgres/postgres_write_batch.h"

#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/check.h"
#include "base/status.h"
#include "engines/common/hold_writes.h"
#include "engines/common/transaction_page.h"
#include "engines/postgres/postgres_binary_arrays.h"
#include "engines/postgres/postgres_rows.h"
#include "engines/postgres/postgres_statements.h"

namespace ledger::postgres_internal {
namespace {

std::tuple<std::string, std::string, std::string> KeyOf(const KeyIdentity& identity) {
  return {identity.key_namespace, identity.scope.Encoded(), identity.key};
}

// The arrays of one part's parameters, written row by row straight from the batch (no
// vector of copies per column), each of the element type the statement casts it to;
// columns[i] is the i-th parameter given. Inline: a part has at most kColumnsMax.
class ParameterWriters {
  static constexpr size_t kColumnsMax = 9;

 public:
  ParameterWriters(std::initializer_list<WriteParameter> parameters)
      : parameters_(parameters) {
    LEDGER_CHECK(parameters_.size() <= kColumnsMax) << parameters_.size() << " columns";
    for (WriteParameter parameter : parameters_) {
      writers_.emplace_back(WriteParameterElement(parameter));
    }
  }
  BinaryArrayWriter& operator[](size_t column) { return writers_.at(column); }
  void SetIn(WriteParameters& parameters) && {
    for (size_t column = 0; column < parameters_.size(); ++column) {
      parameters.Set(parameters_[column], std::move(writers_[column]).Finish());
    }
  }

 private:
  absl::InlinedVector<WriteParameter, kColumnsMax> parameters_;
  absl::InlinedVector<BinaryArrayWriter, kColumnsMax> writers_;
};

}  // namespace

absl::Status PostgresWriteBatch::AddTransaction(
    const Transaction& transaction, const std::vector<Account>& updated_accounts,
    const std::map<std::string, LockedAccount>& locked) {
  LEDGER_RETURN_IF_ERROR(engine_common::CheckHoldFields("postgres", transaction));
  if (transaction.hold_id.has_value()) {
    // Checked now, not when the batch is sent: an unknown kind writes nothing.
    LEDGER_RETURN_IF_ERROR(engine_common::SettledStatus("postgres", transaction.kind).status());
  }
  std::set<std::string> seen;
  for (const Account& account : updated_accounts) {
    if (!seen.insert(account.id).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("postgres: account ", account.id, " is updated twice in one write"));
    }
  }
  // Last of the checks: from here on the batch and the running maxima move together.
  LEDGER_ASSIGN_OR_RETURN(std::vector<absl::Time> running_maxima,
                          running_maxima_.Continue(transaction));
  entry_running_maxima_.push_back(std::move(running_maxima));
  transactions_.push_back(transaction);
  // text cannot hold \u0000 (nor can jsonb): metadata naming it indexes nothing, as
  // before 0006 (the rule of 0005's ledger_transaction_metadata_members).
  if (!absl::StrContains(transaction.metadata, "\\u0000")) {
    for (engine_common::MetadataMember& member :
         engine_common::IndexedMetadataMembers(transaction.metadata)) {
      metadata_rows_.push_back({.name = std::move(member.name),
                                .value = std::move(member.value),
                                .created_at = Micros(transaction.created_at),
                                .transaction_id = transaction.id});
    }
  }
  for (const Account& account : updated_accounts) {
    // A later transaction of the batch on the same account carries the earlier one's
    // effects: its values are the account's final ones.
    AccountUpdate& update = accounts_[account.id];
    update.balance = account.balance;
    update.version = account.version;
    update.pending_debits = account.pending_debits;
    update.pending_credits = account.pending_credits;
    auto found = locked.find(account.id);
    if (found != locked.end()) update.locked = found->second;
    update.entries_running_max = running_maxima_.Latest(account.id);
  }
  return absl::OkStatus();
}

void PostgresWriteBatch::AddKeyRecord(const KeyRecord& record, bool claim_found_row) {
  IdentityKey key = KeyOf(record.identity);
  unused_claims_.erase(key);  // the record is stored over the claim's row
  keys_[key] = {.record = record, .replaced = claim_found_row};
}

void PostgresWriteBatch::AddEvent(const OutboxEvent& event) { events_.push_back(event); }

void PostgresWriteBatch::DropUnusedClaim(const KeyIdentity& identity) {
  IdentityKey key = KeyOf(identity);
  if (keys_.count(key) == 0) unused_claims_.insert(key);
}

bool PostgresWriteBatch::empty() const {
  return Parts().empty();
}

bool PostgresWriteBatch::PendingAmountsChanged() const {
  for (const auto& [id, update] : accounts_) {
    if (update.PendingChanged()) return true;
  }
  return false;
}

WriteParts PostgresWriteBatch::Parts() const {
  const WriteBatchCounts expected = Expected();
  WriteParts parts;
  for (int i = 0; i < kCountedWritePartCount; ++i) {
    const auto part = static_cast<WritePart>(i);
    if (expected[part] > 0) parts = parts.With(part);
  }
  if (PendingAmountsChanged()) parts = parts.With(WritePart::kPendingAmounts);
  return parts;
}

WriteShape PostgresWriteBatch::Shape() const {
  WriteShape shape{.parts = Parts()};
  const WriteBatchCounts rows = Expected();
  for (int64_t part_rows : rows.rows) {
    if (part_rows > kInlineRowsMax) return shape;
  }
  shape.inline_rows = rows;
  return shape;
}

const WriteStatement& PostgresWriteBatch::Statement() const { return WriteStatementOf(Shape()); }

std::vector<BinaryArray> PostgresWriteBatch::Parameters() const {
  const WriteParts parts = Parts();
  // Every part's parameters are set, an absent part's as empty arrays, which
  // WriteParameters checks and drops: a part left out of the statement loses no row.
  WriteParameters parameters(parts);
  SetTransactionParameters(parameters);
  SetMetadataParameters(parameters);
  SetEntryParameters(parameters);
  SetAccountParameters(parameters);
  SetKeyParameters(parameters, /*replaced=*/false);
  SetKeyParameters(parameters, /*replaced=*/true);
  SetEventParameters(parameters);
  SetUnusedClaimParameters(parameters);
  SetHoldParameters(parameters);
  SetSettlementParameters(parameters);
  // Columns of other parts, not rows of their own: NULL hold_ids and unchanged pending
  // amounts are what the rows hold without them.
  if (parts.Has(WritePart::kSettledHolds)) SetHoldIdParameters(parameters);
  if (parts.Has(WritePart::kPendingAmounts)) SetPendingAmountParameters(parameters);
  std::vector<BinaryArray> values = std::move(parameters).Take();
  const WriteBatchCounts expected = Expected();
  std::vector<int64_t> counts;
  for (int i = 0; i < kCountedWritePartCount; ++i) {
    const auto part = static_cast<WritePart>(i);
    if (parts.Has(part)) counts.push_back(expected[part]);
  }
  values.push_back(BigintArray(counts));
  return values;
}

void PostgresWriteBatch::SetTransactionParameters(WriteParameters& parameters) const {
  using P = WriteParameter;
  ParameterWriters columns({P::kTransactionIds, P::kTransactionKinds, P::kTransactionCreatedAt,
                            P::kTransactionMetadata, P::kTransactionReversalOf,
                            P::kTransactionFingerprints});
  for (const Transaction& transaction : transactions_) {
    columns[0].AddText(transaction.id);
    columns[1].AddText(OperationKindName(transaction.kind));
    columns[2].AddInteger(Micros(transaction.created_at));
    columns[3].AddText(transaction.metadata);
    columns[4].AddNullableText(transaction.reversal_of);
    columns[5].AddText(transaction.fingerprint);
  }
  std::move(columns).SetIn(parameters);
}

void PostgresWriteBatch::SetMetadataParameters(WriteParameters& parameters) const {
  using P = WriteParameter;
  ParameterWriters columns({P::kMetadataNames, P::kMetadataValues, P::kMetadataCreatedAt,
                            P::kMetadataTransactionIds});
  for (const MetadataRow& row : metadata_rows_) {
    columns[0].AddText(row.name);
    columns[1].AddText(row.value);
    columns[2].AddInteger(row.created_at);
    columns[3].AddText(row.transaction_id);
  }
  std::move(columns).SetIn(parameters);
}

void PostgresWriteBatch::SetEntryParameters(WriteParameters& parameters) const {
  using P = WriteParameter;
  ParameterWriters columns({P::kEntryAccountIds, P::kEntryAccountVersions,
                            P::kEntryTransactionIds, P::kEntryIndexes, P::kEntryAssets,
                            P::kEntryAmounts, P::kEntryBalancesAfter, P::kEntryCreatedAt,
                            P::kEntryRunningMaxima});
  for (size_t t = 0; t < transactions_.size(); ++t) {
    const Transaction& transaction = transactions_[t];
    for (size_t i = 0; i < transaction.entries.size(); ++i) {
      const Entry& entry = transaction.entries[i];
      columns[0].AddText(entry.account_id);
      columns[1].AddInteger(entry.account_version);
      columns[2].AddText(transaction.id);
      columns[3].AddInteger(static_cast<int64_t>(i));
      columns[4].AddText(entry.asset);
      columns[5].AddInteger(entry.amount);
      columns[6].AddInteger(entry.balance_after);
      columns[7].AddInteger(Micros(transaction.created_at));
      columns[8].AddInteger(Micros(entry_running_maxima_[t][i]));
    }
  }
  std::move(columns).SetIn(parameters);
}

void PostgresWriteBatch::SetAccountParameters(WriteParameters& parameters) const {
  using P = WriteParameter;
  ParameterWriters columns({P::kAccountIds, P::kAccountBalances, P::kAccountVersions,
                            P::kAccountLockedVersions, P::kAccountEntriesRunningMax});
  for (const auto& [id, update] : accounts_) {
    columns[0].AddText(id);
    columns[1].AddInteger(update.balance);
    columns[2].AddInteger(update.version);
    columns[3].AddNullableInteger(update.locked.has_value()
                              ? std::optional<int64_t>(update.locked->version)
                              : std::nullopt);
    columns[4].AddNullableInteger(update.entries_running_max.has_value()
                              ? std::optional<int64_t>(Micros(*update.entries_running_max))
                              : std::nullopt);
  }
  std::move(columns).SetIn(parameters);
}

void PostgresWriteBatch::SetKeyParameters(WriteParameters& parameters, bool replaced) const {
  using P = WriteParameter;
  ParameterWriters columns =
      replaced ? ParameterWriters({P::kReplacedKeyNamespaces, P::kReplacedKeyScopes,
                                   P::kReplacedKeys, P::kReplacedKeyFingerprints,
                                   P::kReplacedKeyTransactionIds, P::kReplacedKeyCreatedAt,
                                   P::kReplacedKeyExpiresAt})
               : ParameterWriters({P::kNewKeyNamespaces, P::kNewKeyScopes, P::kNewKeys,
                                   P::kNewKeyFingerprints, P::kNewKeyTransactionIds,
                                   P::kNewKeyCreatedAt, P::kNewKeyExpiresAt});
  for (const auto& [identity, write] : keys_) {
    // A key whose claim found a row (an expired record) is replaced; the others are new.
    if (write.replaced != replaced) continue;
    const KeyRecord& record = write.record;
    columns[0].AddText(std::get<0>(identity));
    columns[1].AddText(std::get<1>(identity));
    columns[2].AddText(std::get<2>(identity));
    columns[3].AddText(record.fingerprint);
    columns[4].AddText(record.transaction_id);
    columns[5].AddInteger(Micros(record.created_at));
    columns[6].AddInteger(Micros(record.expires_at));
  }
  std::move(columns).SetIn(parameters);
}

void PostgresWriteBatch::SetEventParameters(WriteParameters& parameters) const {
  using P = WriteParameter;
  ParameterWriters columns(
      {P::kEventTransactionIds, P::kEventTypes, P::kEventPayloads, P::kEventCreatedAt});
  for (const OutboxEvent& event : events_) {
    columns[0].AddText(event.transaction_id);
    columns[1].AddText(event.type);
    columns[2].AddText(event.payload);
    columns[3].AddInteger(Micros(event.created_at));
  }
  std::move(columns).SetIn(parameters);
}

void PostgresWriteBatch::SetUnusedClaimParameters(WriteParameters& parameters) const {
  using P = WriteParameter;
  ParameterWriters columns(
      {P::kUnusedClaimNamespaces, P::kUnusedClaimScopes, P::kUnusedClaimKeys});
  for (const auto& [key_namespace, scope, key] : unused_claims_) {
    columns[0].AddText(key_namespace);
    columns[1].AddText(scope);
    columns[2].AddText(key);
  }
  std::move(columns).SetIn(parameters);
}

void PostgresWriteBatch::SetHoldParameters(WriteParameters& parameters) const {
  using P = WriteParameter;
  ParameterWriters columns({P::kHoldIds, P::kHoldFromAccounts, P::kHoldToAccounts,
                            P::kHoldAssets, P::kHoldAmounts, P::kHoldExpiresAt,
                            P::kHoldCreatedAt});
  for (const Transaction& transaction : transactions_) {
    if (!transaction.hold.has_value()) continue;
    const HoldTerms& terms = *transaction.hold;
    columns[0].AddText(transaction.id);
    columns[1].AddText(terms.from);
    columns[2].AddText(terms.to);
    columns[3].AddText(terms.asset);
    columns[4].AddInteger(terms.amount);
    columns[5].AddNullableInteger(terms.expires_at.has_value()
                              ? std::optional<int64_t>(Micros(*terms.expires_at))
                              : std::nullopt);
    columns[6].AddInteger(Micros(transaction.created_at));
  }
  std::move(columns).SetIn(parameters);
}

void PostgresWriteBatch::SetSettlementParameters(WriteParameters& parameters) const {
  using P = WriteParameter;
  ParameterWriters columns(
      {P::kSettledHoldIds, P::kSettledHoldStatuses, P::kSettledHoldSettledBy});
  for (const Transaction& transaction : transactions_) {
    if (!transaction.hold_id.has_value()) continue;
    columns[0].AddText(*transaction.hold_id);
    // AddTransaction checked the kind.
    columns[1].AddText(
        HoldStatusName(*engine_common::SettledStatus("postgres", transaction.kind)));
    columns[2].AddText(transaction.id);
  }
  std::move(columns).SetIn(parameters);
}

void PostgresWriteBatch::SetHoldIdParameters(WriteParameters& parameters) const {
  ParameterWriters columns({WriteParameter::kTransactionHoldIds});  // per transaction
  for (const Transaction& transaction : transactions_) {
    columns[0].AddNullableText(transaction.hold_id);
  }
  std::move(columns).SetIn(parameters);
}

void PostgresWriteBatch::SetPendingAmountParameters(WriteParameters& parameters) const {
  ParameterWriters columns(  // per account, as kAccountIds
      {WriteParameter::kAccountPendingDebits, WriteParameter::kAccountPendingCredits});
  for (const auto& [id, update] : accounts_) {
    columns[0].AddInteger(update.pending_debits);
    columns[1].AddInteger(update.pending_credits);
  }
  std::move(columns).SetIn(parameters);
}

WriteBatchCounts PostgresWriteBatch::Expected() const {
  WriteBatchCounts counts;
  counts[WritePart::kTransactions] = static_cast<int64_t>(transactions_.size());
  counts[WritePart::kMetadata] = static_cast<int64_t>(metadata_rows_.size());
  for (const Transaction& transaction : transactions_) {
    counts[WritePart::kEntries] += static_cast<int64_t>(transaction.entries.size());
    if (transaction.hold.has_value()) ++counts[WritePart::kNewHolds];
    if (transaction.hold_id.has_value()) ++counts[WritePart::kSettledHolds];
  }
  counts[WritePart::kAccounts] = static_cast<int64_t>(accounts_.size());
  for (const auto& [identity, write] : keys_) {
    ++counts[write.replaced ? WritePart::kReplacedKeys : WritePart::kNewKeys];
  }
  counts[WritePart::kEvents] = static_cast<int64_t>(events_.size());
  counts[WritePart::kDroppedClaims] = static_cast<int64_t>(unused_claims_.size());
  return counts;
}

absl::Status PostgresWriteBatch::CheckApplied(const WriteBatchCounts& applied) const {
  const WriteBatchCounts expected = Expected();
  if (applied == expected) return absl::OkStatus();
  if (applied[WritePart::kNewKeys] != expected[WritePart::kNewKeys] ||
      applied[WritePart::kReplacedKeys] != expected[WritePart::kReplacedKeys]) {
    // The upsert only replaces an expired record (or a placeholder). A live record under
    // the identity means another transaction committed the key after this one read it
    // (a claim mode mismatch, or a row-mode key pruned and re-recorded meanwhile). The
    // unique key stopped a second commit; the retry's claim reads it and replays.
    return RetryableError(
        "postgres: the idempotency key was recorded by a concurrent "
        "transaction; retry to replay it");
  }
  if (applied[WritePart::kSettledHolds] != expected[WritePart::kSettledHolds]) {
    // Every settlement locks both of the hold's accounts and the hold_id is unique, so
    // this is a race lost all the same (as on the other engines).
    std::vector<std::string> settled;
    for (const Transaction& transaction : transactions_) {
      if (transaction.hold_id.has_value()) settled.push_back(*transaction.hold_id);
    }
    return engine_common::HoldNotPendingError(
        "postgres", absl::StrJoin(settled, settled.size() > 1 ? " or " : ""));
  }
  std::vector<std::string> parts;
  for (int i = 0; i < kCountedWritePartCount; ++i) {
    const auto part = static_cast<WritePart>(i);
    if (applied[part] == 0 && expected[part] == 0) continue;
    parts.push_back(absl::StrCat(applied[part], "/", expected[part], " ", WritePartName(part),
                                 part == WritePart::kAccounts ? " (changed under their lock?)" : ""));
  }
  return absl::InternalError(
      absl::StrCat("postgres: write batch applied ", absl::StrJoin(parts, ", ")));
}

absl::Status PostgresWriteBatch::CheckAppliedText(std::string_view applied) const {
  std::vector<int64_t> counts;
  absl::string_view inner(applied.data(), applied.size());
  bool readable = absl::ConsumePrefix(&inner, "{") && absl::ConsumeSuffix(&inner, "}");
  for (absl::string_view part : absl::StrSplit(inner, ',', absl::SkipEmpty())) {
    int64_t count = 0;
    readable = readable && absl::SimpleAtoi(part, &count);
    counts.push_back(count);
  }
  const WriteParts parts = Parts();
  std::vector<WritePart> counted;  // the statement's counts, in order
  for (int i = 0; i < kCountedWritePartCount; ++i) {
    if (parts.Has(static_cast<WritePart>(i))) counted.push_back(static_cast<WritePart>(i));
  }
  if (!readable || counts.size() != counted.size()) {
    return absl::InternalError(
        absl::StrCat("postgres: the write statement reported a short write as \"", std::string(applied),
                     "\", which is not ", counted.size(), " counts"));
  }
  WriteBatchCounts reported;
  for (size_t i = 0; i < counted.size(); ++i) reported[counted[i]] = counts[i];
  // The server found a difference: were there none, the check below and the server's
  // disagree about the same numbers.
  LEDGER_CHECK(!(reported == Expected())) << "the server reported a short write of " << applied
                                          << ", which is what was expected";
  return CheckApplied(reported);
}

void PostgresWriteBatch::Clear() {
  entry_running_maxima_.clear();
  transactions_.clear();
  metadata_rows_.clear();
  accounts_.clear();
  keys_.clear();
  events_.clear();
  unused_claims_.clear();
}

}  // namespace ledger::postgres_internal
