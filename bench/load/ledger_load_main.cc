// ledger_load: drives a ledger database with N concurrent clients and reports
// throughput, latency percentiles and outcome counts per phase, the cost of
// exactly-once against the raw floor, duplicate-replay latency against fresh commits,
// and a verify audit at the end.
//
//   ledger_load --db postgresql://postgres@127.0.0.1:5432/bench --clients 8
//               --duration 10s --workload uniform,hot --mode both --json out.json --progress
//   ledger_load --db ... --batch 1000      each client calls SubmitBatch with 1,000 operations
//   ledger_load --db ... --group-commit    single submits, concurrent ones share transactions
//
// An unmeasured warmup of each workload and mode, then the measured phases; with more
// than one (--mode both, or several workloads) they alternate in --rounds slices that
// add up to one phase each (uniform raw, uniform exactly-once, hot raw, ..., again).
// After each workload's exactly-once phase a replay phase resends up to
// --replay-operations of its committed keys: the duplicate path alone, in batches too
// with --batch. Every phase counts the database transactions it began (CountingEngine).
// Exit status: 0 when every phase ran and verify is OK or skipped (--no-verify) (and,
// with --strict, no submit faulted or failed unexpectedly, and a --batch or
// --group-commit run shared some database transaction unless --allow-unshared); 1
// otherwise; 2 for bad flags.
#include <algorithm>
#include <map>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "bench/load/counting_engine.h"
#include "bench/load/load_options.h"
#include "bench/load/load_phase.h"
#include "bench/load/load_report.h"
#include "bench/load/load_setup.h"
#include "bench/load/round_trip_relay.h"
#include "bench/load/workload.h"
#include "engines/common/database_url.h"
#include "engines/open_engine.h"
#include "base/status.h"
#include "ledger/internal/testing_hooks.h"
#include "ledger/ledger.h"
#include "ledger/transaction.h"
#include "ledger/verify.h"
#if LEDGER_WITH_SQLITE
#include "engines/sqlite/sqlite_engine.h"
#endif

