// Prepares the load data set (workload.h): the asset, the platform and issuance
// accounts, --accounts user accounts, and funding for every user below half of
// kUserFunding. Opening runs on several threads (one autocommit insert each, so a
// server engine's group commit can batch their fsyncs); funding posts 63 users per
// transaction, because every funding transaction locks the issuance account.
//
// Not thread-safe: call once, before the phases.
#ifndef LEDGER_BENCH_LOAD_LOAD_SETUP_H_
#define LEDGER_BENCH_LOAD_LOAD_SETUP_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "ledger/ledger.h"
#include "nlohmann/json.hpp"

namespace ledger::load {

struct SetupOptions {
  int accounts = 10'000;
  bool reuse = false;        // accounts already there are kept; otherwise they are an error
  int threads = 8;           // concurrent account inserts
  std::string key_prefix;    // for the funding submits' keys
};

struct SetupResult {
  int64_t accounts_opened = 0;
  int64_t accounts_reused = 0;
  int64_t accounts_funded = 0;
  double seconds = 0;

  nlohmann::json ToJson() const;
};

absl::StatusOr<SetupResult> PrepareDataSet(Ledger& ledger, const SetupOptions& options);

}  // namespace ledger::load

#endif  // LEDGER_BENCH_LOAD_LOAD_SETUP_H_
