#include "engines/postgres/postgres_write_batch.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "engines/postgres/postgres_rows.h"
#include "base/status.h"

namespace ledger::postgres_internal {
namespace {

std::tuple<std::string, std::string, std::string> KeyOf(const KeyIdentity& identity) {
  return {identity.key_namespace, identity.scope.Encoded(), identity.key};
}

void Append(std::vector<std::string>& to, std::vector<std::string> more) {
  for (std::string& value : more) to.push_back(std::move(value));
}

}  // namespace

absl::Status PostgresWriteBatch::AddTransaction(
    const Transaction& transaction, const std::vector<Account>& updated_accounts,
    const std::map<std::string, int64_t>& locked_versions) {
  std::set<std::string> seen;
  for (const Account& account : updated_accounts) {
    if (!seen.insert(account.id).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("postgres: account ", account.id, " is updated twice in one write"));
    }
  }
  transactions_.push_back(transaction);
  for (const Account& account : updated_accounts) {
    AccountUpdate& update = accounts_[account.id];
    update.balance = account.balance;
    update.version = account.version;
    auto locked = locked_versions.find(account.id);
    if (locked != locked_versions.end()) update.locked_version = locked->second;
  }
  return absl::OkStatus();
}

void PostgresWriteBatch::AddKeyRecord(const KeyRecord& record) {
  IdentityKey key = KeyOf(record.identity);
  placeholders_.erase(key);  // the record fills the placeholder
  keys_[key] = record;
}

void PostgresWriteBatch::AddEvent(const OutboxEvent& event) { events_.push_back(event); }

void PostgresWriteBatch::DropPlaceholder(const KeyIdentity& identity) {
  IdentityKey key = KeyOf(identity);
  if (keys_.count(key) == 0) placeholders_.insert(key);
}

bool PostgresWriteBatch::empty() const {
  return transactions_.empty() && accounts_.empty() && keys_.empty() && events_.empty() &&
         placeholders_.empty();
}

std::vector<std::string> PostgresWriteBatch::Parameters() const {
  std::vector<std::string> parameters;
  Append(parameters, TransactionParameters());
  Append(parameters, EntryParameters());
  Append(parameters, AccountParameters());
  Append(parameters, KeyParameters());
  Append(parameters, EventParameters());
  Append(parameters, PlaceholderParameters());
  return parameters;
}

std::vector<std::string> PostgresWriteBatch::TransactionParameters() const {
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
  return {TextArrayLiteral(ids),
          TextArrayLiteral(kinds),
          IntegerArrayLiteral(created_at),
          TextArrayLiteral(metadata),
          NullableTextArrayLiteral(reversal_of),
          TextArrayLiteral(fingerprints)};
}