namespace ledger::load {
namespace {

constexpr int kExitFailure = 1;
constexpr int kSetupThreadsMin = 8;
constexpr int kSetupThreadsMax = 16;
constexpr int kPoolSpareConnections = 2;  // beyond the clients: verify and replay reads
// Phases at least this long show progress unless --no-progress says otherwise.
constexpr absl::Duration kAutomaticProgressFrom = absl::Seconds(30);

// The texts CLI11 fills in, turned into LoadOptions by Resolve.
struct FlagTexts {
  std::string duration;
  std::string warmup = "1s";
  std::string progress_interval = "2s";
  std::string round_trip_latency;
  std::string mode = "exactly-once";
  std::vector<std::string> workloads = {"uniform"};
  bool progress_given = false;  // --progress or --no-progress appeared
  bool group_commit = false;
};

absl::StatusOr<absl::Duration> ParseDurationFlag(const std::string& text, const char* flag) {
  absl::Duration duration;
  if (absl::ParseDuration(text, &duration) && duration >= absl::ZeroDuration()) return duration;
  double seconds = 0;
  if (absl::SimpleAtod(text, &seconds) && seconds >= 0) return absl::Seconds(seconds);
  return absl::InvalidArgumentError(
      absl::StrCat(flag, ": \"", text, "\" is not a duration (e.g. 10s, 500ms, 2m)"));
}

absl::Status Resolve(const FlagTexts& texts, LoadOptions& options) {
  if (!texts.duration.empty()) {
    LEDGER_ASSIGN_OR_RETURN(options.duration, ParseDurationFlag(texts.duration, "--duration"));
  } else if (options.operations <= 0) {
    options.duration = absl::Seconds(10);
  }
  LEDGER_ASSIGN_OR_RETURN(options.warmup, ParseDurationFlag(texts.warmup, "--warmup"));
  LEDGER_ASSIGN_OR_RETURN(options.progress_interval,
                          ParseDurationFlag(texts.progress_interval, "--progress-interval"));
  if (options.progress_interval <= absl::ZeroDuration()) options.progress_interval = absl::Seconds(1);
  if (!texts.round_trip_latency.empty()) {
    LEDGER_ASSIGN_OR_RETURN(options.round_trip_latency,
                            ParseDurationFlag(texts.round_trip_latency, "--round-trip-latency"));
    if (options.round_trip_latency > absl::ZeroDuration()) options.count_round_trips = true;
  }
  LEDGER_ASSIGN_OR_RETURN(options.mode, ParseModeSelection(texts.mode));
  options.workloads.clear();
  for (const std::string& name : texts.workloads) {
    LEDGER_ASSIGN_OR_RETURN(Workload workload, ParseWorkload(name));
    options.workloads.push_back(workload);
  }
  if (!texts.progress_given && options.duration.has_value()) {
    options.progress = *options.duration >= kAutomaticProgressFrom;
  }
  if (options.seed == 0) options.seed = std::random_device{}() | 1;
  if (options.batch_items > 0) options.batching = Batching::kBatch;
  if (texts.group_commit) options.batching = Batching::kGroupCommit;
  return absl::OkStatus();
}

void DeclareFlags(CLI::App& app, LoadOptions& options, FlagTexts& texts) {
  app.add_option("--db", options.database_url,
                 "engine URL: memory:, sqlite:PATH, postgresql://...[?claim=row], mysql://...")
      ->required();
  app.add_option("--label", options.label, "engine name in tables (default: from --db)");
  app.add_option("--clients", options.clients, "concurrent clients")->check(CLI::Range(1, 1024));
  CLI::Option* duration =
      app.add_option("--duration", texts.duration, "length of each measured phase (default 10s)");
  CLI::Option* operations = app.add_option("--operations", options.operations,
                                           "submits per measured phase instead of a duration")
                                ->check(CLI::PositiveNumber);
  duration->excludes(operations);
  app.add_option("--workload", texts.workloads, "uniform, hot, retry, conflict (comma-separated)")
      ->delimiter(',')
      ->check(CLI::IsMember({"uniform", "hot", "retry", "conflict"}));
  app.add_option("--accounts", options.accounts, "user accounts")->check(CLI::Range(2, 10'000'000));
  app.add_option("--mode", texts.mode, "exactly-once, raw or both")
      ->check(CLI::IsMember({"exactly-once", "raw", "both"}));
  app.add_option("--warmup", texts.warmup, "unmeasured run before each phase (0s: none)");
  app.add_option("--retry-fraction", options.retry_fraction, "share of resends (retry workload)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--replay-operations", options.replay_operations,
                 "committed keys resent after each exactly-once phase (0: no replay phase)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--rounds", options.rounds,
                 "with more than one phase (--mode both, several workloads): they alternate "
                 "in this many slices each")
      ->check(CLI::Range(1, 100));
  app.add_flag("--reuse", options.reuse, "keep bench accounts already in the database");
  app.add_flag("--verify,!--no-verify", options.verify,
               "audit the ledger after the phases (default); --no-verify ends without it, "
               "for profiling the submits alone (the exit status then vouches for nothing "
               "the audit would find)");
  app.add_flag("--progress,!--no-progress", options.progress,
               "status lines on stderr while a phase runs (default: on for phases of 30s or more)")
      ->each([&texts](const std::string&) { texts.progress_given = true; });
  app.add_option("--progress-interval", texts.progress_interval, "between status lines");
  app.add_option("--json", options.json_path, "write the report as JSON here");
  app.add_option("--markdown", options.markdown_path, "append one table row per phase here");
  app.add_option("--markdown-targets", options.markdown_targets_path,
                 "append the target comparisons here, one row per workload");
  app.add_option("--sqlite-synchronous", options.sqlite_synchronous,
                 "sqlite: PRAGMA synchronous (FULL, the engine default, fsyncs each commit; NORMAL does not)")
      ->check(CLI::IsMember({"NORMAL", "FULL"}));
  CLI::Option* batch =
      app.add_option("--batch", options.batch_items,
                     "each client submits SubmitBatch calls of N operations (default: single)")
          ->check(CLI::Range(size_t{1}, kBatchItemsMax));
  CLI::Option* group_commit = app.add_flag(
      "--group-commit", texts.group_commit,
      "single submits through a ledger with group commit (the library's default): concurrent "
      "ones share transactions. Without it every submit is its own transaction");
  batch->excludes(group_commit);
  app.add_option("--group-commit-max", options.group_commit_items_max,
                 "with --group-commit: most submits per shared transaction (default: the ledger's)")
      ->check(CLI::Range(size_t{1}, kBatchItemsMax))
      ->needs(group_commit);
  app.add_option("--group-commit-in-flight", options.group_commit_in_flight,
                 "with --group-commit: most shared transactions running at once (default: the "
                 "ledger's)")
      ->check(CLI::Range(1, kGroupCommitTransactionsInFlightLimit))
      ->needs(group_commit);
  CLI::Option* strict =
      app.add_flag("--strict", options.strict, "fail the run on any fault or unexpected error");
  app.add_flag("--count-round-trips", options.count_round_trips,
               "count round trips on the wire through a loopback relay and report them per "
               "operation (adds a hop: not for timing)");
  app.add_option("--round-trip-latency", texts.round_trip_latency,
                 "through the same relay, hold each round trip this long (e.g. 500us): a "
                 "database on another host. Implies --count-round-trips");
  app.add_flag("--allow-unshared", options.allow_unshared,
               "with --strict: pass a --batch or --group-commit run even if no operations "
               "shared a database transaction")
      ->needs(strict);
  app.add_option("--seed", options.seed, "random seed (default: random)");
}

std::string DefaultLabel(const std::string& url) {
  if (absl::StartsWith(url, "postgres")) {
    return absl::StrContains(url, "claim=row") ? "postgres-row" : "postgres-advisory";
  }
  size_t colon = url.find(':');
  return colon == std::string::npos ? url : url.substr(0, colon);
}

absl::StatusOr<std::shared_ptr<Engine>> OpenLoadEngine(const LoadOptions& options, int pool_size) {
  if (!options.sqlite_synchronous.empty()) {
#if LEDGER_WITH_SQLITE
    if (!absl::StartsWith(options.database_url, "sqlite:")) {
      return absl::InvalidArgumentError("--sqlite-synchronous needs a sqlite: URL");
    }
    std::string path = options.database_url.substr(
        absl::StartsWith(options.database_url, "sqlite://") ? 9 : 7);
    LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine,
                            OpenSqliteEngine({.path = path,
                                              .synchronous = options.sqlite_synchronous,
                                              .pool_size = pool_size}));
    return std::shared_ptr<Engine>(std::move(engine));
#else
    return absl::UnimplementedError("this build has no SQLite engine");
#endif
  }
  LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine,
                          OpenEngine(options.database_url, {.pool_size = pool_size}));
  return std::shared_ptr<Engine>(std::move(engine));
}

