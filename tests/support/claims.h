// What a test tells StorageTransaction::ClaimKey when it only holds a key (or claims it
// to record by hand): a record-to-be with a fresh transaction id, created now and live
// for an hour. An engine whose claim writes a row writes this one, invisible to others
// until COMMIT and removed at COMMIT unless RecordKey stored a record.
//
//   ASSERT_TRUE((*holder)->ClaimKey(ClaimOf(identity)).ok());
//
// Header-only. Thread-safe: no state.
#ifndef LEDGER_TESTS_SUPPORT_CLAIMS_H_
#define LEDGER_TESTS_SUPPORT_CLAIMS_H_

#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "idempotency/key.h"
#include "ledger/transaction.h"

namespace ledger {

inline KeyRecord ClaimOf(const KeyIdentity& identity, absl::Time now = absl::Now()) {
  return KeyRecord{.identity = identity,
                   .fingerprint = "c1a1",
                   .transaction_id = NewTransactionId(now),
                   .created_at = now,
                   .expires_at = now + absl::Hours(1)};
}

inline std::vector<KeyRecord> ClaimsOf(const std::vector<KeyIdentity>& identities,
                                       absl::Time now = absl::Now()) {
  std::vector<KeyRecord> records;
  for (const KeyIdentity& identity : identities) records.push_back(ClaimOf(identity, now));
  return records;
}

}  // namespace ledger

#endif  // LEDGER_TESTS_SUPPORT_CLAIMS_H_
