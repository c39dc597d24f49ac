#include "ledger/engine.h"

#include <utility>

#include "base/status.h"

namespace ledger {

absl::StatusOr<std::vector<std::optional<KeyRecord>>> StorageTransaction::ClaimKeys(
    const std::vector<KeyIdentity>& identities) {
  std::vector<std::optional<KeyRecord>> records;
  records.reserve(identities.size());
  for (const KeyIdentity& identity : identities) {
    LEDGER_ASSIGN_OR_RETURN(std::optional<KeyRecord> record, ClaimKey(identity));
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace ledger