// A prefix no earlier run on the same database used, so keys never collide across runs.
std::string RunKeyPrefix(uint64_t seed) {
  return absl::StrFormat("r%x-%x", absl::ToUnixMicros(absl::Now()), seed & 0xffff);
}

PhaseSpec SpecFor(const LoadOptions& options, Workload workload, std::string mode) {
  return PhaseSpec{.workload = workload,
                   .mode = std::move(mode),
                   .clients = options.clients,
                   .duration = options.duration,
                   .operations = options.operations,
                   .progress = options.progress,
                   .progress_interval = options.progress_interval,
                   .batch_items = options.batching == Batching::kBatch ? options.batch_items : 0};
}

class LoadRun {
 public:
  LoadRun(const LoadOptions& options, std::shared_ptr<CountingEngine> engine,
          Ledger exactly_once, Ledger raw, const RoundTripRelay* relay)
      : options_(options),
        engine_(std::move(engine)),
        relay_(relay),
        exactly_once_(std::move(exactly_once)),
        raw_(std::move(raw)),
        key_prefix_(RunKeyPrefix(options.seed)) {}

  absl::Status Setup(RunReport& report) {
    int threads = std::clamp(options_.clients, kSetupThreadsMin, kSetupThreadsMax);
    absl::FPrintF(stderr, "setup: %d accounts on %s ...\n", options_.accounts, report.info.label);
    LEDGER_ASSIGN_OR_RETURN(report.setup, PrepareDataSet(exactly_once_, {.accounts = options_.accounts,
                                                                        .reuse = options_.reuse,
                                                                        .threads = threads,
                                                                        .key_prefix = key_prefix_}));
    absl::FPrintF(stderr, "setup: %d opened, %d reused, %d funded in %.1fs\n",
                  report.setup.accounts_opened, report.setup.accounts_reused,
                  report.setup.accounts_funded, report.setup.seconds);
    return absl::OkStatus();
  }

