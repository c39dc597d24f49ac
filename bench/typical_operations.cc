#include "bench/typical_operations.h"

#include <vector>

namespace ledger::bench {

Operation TypicalTransfer() {
  return Operation::Transfer("wallet-000123", "wallet-004567", kBenchAsset, 2500);
}

Operation TypicalSpend() {
  Operation op = Operation::Spend("wallet-000123", "merchant-0042", kBenchAsset, 4999,
                                  Fee{"platform-fees", 250});
  op.metadata = {{"order_id", "A-2026-000451"},
                 {"channel", "web"},
                 {"items", 3},
                 {"note", "gift card \u00e9t\u00e9 edition"}};
  return op;
}

Operation EightLegPost() {
  std::vector<Posting> postings;
  for (int leg = 0; leg < 7; ++leg) {
    postings.push_back({"creator-00" + std::to_string(leg), kBenchAsset, 1000 + leg});
  }
  postings.push_back({"settlement-pool", kBenchAsset, -(7 * 1000 + 21)});
  return Operation::Post(std::move(postings));
}

std::string TypicalSpendJsonText() { return OperationPayload(TypicalSpend()).dump(); }

}  // namespace ledger::bench
