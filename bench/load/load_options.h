// Settings of one ledger_load run, as parsed from its command line (ledger_load_main.cc).
// Every field documents its default. Plain values; not thread-safe to mutate while a
// run reads them.
#ifndef LEDGER_BENCH_LOAD_LOAD_OPTIONS_H_
#define LEDGER_BENCH_LOAD_LOAD_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ledger::load {

// What each client submits (workload.h has the exact shapes).
enum class Workload {
  kUniform,   // transfers between two random accounts out of --accounts
  kHot,       // every operation touches the one platform account (top-ups and fees)
  kRetry,     // uniform, but a share of submits resend one of the client's earlier keys
  kConflict,  // clients race on shared keys; one in five races carries another payload
};

// How submits run: through the exactly-once pipeline, or with claim and record skipped
// (LedgerTestingHooks::OpenWithoutIdempotency), the floor that prices exactly-once.
enum class SubmitMode { kExactlyOnce, kRaw };

// --mode: which submit modes each workload runs, back to back on the same data set.
enum class ModeSelection { kExactlyOnce, kRaw, kBoth };

// How clients hand operations to the ledger: one Submit each (its own database
// transaction), SubmitBatch of --batch N, or single Submits through a Ledger opened
// with group commit, so concurrent clients share transactions.
enum class Batching { kSingle, kBatch, kGroupCommit };

std::string_view WorkloadName(Workload workload);
absl::StatusOr<Workload> ParseWorkload(std::string_view name);
std::string_view SubmitModeName(SubmitMode mode);
absl::StatusOr<ModeSelection> ParseModeSelection(std::string_view name);
// The submit modes of a selection, in the order they run: raw first, so the
// exactly-once phase never runs on a warmer cache than its floor did.
std::vector<SubmitMode> ModesOf(ModeSelection selection);

struct LoadOptions {
  std::string database_url;        // --db, required: an OpenEngine URL
  std::string label;               // --label: names the engine in tables; default: URL scheme
  int clients = 1;                 // --clients: concurrent submitting threads
  // --duration or --operations bound every measured phase; default a 10 s duration.
  std::optional<absl::Duration> duration;
  int64_t operations = 0;          // > 0: submits per measured phase, across all clients
  std::vector<Workload> workloads = {Workload::kUniform};  // --workload a,b,...
  int accounts = 10'000;           // --accounts: user accounts in the data set
  ModeSelection mode = ModeSelection::kExactlyOnce;        // --mode
  absl::Duration warmup = absl::Seconds(1);  // --warmup: unmeasured run before each phase
  // --rounds: with more than one phase (--mode both, several workloads) the phases
  // alternate in this many slices, each 1/rounds of the phase, so drift in a shared
  // machine's load hits every phase alike.
  int rounds = 3;
  double retry_fraction = 0.3;     // --retry-fraction: share of resends in the retry workload
  int64_t replay_operations = 2'000;  // --replay-operations: duplicates timed after each
                                      // exactly-once phase; 0 skips the replay phase
  bool reuse = false;              // --reuse: keep accounts already in the database
  bool verify = true;              // --no-verify: end without the audit (profiling the
                                   // submits alone: bench/instructions/)
  bool progress = false;           // --progress: a status line on stderr every interval
  absl::Duration progress_interval = absl::Seconds(2);  // --progress-interval
  std::string json_path;           // --json: the full report as JSON
  std::string markdown_path;       // --markdown: appends one table row per phase
  std::string markdown_targets_path;  // --markdown-targets: appends one row per workload
  std::string sqlite_synchronous;  // --sqlite-synchronous NORMAL|FULL; empty: engine default
  Batching batching = Batching::kSingle;  // --batch N or --group-commit; default single
  size_t batch_items = 0;          // --batch N: operations per SubmitBatch (set with kBatch)
  // --group-commit-max N: GroupCommitOptions::batch_items_max; 0: the ledger's default.
  size_t group_commit_items_max = 0;
  // --group-commit-in-flight N: GroupCommitOptions::transactions_in_flight_max; 0: the
  // ledger's default.
  int group_commit_in_flight = 0;
  bool strict = false;             // --strict: faults or unexpected errors fail the run
  // --allow-unshared: --strict still passes a --batch or --group-commit run whose
  // operations never shared a database transaction (an engine that commits too fast for
  // concurrent submits to overlap, like memory). Default: false, such a run fails.
  bool allow_unshared = false;
  // --count-round-trips: relay the database connections through a counting relay
  // (round_trip_relay.h) and report round trips per operation. Adds a hop to each round
  // trip: a counting run is not a timing run.
  bool count_round_trips = false;
  // --round-trip-latency: the relay also holds each round trip this long (a database on
  // another host); implies count_round_trips. Zero: no delay.
  absl::Duration round_trip_latency = absl::ZeroDuration();
  uint64_t seed = 0;               // --seed: 0 picks one from the clock
};

// The measured bound of a phase in words: "10s" or "5000 submits".
std::string PhaseBoundText(const LoadOptions& options);
// "single", "batch 1000", "group commit" or "group commit max 64": names the run's
// batching in every report.
std::string BatchingText(const LoadOptions& options);

}  // namespace ledger::load

#endif  // LEDGER_BENCH_LOAD_LOAD_OPTIONS_H_