  // Warms every workload and mode up, then runs the measured slices: with more than one
  // phase they alternate (uniform raw, uniform exactly-once, hot raw, hot exactly-once,
  // then again) so a change in the shared machine's load hits every phase alike, and
  // the ratios between phases (exactly-once cost, hot / uniform) compare like with like.
  void RunWorkloads(RunReport& report) {
    const std::vector<Workload>& workloads = options_.workloads;
    const std::vector<SubmitMode> modes = ModesOf(options_.mode);
    const int rounds = workloads.size() * modes.size() > 1 ? options_.rounds : 1;
    for (Workload workload : workloads) {
      for (SubmitMode mode : modes) Warmup(workload, mode);
    }
    absl::FPrintF(stderr, "%d workload(s) x %d mode(s): %d clients, %s per phase in %d slice(s)\n",
                  workloads.size(), modes.size(), options_.clients, PhaseBoundText(options_),
                  rounds);
    std::map<std::pair<Workload, SubmitMode>, PhaseSamples> samples;
    for (int round = 0; round < rounds; ++round) {
      for (Workload workload : workloads) {
        for (SubmitMode mode : modes) {
          samples[{workload, mode}].Append(
              Measure(LedgerFor(mode), SliceSpec(workload, mode, rounds),
                      Sources(workload, std::string(SubmitModeName(mode)))));
        }
      }
    }
    for (Workload workload : workloads) {
      for (SubmitMode mode : modes) {
        PhaseResult result =
            Summarize(SliceSpec(workload, mode, rounds), std::move(samples[{workload, mode}]));
        std::vector<SubmitRequest> committed = std::move(result.committed_requests);
        report.phases.push_back(std::move(result));
        if (mode == SubmitMode::kExactlyOnce && options_.replay_operations > 0) {
          report.phases.push_back(Replay(workload, std::move(committed)));
        }
      }
    }
  }

  Engine& engine() { return *engine_; }

 private:
  SourceFactory Sources(Workload workload, const std::string& phase_tag) {
    auto shared = std::make_shared<SharedSequence>();
    WorkloadPlan plan{.workload = workload,
                      .key_prefix = absl::StrCat(key_prefix_, "-", View(WorkloadName(workload)), "-",
                                                 phase_tag, "-", ++phase_count_),
                      .accounts = options_.accounts,
                      .retry_fraction = options_.retry_fraction,
                      .seed = options_.seed + static_cast<uint64_t>(phase_count_)};
    return [plan, shared](int client) { return MakeWorkloadSource(plan, client, *shared); };
  }

  Ledger& LedgerFor(SubmitMode mode) { return mode == SubmitMode::kRaw ? raw_ : exactly_once_; }

  // RunPhaseSamples, with the database transactions the phase began. Phases run one at
  // a time, so the engine's count moves only for this one.
  PhaseSamples Measure(Ledger& ledger, const PhaseSpec& spec, const SourceFactory& sources) {
    int64_t before = engine_->transactions_begun();
    int64_t round_trips_before = relay_ != nullptr ? relay_->round_trips() : 0;
    PhaseSamples samples = RunPhaseSamples(ledger, spec, sources);
    samples.database_transactions = engine_->transactions_begun() - before;
    if (relay_ != nullptr) samples.round_trips = relay_->round_trips() - round_trips_before;
    return samples;
  }

  void Warmup(Workload workload, SubmitMode mode) {
    if (options_.warmup <= absl::ZeroDuration()) return;
    std::string mode_name(SubmitModeName(mode));
    PhaseSpec warmup = SpecFor(options_, workload, mode_name + "-warmup");
    warmup.duration = options_.warmup;
    warmup.operations = 0;
    warmup.progress = false;
    RunPhase(LedgerFor(mode), warmup, Sources(workload, "w" + mode_name));
  }

  // One of `rounds` measured slices of a mode: the phase's bound split evenly.
  PhaseSpec SliceSpec(Workload workload, SubmitMode mode, int rounds) {
    PhaseSpec spec = SpecFor(options_, workload, std::string(SubmitModeName(mode)));
    if (spec.duration.has_value()) spec.duration = *spec.duration / rounds;
    if (spec.operations > 0) spec.operations = std::max<int64_t>(1, spec.operations / rounds);
    if (mode == SubmitMode::kExactlyOnce && options_.replay_operations > 0) {
      spec.committed_kept_per_client =
          static_cast<size_t>(options_.replay_operations / options_.clients + 1);
    }
    return spec;
  }

