// A full audit of a ledger's database, engine-agnostic (it reads through Engine):
// - every transaction balances per asset, and its entries' assets match the accounts';
// - every account's balance equals the sum of its entries, the balance_after of its
//   last entry, and its version equals its entry count with versions 1..N in order;
// - no account is below its floor (zero, or minus its overdraft limit);
// - every committed key points at an existing transaction carrying the key's fingerprint;
// - a transaction is reversed at most once (the schema's unique constraint, re-checked);
// - holds: each account's stored pending debits and credits equal the sums of its holds
//   recorded pending; a hold, a void and an expire post nothing, a capture posts at most
//   the held amount from its from account to its to account; every settled hold names
//   its settlement, which names it back with the matching kind, so no hold is settled
//   twice (captured and voided, say), and a pending hold names none.
// Streams in pages, so memory stays bounded by the number of assets and keys per page.
#ifndef LEDGER_LEDGER_VERIFY_H_
#define LEDGER_LEDGER_VERIFY_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ledger/engine.h"
#include "nlohmann/json.hpp"

namespace ledger {

inline constexpr size_t kVerifyViolationsMax = 100;  // the report keeps the first ones

struct VerifyReport {
  int64_t accounts = 0;
  int64_t transactions = 0;
  int64_t entries = 0;
  int64_t key_records = 0;
  int64_t holds = 0;
  std::map<std::string, Amount> balance_totals;  // per asset: sum of all balances
  int64_t violation_count = 0;
  std::vector<std::string> violations;  // the first kVerifyViolationsMax, in words

  bool ok() const { return violation_count == 0; }
  std::string ToText() const;
  nlohmann::json ToJson() const;
};

// An error status means the audit could not run (e.g. the database is unreachable);
// what it found is in the report.
absl::StatusOr<VerifyReport> VerifyLedger(Engine& engine);

}  // namespace ledger

#endif  // LEDGER_LEDGER_VERIFY_H_
