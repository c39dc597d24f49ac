// One measured phase of a load run: N client threads share one Ledger and submit from
// their own RequestSource until the phase's bound (a duration, a submit count, or the
// source running dry), timing every call with steady_clock. With batch_items, each call
// is a SubmitBatch of that many operations, and each operation's latency is its call's.
//
//   PhaseResult result = RunPhase(ledger, spec, [&](int client) { return MakeSource(client); });
//
// Thread-safe to call from one thread at a time; the Ledger must be thread-safe.
#ifndef LEDGER_BENCH_LOAD_LOAD_PHASE_H_
#define LEDGER_BENCH_LOAD_LOAD_PHASE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "bench/load/latency.h"
#include "bench/load/workload.h"
#include "ledger/ledger.h"
#include "nlohmann/json.hpp"

namespace ledger::load {

// What the submits of a phase returned, by kind. conflict, in_progress and error are
// statuses rather than outcomes; error is anything else (bad input, engine failure).
struct OutcomeCounts {
  int64_t committed = 0;
  int64_t duplicate = 0;
  int64_t rejected = 0;
  int64_t faulted = 0;
  int64_t conflict = 0;
  int64_t in_progress = 0;
  int64_t error = 0;
  int64_t resends = 0;        // submits that deliberately reused an earlier key
  std::string first_problem;  // the first fault or error, in words

  void Add(const OutcomeCounts& other);
  int64_t Total() const;
  nlohmann::json ToJson() const;
};

struct PhaseSpec {
  Workload workload = Workload::kUniform;
  std::string mode;  // "exactly-once", "raw" or "replay": a label for reports
  int clients = 1;
  // Bounds; with neither, the phase runs until every source is dry.
  std::optional<absl::Duration> duration;
  int64_t operations = 0;  // > 0: submits across all clients
  bool progress = false;
  absl::Duration progress_interval = absl::Seconds(2);
  // Committed requests each client keeps for a later replay phase.
  size_t committed_kept_per_client = 0;
  // > 0: each call is a SubmitBatch of this many operations (fewer at the bound);
  // 0: each call is one Submit.
  size_t batch_items = 0;
};

// Everything a phase (or several slices of one) measured, before summarizing.
struct PhaseSamples {
  std::vector<int64_t> all_ns;
  std::vector<int64_t> committed_ns;
  std::vector<int64_t> duplicate_ns;
  OutcomeCounts counts;
  int64_t calls = 0;  // Submit or SubmitBatch calls: batches in batch mode
  // Begun while the phase ran (the caller's count; RunPhaseSamples leaves it 0).
  int64_t database_transactions = 0;
  int64_t round_trips = 0;  // with --count-round-trips (the caller's count), else 0
  double elapsed_seconds = 0;
  std::vector<SubmitRequest> committed_requests;  // up to committed_kept_per_client each

  // Adds another slice's samples and time to these.
  void Append(PhaseSamples&& other);
};

struct PhaseResult {
  std::string workload;
  std::string mode;
  int clients = 0;
  double elapsed_seconds = 0;
  int64_t submits = 0;              // operations, however many calls carried them
  double submits_per_second = 0;
  double commits_per_second = 0;
  int64_t calls = 0;
  double calls_per_second = 0;      // batches per second in batch mode
  int64_t database_transactions = 0;
  double submits_per_transaction = 0;  // 0 when no transaction was counted
  int64_t round_trips = 0;             // with --count-round-trips, else 0
  double round_trips_per_submit = 0;   // 0 when none was counted
  LatencySummary latency_all;
  LatencySummary latency_committed;
  LatencySummary latency_duplicate;
  OutcomeCounts counts;
  std::vector<SubmitRequest> committed_requests;  // replay material; not reported

  nlohmann::json ToJson() const;
};

using SourceFactory = std::function<std::unique_ptr<RequestSource>(int client_index)>;

PhaseSamples RunPhaseSamples(Ledger& ledger, const PhaseSpec& spec,
                             const SourceFactory& make_source);
PhaseResult Summarize(const PhaseSpec& spec, PhaseSamples samples);

// Summarize(spec, RunPhaseSamples(...)).
PhaseResult RunPhase(Ledger& ledger, const PhaseSpec& spec, const SourceFactory& make_source);

}  // namespace ledger::load

#endif  // LEDGER_BENCH_LOAD_LOAD_PHASE_H_