  // Resends committed requests, each once, with the same clients: only the duplicate path.
  PhaseResult Replay(Workload workload, std::vector<SubmitRequest> committed) {
    auto queue = std::make_shared<ReplayQueue>();
    size_t count = std::min(committed.size(), static_cast<size_t>(options_.replay_operations));
    queue->requests.assign(std::make_move_iterator(committed.begin()),
                           std::make_move_iterator(committed.begin() + static_cast<long>(count)));
    PhaseSpec spec = SpecFor(options_, workload, "replay");
    spec.duration.reset();  // until every key is resent once
    spec.operations = 0;
    spec.progress = false;
    absl::FPrintF(stderr, "phase: %s replay of %d committed keys, %d clients\n",
                  WorkloadName(workload), count, options_.clients);
    return Summarize(spec, Measure(exactly_once_, spec,
                                   [queue](int) { return MakeReplaySource(*queue); }));
  }

  const LoadOptions& options_;
  std::shared_ptr<CountingEngine> engine_;
  const RoundTripRelay* relay_;  // with --count-round-trips, else null
  Ledger exactly_once_;
  Ledger raw_;
  const std::string key_prefix_;
  int phase_count_ = 0;
};

RunInfo DescribeRun(const LoadOptions& options, const Engine& engine) {
  return RunInfo{.label = options.label.empty() ? DefaultLabel(options.database_url) : options.label,
                 .database = RedactDatabaseUrl(options.database_url),
                 .engine = std::string(engine.name()),
                 .clients = options.clients,
                 .accounts = options.accounts,
                 .bound = PhaseBoundText(options),
                 .warmup = absl::FormatDuration(options.warmup),
                 .mode = options.mode == ModeSelection::kBoth ? "both"
                         : options.mode == ModeSelection::kRaw ? "raw"
                                                               : "exactly-once",
                 .batching = options.batching,
                 .batching_text = BatchingText(options),
                 .seed = options.seed,
                 .started_at = FormatTimestamp(absl::Now()),
                 .hardware_threads = std::thread::hardware_concurrency(),
                 .load_average_before = LoadAverage(),
                 .sqlite_synchronous = options.sqlite_synchronous,
                 .round_trip_latency = absl::FormatDuration(options.round_trip_latency)};
}

// Outcomes a healthy run never produces for this workload and mode.
std::string UnexpectedOutcomes(const PhaseResult& phase) {
  const OutcomeCounts& c = phase.counts;
  std::string problems;
  if (c.faulted + c.error + c.in_progress + c.rejected > 0) {
    problems = absl::StrCat(c.faulted, " faulted, ", c.error, " errors, ", c.in_progress,
                            " in progress, ", c.rejected, " rejected");
  }
  if (c.conflict > 0 && phase.workload != "conflict") {
    absl::StrAppend(&problems, problems.empty() ? "" : "; ", c.conflict, " conflicts");
  }
  if (phase.mode != "replay" && c.committed == 0) {
    absl::StrAppend(&problems, problems.empty() ? "" : "; ", "nothing committed");
  }
  if (phase.mode == "replay" && c.duplicate != phase.submits) {
    absl::StrAppend(&problems, problems.empty() ? "" : "; ", "a replay was not a duplicate");
  }
  return problems;
}

// Batches and group commit exist to share database transactions: a run where every
// operation still had its own ran single submits, whatever its flags said. Judged over
// the whole run, since one group-commit phase may by chance never overlap; a batch of
// one and a single group-commit client share nothing by design.
std::string UnsharedTransactions(const RunReport& report, const LoadOptions& options) {
  bool sharing_expected = (options.batching == Batching::kBatch && options.batch_items > 1) ||
                          (options.batching == Batching::kGroupCommit && options.clients > 1);
  if (!sharing_expected) return "";
  int64_t submits = 0;
  int64_t transactions = 0;
  for (const PhaseResult& phase : report.phases) {
    submits += phase.submits;
    transactions += phase.database_transactions;
  }
  if (submits < 2 || transactions < submits) return "";
  return absl::StrFormat("%s: %d operations took %d database transactions, none shared",
                         report.info.batching_text, submits, transactions);
}

bool Healthy(const RunReport& report, const LoadOptions& options) {
  bool healthy = !options.verify || (report.verify_status.ok() && report.verify.has_value() &&
                                      report.verify->ok());
  for (const PhaseResult& phase : report.phases) {
    std::string problems = UnexpectedOutcomes(phase);
    if (problems.empty()) continue;
    absl::FPrintF(stderr, "%s %s: %s\n", phase.workload, phase.mode, problems);
    if (options.strict) healthy = false;
  }
  if (std::string unshared = UnsharedTransactions(report, options); !unshared.empty()) {
    absl::FPrintF(stderr, "%s\n", unshared);
    if (options.strict && !options.allow_unshared) healthy = false;
  }
  return healthy;
}

