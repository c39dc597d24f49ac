// The report of a load run: what ran where, every phase's numbers, the side-by-side
// comparisons the targets are judged by, and the verify audit. Printed as a table,
// written as JSON, and appended as markdown rows for bench-all.sh's summary.
//
// Not thread-safe; built after the phases end.
#ifndef LEDGER_BENCH_LOAD_LOAD_REPORT_H_
#define LEDGER_BENCH_LOAD_LOAD_REPORT_H_

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "bench/load/load_phase.h"
#include "bench/load/load_setup.h"
#include "ledger/verify.h"
#include "nlohmann/json.hpp"

namespace ledger::load {

// The targets of issue 7, each judged within one run.
inline constexpr double kExactlyOnceOverheadMax = 0.15;  // raw / exactly-once - 1
inline constexpr double kDuplicateSpeedupMin = 2.0;      // fresh p50 / duplicate p50
inline constexpr double kHotToUniformMin = 0.5;          // hot / uniform submits per second
// Issue 11's stricter targets for batched runs (--batch or --group-commit): a batch
// pays the claim's fixed cost and the hot account's lock once for many operations.
inline constexpr double kBatchedExactlyOnceOverheadMax = 0.10;
inline constexpr double kBatchedHotToUniformMin = 0.8;

struct RunInfo {
  std::string label;     // the engine as tables name it, e.g. "postgres-row"
  std::string database;  // the URL, password removed
  std::string engine;    // Engine::name()
  int clients = 0;
  int accounts = 0;
  std::string bound;     // "10s" or "5000 submits" per phase
  std::string warmup;
  std::string mode;
  Batching batching = Batching::kSingle;
  std::string batching_text;  // "single", "batch 1000", "group commit"
  uint64_t seed = 0;
  std::string started_at;
  unsigned hardware_threads = 0;
  std::string load_average_before;  // /proc/loadavg at start and end: how busy the box was
  std::string load_average_after;
  std::string sqlite_synchronous;
  std::string round_trip_latency;  // --round-trip-latency: "0" when none
};

// One workload's comparisons; a field is unset when its phases did not run.
struct WorkloadComparison {
  std::string workload;
  std::optional<double> raw_submits_per_second;
  std::optional<double> exactly_once_submits_per_second;
  std::optional<double> overhead;  // raw / exactly-once - 1: what exactly-once costs
  std::optional<double> fresh_commit_p50_us;
  std::optional<double> duplicate_p50_us;
  std::optional<double> duplicate_speedup;  // fresh p50 / duplicate p50
};

struct RunReport {
  RunInfo info;
  SetupResult setup;
  std::vector<PhaseResult> phases;
  std::vector<WorkloadComparison> comparisons;
  std::optional<double> hot_to_uniform;  // exactly-once submits per second, hot / uniform
  std::optional<VerifyReport> verify;
  absl::Status verify_status;  // the audit could not run

  // Fills comparisons and hot_to_uniform from the phases.
  void Compare();
  // The targets this run is judged by: issue 11's when batched, issue 7's otherwise.
  double OverheadMax() const;
  double HotToUniformMin() const;
  nlohmann::json ToJson() const;
  void PrintText(std::FILE* out) const;
  absl::Status AppendMarkdownRows(const std::string& path) const;
  absl::Status AppendMarkdownTargets(const std::string& path) const;
};

// The first three fields of /proc/loadavg, or "" where there is none.
std::string LoadAverage();

}  // namespace ledger::load

#endif  // LEDGER_BENCH_LOAD_LOAD_REPORT_H_
