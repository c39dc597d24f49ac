// Hold and settlement transactions written straight through the storage contract
// (StorageTransaction), each locking its accounts first as the pipeline does: for the
// conformance suite's storage cases (tests/conformance/holds_storage_suite.cc) and the
// engine tests that then break the rows through SQL.
#ifndef LEDGER_TESTS_SUPPORT_HOLD_WRITES_H_
#define LEDGER_TESTS_SUPPORT_HOLD_WRITES_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "ledger/engine.h"
#include "ledger/hold.h"
#include "ledger/transaction.h"

namespace ledger::testing {

// A hold transaction placing `terms`, fingerprint "fingerprint-<id>".
Transaction HoldTransaction(const std::string& id, HoldTerms terms, absl::Time created_at);

// A capture, void or expire of `hold_id` (an expire has no fingerprint, as the sweep's).
Transaction Settlement(const std::string& id, OperationKind kind, const std::string& hold_id,
                       absl::Time created_at);

// Locks `sorted_ids`, lets `change` update the locked accounts and writes `transaction`;
// the first failure, of the write or of the commit.
absl::Status WriteThroughStorage(Engine& engine, const Transaction& transaction,
                                 const std::vector<std::string>& sorted_ids,
                                 const std::function<void(std::vector<Account>&)>& change);

// Places a hold: its amount pending on both sides.
absl::Status PlaceHold(Engine& engine, const Transaction& hold);

// Settles a hold of `terms`: releases it on both sides, and a capture posts `captured`
// of it (one entry per side).
absl::Status SettleHold(Engine& engine, const Transaction& settlement, const HoldTerms& terms,
                        Amount captured = 0);

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_SUPPORT_HOLD_WRITES_H_