absl::Status WriteOutputs(const LoadOptions& options, const RunReport& report) {
  if (!options.json_path.empty()) {
    std::FILE* file = std::fopen(options.json_path.c_str(), "w");
    if (file == nullptr) return absl::UnavailableError(absl::StrCat("cannot write ", options.json_path));
    absl::FPrintF(file, "%s\n", report.ToJson().dump(2));
    if (std::fclose(file) != 0) return absl::DataLossError(absl::StrCat("writing ", options.json_path));
  }
  if (!options.markdown_path.empty()) {
    LEDGER_RETURN_IF_ERROR(report.AppendMarkdownRows(options.markdown_path));
  }
  if (!options.markdown_targets_path.empty()) {
    LEDGER_RETURN_IF_ERROR(report.AppendMarkdownTargets(options.markdown_targets_path));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> Run(const LoadOptions& given) {
  int pool_size = std::max(given.clients, kSetupThreadsMax) + kPoolSpareConnections;
  LoadOptions options = given;
  std::unique_ptr<RoundTripRelay> relay;
  if (options.count_round_trips) {
    LEDGER_ASSIGN_OR_RETURN(RelayedUrl target, UrlTarget(options.database_url));
    LEDGER_ASSIGN_OR_RETURN(relay, RoundTripRelay::Start(target.host, target.port,
                                                         options.round_trip_latency));
    LEDGER_ASSIGN_OR_RETURN(RelayedUrl relayed, RelayUrl(options.database_url, relay->port()));
    options.database_url = relayed.url;
    if (options.label.empty()) options.label = DefaultLabel(given.database_url);
  }
  LEDGER_ASSIGN_OR_RETURN(std::shared_ptr<Engine> opened, OpenLoadEngine(options, pool_size));
  auto engine = std::make_shared<CountingEngine>(std::move(opened));
  RunReport report{.info = DescribeRun(given, *engine)};
  LedgerOptions ledger_options;
  // Group commit is the library's default: single submits and batches turn it off, so
  // "single" stays every submit its own transaction.
  ledger_options.group_commit.enabled = options.batching == Batching::kGroupCommit;
  if (options.batching == Batching::kGroupCommit) {
    if (options.group_commit_items_max > 0) {
      ledger_options.group_commit.batch_items_max = options.group_commit_items_max;
    }
    if (options.group_commit_in_flight > 0) {
      ledger_options.group_commit.transactions_in_flight_max = options.group_commit_in_flight;
    }
  }
  LEDGER_ASSIGN_OR_RETURN(Ledger exactly_once, Ledger::Open(engine, ledger_options));
  LEDGER_ASSIGN_OR_RETURN(Ledger raw, internal::LedgerTestingHooks::OpenWithoutIdempotency(
                                          engine, ledger_options));
  LoadRun run(options, engine, std::move(exactly_once), std::move(raw), relay.get());
  LEDGER_RETURN_IF_ERROR(run.Setup(report));
  run.RunWorkloads(report);
  report.info.load_average_after = LoadAverage();
  if (options.verify) {
    absl::FPrintF(stderr, "verify ...\n");
    absl::StatusOr<VerifyReport> verify = VerifyLedger(run.engine());
    if (verify.ok()) {
      report.verify = *std::move(verify);
    } else {
      report.verify_status = verify.status();
    }
  } else {
    absl::FPrintF(stderr, "verify: not run (--no-verify)\n");
  }
  report.Compare();
  report.PrintText(stdout);
  LEDGER_RETURN_IF_ERROR(WriteOutputs(options, report));
  return Healthy(report, options);
}

}  // namespace
}  // namespace ledger::load

int main(int argc, char** argv) {
  using namespace ledger::load;
  LoadOptions options;
  FlagTexts texts;
  CLI::App app{"ledger_load: load driver and benchmark for the ledger's engines"};
  DeclareFlags(app, options, texts);
  CLI11_PARSE(app, argc, argv);
  if (absl::Status resolved = Resolve(texts, options); !resolved.ok()) {
    absl::FPrintF(stderr, "ledger_load: %s\n", resolved.message());
    return 2;
  }
  absl::StatusOr<bool> healthy = Run(options);
  if (!healthy.ok()) {
    absl::FPrintF(stderr, "ledger_load: %s\n", healthy.status().ToString());
    return kExitFailure;
  }
  return *healthy ? 0 : kExitFailure;
}
