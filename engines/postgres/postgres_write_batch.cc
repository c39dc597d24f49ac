#include "engines/postgres/postgres_write_batch.h"

#include <utility>

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

const WriteStatement& PostgresWriteBatch::Statement() const { return WriteStatementOf(Parts()); }

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
  std::vector<std::string> ids, kinds, metadata, fingerprints;
  std::vector<std::optional<std::string>> reversal_of;
  std::vector<int64_t> created_at;
  for (const Transaction& transaction : transactions_) {
    ids.push_back(transaction.id);
    kinds.emplace_back(OperationKindName(transaction.kind));
    created_at.push_back(Micros(transaction.created_at));
    metadata.push_back(transaction.metadata);
    reversal_of.push_back(transaction.reversal_of);
    fingerprints.push_back(transaction.fingerprint);
  }
  parameters.Set(WriteParameter::kTransactionIds, TextArray(ids));
  parameters.Set(WriteParameter::kTransactionKinds, TextArray(kinds));
  parameters.Set(WriteParameter::kTransactionCreatedAt, BigintArray(created_at));
  parameters.Set(WriteParameter::kTransactionMetadata, TextArray(metadata));
  parameters.Set(WriteParameter::kTransactionReversalOf, NullableTextArray(reversal_of));
  parameters.Set(WriteParameter::kTransactionFingerprints, TextArray(fingerprints));
}

void PostgresWriteBatch::SetMetadataParameters(WriteParameters& parameters) const {
  std::vector<std::string> names, values, transaction_ids;
  std::vector<int64_t> created_at;
  for (const MetadataRow& row : metadata_rows_) {
    names.push_back(row.name);
    values.push_back(row.value);
    created_at.push_back(row.created_at);
    transaction_ids.push_back(row.transaction_id);
  }
  parameters.Set(WriteParameter::kMetadataNames, TextArray(names));
  parameters.Set(WriteParameter::kMetadataValues, TextArray(values));
  parameters.Set(WriteParameter::kMetadataCreatedAt, BigintArray(created_at));
  parameters.Set(WriteParameter::kMetadataTransactionIds, TextArray(transaction_ids));
}

void PostgresWriteBatch::SetEntryParameters(WriteParameters& parameters) const {
  std::vector<std::string> account_ids, transaction_ids, assets;
  std::vector<int64_t> versions, indexes, amounts, balances, created_at, running_maxima;
  for (size_t t = 0; t < transactions_.size(); ++t) {
    const Transaction& transaction = transactions_[t];
    for (size_t i = 0; i < transaction.entries.size(); ++i) {
      const Entry& entry = transaction.entries[i];
      running_maxima.push_back(Micros(entry_running_maxima_[t][i]));
      account_ids.push_back(entry.account_id);
      versions.push_back(entry.account_version);
      transaction_ids.push_back(transaction.id);
      indexes.push_back(static_cast<int64_t>(i));
      assets.push_back(entry.asset);
      amounts.push_back(entry.amount);
      balances.push_back(entry.balance_after);
      created_at.push_back(Micros(transaction.created_at));
    }
  }
  parameters.Set(WriteParameter::kEntryAccountIds, TextArray(account_ids));
  parameters.Set(WriteParameter::kEntryAccountVersions, BigintArray(versions));
  parameters.Set(WriteParameter::kEntryTransactionIds, TextArray(transaction_ids));
  parameters.Set(WriteParameter::kEntryIndexes, IntegerArray(indexes));
  parameters.Set(WriteParameter::kEntryAssets, TextArray(assets));
  parameters.Set(WriteParameter::kEntryAmounts, BigintArray(amounts));
  parameters.Set(WriteParameter::kEntryBalancesAfter, BigintArray(balances));
  parameters.Set(WriteParameter::kEntryCreatedAt, BigintArray(created_at));
  parameters.Set(WriteParameter::kEntryRunningMaxima, BigintArray(running_maxima));
}

void PostgresWriteBatch::SetAccountParameters(WriteParameters& parameters) const {
  std::vector<std::string> ids;
  std::vector<int64_t> balances, versions;
  std::vector<std::optional<int64_t>> locked_versions, running_maxima;
  for (const auto& [id, update] : accounts_) {
    running_maxima.push_back(update.entries_running_max.has_value()
                                 ? std::optional<int64_t>(Micros(*update.entries_running_max))
                                 : std::nullopt);
    ids.push_back(id);
    balances.push_back(update.balance);
    versions.push_back(update.version);
    locked_versions.push_back(update.locked.has_value()
                                  ? std::optional<int64_t>(update.locked->version)
                                  : std::nullopt);
  }
  parameters.Set(WriteParameter::kAccountIds, TextArray(ids));
  parameters.Set(WriteParameter::kAccountBalances, BigintArray(balances));
  parameters.Set(WriteParameter::kAccountVersions, BigintArray(versions));
  parameters.Set(WriteParameter::kAccountLockedVersions,
                 NullableBigintArray(locked_versions));
  parameters.Set(WriteParameter::kAccountEntriesRunningMax,
                 NullableBigintArray(running_maxima));
}