std::vector<std::string> PostgresWriteBatch::EntryParameters() const {
  std::vector<std::string> account_ids, transaction_ids, assets;
  std::vector<int64_t> versions, indexes, amounts, balances, created_at;
  for (const Transaction& transaction : transactions_) {
    for (size_t i = 0; i < transaction.entries.size(); ++i) {
      const Entry& entry = transaction.entries[i];
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
  return {TextArrayLiteral(account_ids),     IntegerArrayLiteral(versions),
          TextArrayLiteral(transaction_ids), IntegerArrayLiteral(indexes),
          TextArrayLiteral(assets),          IntegerArrayLiteral(amounts),
          IntegerArrayLiteral(balances),     IntegerArrayLiteral(created_at)};
}

std::vector<std::string> PostgresWriteBatch::AccountParameters() const {
  std::vector<std::string> ids;
  std::vector<int64_t> balances, versions;
  std::vector<std::optional<int64_t>> locked_versions;
  for (const auto& [id, update] : accounts_) {
    ids.push_back(id);
    balances.push_back(update.balance);
    versions.push_back(update.version);
    locked_versions.push_back(update.locked_version);
  }
  return {TextArrayLiteral(ids), IntegerArrayLiteral(balances), IntegerArrayLiteral(versions),
          NullableIntegerArrayLiteral(locked_versions)};
}

std::vector<std::string> PostgresWriteBatch::KeyParameters() const {
  std::vector<std::string> namespaces, scopes, keys, fingerprints, transaction_ids;
  std::vector<int64_t> created_at, expires_at;
  for (const auto& [identity, record] : keys_) {
    namespaces.push_back(std::get<0>(identity));
    scopes.push_back(std::get<1>(identity));
    keys.push_back(std::get<2>(identity));
    fingerprints.push_back(record.fingerprint);
    transaction_ids.push_back(record.transaction_id);
    created_at.push_back(Micros(record.created_at));
    expires_at.push_back(Micros(record.expires_at));
  }
  return {TextArrayLiteral(namespaces),
          TextArrayLiteral(scopes),
          TextArrayLiteral(keys),
          TextArrayLiteral(fingerprints),
          TextArrayLiteral(transaction_ids),
          IntegerArrayLiteral(created_at),
          IntegerArrayLiteral(expires_at)};
}

std::vector<std::string> PostgresWriteBatch::EventParameters() const {
  std::vector<std::string> transaction_ids, types, payloads;
  std::vector<int64_t> created_at;
  for (const OutboxEvent& event : events_) {
    transaction_ids.push_back(event.transaction_id);
    types.push_back(event.type);
    payloads.push_back(event.payload);
    created_at.push_back(Micros(event.created_at));
  }
  return {TextArrayLiteral(transaction_ids), TextArrayLiteral(types), TextArrayLiteral(payloads),
          IntegerArrayLiteral(created_at)};
}

std::vector<std::string> PostgresWriteBatch::PlaceholderParameters() const {
  std::vector<std::string> namespaces, scopes, keys;
  for (const auto& [key_namespace, scope, key] : placeholders_) {
    namespaces.push_back(key_namespace);
    scopes.push_back(scope);
    keys.push_back(key);
  }
  return {TextArrayLiteral(namespaces), TextArrayLiteral(scopes), TextArrayLiteral(keys)};
}

WriteBatchCounts PostgresWriteBatch::Expected() const {
  WriteBatchCounts counts;
  counts.transactions = static_cast<int64_t>(transactions_.size());
  for (const Transaction& transaction : transactions_) {
    counts.entries += static_cast<int64_t>(transaction.entries.size());
  }
  counts.accounts = static_cast<int64_t>(accounts_.size());
  counts.keys = static_cast<int64_t>(keys_.size());
  counts.events = static_cast<int64_t>(events_.size());
  counts.placeholders = static_cast<int64_t>(placeholders_.size());
  return counts;
}

absl::Status PostgresWriteBatch::CheckApplied(const WriteBatchCounts& applied) const {
  const WriteBatchCounts expected = Expected();
  if (applied == expected) return absl::OkStatus();
  if (applied.keys != expected.keys) {
    // The upsert only replaces a placeholder or an expired record. A live record under
    // the identity means another transaction committed the key after this one read it
    // (a claim mode mismatch, or a row-mode key pruned and re-recorded meanwhile). The
    // unique key stopped a second commit; the retry's claim reads it and replays.
    return RetryableError(
        "postgres: the idempotency key was recorded by a concurrent "
        "transaction; retry to replay it");
  }
  return absl::InternalError(
      absl::StrCat("postgres: write batch applied ", applied.transactions, "/",
                   expected.transactions, " transactions, ", applied.entries, "/", expected.entries,
                   " entries, ", applied.accounts, "/", expected.accounts,
                   " accounts (changed under their lock?), ", applied.events, "/", expected.events,
                   " events, ", applied.placeholders, "/", expected.placeholders, " placeholders"));
}

void PostgresWriteBatch::Clear() {
  transactions_.clear();
  accounts_.clear();
  keys_.clear();
  events_.clear();
  placeholders_.clear();
}

}  // namespace ledger::postgres_internal
