// Latency samples and their summary. Percentiles are exact (nearest rank over the
// sorted samples): a run keeps every sample, 8 bytes each, so even a million submits
// cost 8 MB. Thread-compatible: one LatencySamples per client thread, merged after.
#ifndef LEDGER_BENCH_LOAD_LATENCY_H_
#define LEDGER_BENCH_LOAD_LATENCY_H_

#include <cstdint>
#include <vector>

#include "nlohmann/json.hpp"

namespace ledger::load {

struct LatencySummary {
  int64_t count = 0;
  double mean_us = 0;
  double p50_us = 0;
  double p95_us = 0;
  double p99_us = 0;
  double max_us = 0;
};

// Sorts `samples_ns` in place and summarizes them; all zero when empty.
LatencySummary SummarizeLatencies(std::vector<int64_t>& samples_ns);

nlohmann::json LatencyToJson(const LatencySummary& summary);

}  // namespace ledger::load

#endif  // LEDGER_BENCH_LOAD_LATENCY_H_
