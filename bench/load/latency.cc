#include "bench/load/latency.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ledger::load {
namespace {

constexpr double kNanosecondsPerMicrosecond = 1'000.0;

// Nearest rank: the smallest sample with at least `fraction` of all samples at or below.
double PercentileUs(const std::vector<int64_t>& sorted_ns, double fraction) {
  size_t rank = static_cast<size_t>(std::ceil(fraction * static_cast<double>(sorted_ns.size())));
  size_t index = std::clamp<size_t>(rank, 1, sorted_ns.size()) - 1;
  return static_cast<double>(sorted_ns[index]) / kNanosecondsPerMicrosecond;
}

}  // namespace

LatencySummary SummarizeLatencies(std::vector<int64_t>& samples_ns) {
  LatencySummary summary;
  if (samples_ns.empty()) return summary;
  std::sort(samples_ns.begin(), samples_ns.end());
  double total_ns = std::accumulate(samples_ns.begin(), samples_ns.end(), 0.0);
  summary.count = static_cast<int64_t>(samples_ns.size());
  summary.mean_us = total_ns / static_cast<double>(samples_ns.size()) / kNanosecondsPerMicrosecond;
  summary.p50_us = PercentileUs(samples_ns, 0.50);
  summary.p95_us = PercentileUs(samples_ns, 0.95);
  summary.p99_us = PercentileUs(samples_ns, 0.99);
  summary.max_us = static_cast<double>(samples_ns.back()) / kNanosecondsPerMicrosecond;
  return summary;
}

nlohmann::json LatencyToJson(const LatencySummary& summary) {
  return {{"count", summary.count},   {"mean_us", summary.mean_us}, {"p50_us", summary.p50_us},
          {"p95_us", summary.p95_us}, {"p99_us", summary.p99_us},   {"max_us", summary.max_us}};
}

}  // namespace ledger::load