void PostgresWriteBatch::SetKeyParameters(WriteParameters& parameters, bool replaced) const {
  std::vector<std::string> namespaces, scopes, keys, fingerprints, transaction_ids;
  std::vector<int64_t> created_at, expires_at;
  for (const auto& [identity, write] : keys_) {
    // A key whose claim found a row (an expired record) is replaced; the others are new.
    if (write.replaced != replaced) continue;
    const KeyRecord& record = write.record;
    namespaces.push_back(std::get<0>(identity));
    scopes.push_back(std::get<1>(identity));
    keys.push_back(std::get<2>(identity));
    fingerprints.push_back(record.fingerprint);
    transaction_ids.push_back(record.transaction_id);
    created_at.push_back(Micros(record.created_at));
    expires_at.push_back(Micros(record.expires_at));
  }
  using P = WriteParameter;
  parameters.Set(replaced ? P::kReplacedKeyNamespaces : P::kNewKeyNamespaces,
                 TextArray(namespaces));
  parameters.Set(replaced ? P::kReplacedKeyScopes : P::kNewKeyScopes, TextArray(scopes));
  parameters.Set(replaced ? P::kReplacedKeys : P::kNewKeys, TextArray(keys));
  parameters.Set(replaced ? P::kReplacedKeyFingerprints : P::kNewKeyFingerprints,
                 TextArray(fingerprints));
  parameters.Set(replaced ? P::kReplacedKeyTransactionIds : P::kNewKeyTransactionIds,
                 TextArray(transaction_ids));
  parameters.Set(replaced ? P::kReplacedKeyCreatedAt : P::kNewKeyCreatedAt,
                 BigintArray(created_at));
  parameters.Set(replaced ? P::kReplacedKeyExpiresAt : P::kNewKeyExpiresAt,
                 BigintArray(expires_at));
}

void PostgresWriteBatch::SetEventParameters(WriteParameters& parameters) const {
  std::vector<std::string> transaction_ids, types, payloads;
  std::vector<int64_t> created_at;
  for (const OutboxEvent& event : events_) {
    transaction_ids.push_back(event.transaction_id);
    types.push_back(event.type);
    payloads.push_back(event.payload);
    created_at.push_back(Micros(event.created_at));
  }
  parameters.Set(WriteParameter::kEventTransactionIds, TextArray(transaction_ids));
  parameters.Set(WriteParameter::kEventTypes, TextArray(types));
  parameters.Set(WriteParameter::kEventPayloads, TextArray(payloads));
  parameters.Set(WriteParameter::kEventCreatedAt, BigintArray(created_at));
}

void PostgresWriteBatch::SetUnusedClaimParameters(WriteParameters& parameters) const {
  std::vector<std::string> namespaces, scopes, keys;
  for (const auto& [key_namespace, scope, key] : unused_claims_) {
    namespaces.push_back(key_namespace);
    scopes.push_back(scope);
    keys.push_back(key);
  }
  parameters.Set(WriteParameter::kUnusedClaimNamespaces, TextArray(namespaces));
  parameters.Set(WriteParameter::kUnusedClaimScopes, TextArray(scopes));
  parameters.Set(WriteParameter::kUnusedClaimKeys, TextArray(keys));
}

void PostgresWriteBatch::SetHoldParameters(WriteParameters& parameters) const {
  std::vector<std::string> ids, from, to, assets;
  std::vector<int64_t> amounts, created_at;
  std::vector<std::optional<int64_t>> expires_at;
  for (const Transaction& transaction : transactions_) {
    if (!transaction.hold.has_value()) continue;
    const HoldTerms& terms = *transaction.hold;
    ids.push_back(transaction.id);
    from.push_back(terms.from);
    to.push_back(terms.to);
    assets.push_back(terms.asset);
    amounts.push_back(terms.amount);
    expires_at.push_back(terms.expires_at.has_value()
                             ? std::optional<int64_t>(Micros(*terms.expires_at))
                             : std::nullopt);
    created_at.push_back(Micros(transaction.created_at));
  }
  parameters.Set(WriteParameter::kHoldIds, TextArray(ids));
  parameters.Set(WriteParameter::kHoldFromAccounts, TextArray(from));
  parameters.Set(WriteParameter::kHoldToAccounts, TextArray(to));
  parameters.Set(WriteParameter::kHoldAssets, TextArray(assets));
  parameters.Set(WriteParameter::kHoldAmounts, BigintArray(amounts));
  parameters.Set(WriteParameter::kHoldExpiresAt, NullableBigintArray(expires_at));
  parameters.Set(WriteParameter::kHoldCreatedAt, BigintArray(created_at));
}

void PostgresWriteBatch::SetSettlementParameters(WriteParameters& parameters) const {
  std::vector<std::string> settled, statuses, settled_by;
  for (const Transaction& transaction : transactions_) {
    if (!transaction.hold_id.has_value()) continue;
    // AddTransaction checked the kind.
    settled.push_back(*transaction.hold_id);
    statuses.emplace_back(
        HoldStatusName(*engine_common::SettledStatus("postgres", transaction.kind)));
    settled_by.push_back(transaction.id);
  }
  parameters.Set(WriteParameter::kSettledHoldIds, TextArray(settled));
  parameters.Set(WriteParameter::kSettledHoldStatuses, TextArray(statuses));
  parameters.Set(WriteParameter::kSettledHoldSettledBy, TextArray(settled_by));
}

void PostgresWriteBatch::SetHoldIdParameters(WriteParameters& parameters) const {
  std::vector<std::optional<std::string>> hold_ids;  // per transaction, as kTransactionIds
  for (const Transaction& transaction : transactions_) hold_ids.push_back(transaction.hold_id);
  parameters.Set(WriteParameter::kTransactionHoldIds, NullableTextArray(hold_ids));
}

void PostgresWriteBatch::SetPendingAmountParameters(WriteParameters& parameters) const {
  std::vector<int64_t> pending_debits, pending_credits;  // per account, as kAccountIds
  for (const auto& [id, update] : accounts_) {
    pending_debits.push_back(update.pending_debits);
    pending_credits.push_back(update.pending_credits);
  }
  parameters.Set(WriteParameter::kAccountPendingDebits, BigintArray(pending_debits));
  parameters.Set(WriteParameter::kAccountPendingCredits, BigintArray(pending_credits));
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
