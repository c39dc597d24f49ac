#include "bench/load/load_report.h"

#include <algorithm>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ledger::load {
namespace {

constexpr double kMicrosecondsPerMillisecond = 1'000.0;

const PhaseResult* FindPhase(const std::vector<PhaseResult>& phases, const std::string& workload,
                             const std::string& mode) {
  for (const PhaseResult& phase : phases) {
    if (phase.workload == workload && phase.mode == mode) return &phase;
  }
  return nullptr;
}

std::string Milliseconds(double microseconds) {
  return absl::StrFormat("%.3f", microseconds / kMicrosecondsPerMillisecond);
}

nlohmann::json OptionalToJson(const std::optional<double>& value) {
  return value.has_value() ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

std::string Verdict(bool met) { return met ? "met" : "MISSED"; }

// Operations per database transaction: 1.0 for single submits, up to N with --batch N.
std::string PerTransaction(const PhaseResult& phase) {
  return phase.database_transactions > 0 ? absl::StrFormat("%.1f", phase.submits_per_transaction)
                                         : std::string("-");
}

void PrintPhases(std::FILE* out, const RunReport& report) {
  absl::FPrintF(out,
                "%-18s %-8s %-12s %7s %9s %10s %9s %7s %8s %8s %8s %9s %9s %9s %8s %7s %8s %7s "
                "%6s\n",
                "engine", "workload", "mode", "clients", "ops", "ops/s", "calls/s", "ops/tx",
                "p50 ms", "p95 ms", "p99 ms", "max ms", "committed", "duplicate", "rejected",
                "faulted", "conflict", "in_prog", "error");
  for (const PhaseResult& phase : report.phases) {
    const OutcomeCounts& c = phase.counts;
    absl::FPrintF(out,
                  "%-18s %-8s %-12s %7d %9d %10.0f %9.0f %7s %8s %8s %8s %9s %9d %9d %8d %7d %8d "
                  "%7d %6d\n",
                  report.info.label, phase.workload, phase.mode, phase.clients, phase.submits,
                  phase.submits_per_second, phase.calls_per_second, PerTransaction(phase),
                  Milliseconds(phase.latency_all.p50_us),
                  Milliseconds(phase.latency_all.p95_us), Milliseconds(phase.latency_all.p99_us),
                  Milliseconds(phase.latency_all.max_us), c.committed, c.duplicate, c.rejected,
                  c.faulted, c.conflict, c.in_progress, c.error);
    if (!c.first_problem.empty()) absl::FPrintF(out, "    first problem: %s\n", c.first_problem);
    if (phase.round_trips > 0) {
      absl::FPrintF(out, "    round trips (counted on the wire): %d, %.2f per operation\n",
                    phase.round_trips, phase.round_trips_per_submit);
    }
  }
}

// Raw resends post again while exactly-once replays them, so only the workloads without
// resends compare like with like.
bool OverheadIsJudged(const std::string& workload) {
  return workload == "uniform" || workload == "hot";
}

void PrintComparison(std::FILE* out, const WorkloadComparison& comparison, double overhead_max) {
  if (comparison.overhead.has_value() && !OverheadIsJudged(comparison.workload)) {
    absl::FPrintF(out,
                  "exactly-once vs raw (%s, not judged: raw posts every resend again): "
                  "raw %.0f/s, exactly-once %.0f/s\n",
                  comparison.workload, *comparison.raw_submits_per_second,
                  *comparison.exactly_once_submits_per_second);
  } else if (comparison.overhead.has_value()) {
    absl::FPrintF(out,
                  "exactly-once cost (%s): raw %.0f/s vs exactly-once %.0f/s: %+.1f%% "
                  "(target <= %.0f%%: %s)\n",
                  comparison.workload, *comparison.raw_submits_per_second,
                  *comparison.exactly_once_submits_per_second, *comparison.overhead * 100,
                  overhead_max * 100, Verdict(*comparison.overhead <= overhead_max));
  }
  if (comparison.duplicate_speedup.has_value()) {
    absl::FPrintF(out,
                  "duplicate replay (%s): p50 %s ms vs fresh commit p50 %s ms: %.1fx faster "
                  "(target >= %.0fx: %s)\n",
                  comparison.workload, Milliseconds(*comparison.duplicate_p50_us),
                  Milliseconds(*comparison.fresh_commit_p50_us), *comparison.duplicate_speedup,
                  kDuplicateSpeedupMin,
                  Verdict(*comparison.duplicate_speedup >= kDuplicateSpeedupMin));
  }
}

void PrintVerify(std::FILE* out, const RunReport& report) {
  if (!report.verify_status.ok()) {
    absl::FPrintF(out, "verify: could not run: %s\n", report.verify_status.ToString());
  } else if (report.verify.has_value()) {
    absl::FPrintF(out, "%s\n", report.verify->ToText());
  }
}

absl::Status AppendLines(const std::string& path, const std::string& header,
                         const std::string& rows) {
  bool fresh = !std::ifstream(path).good() || std::ifstream(path).peek() == EOF;
  std::ofstream file(path, std::ios::app);
  if (!file) return absl::UnavailableError(absl::StrCat("cannot append to ", path));
  if (fresh) file << header;
  file << rows;
  file.flush();
  if (!file) return absl::DataLossError(absl::StrCat("writing ", path, " failed"));
  return absl::OkStatus();
}

}  // namespace

void RunReport::Compare() {
  comparisons.clear();
  std::vector<std::string> workloads;
  for (const PhaseResult& phase : phases) {
    if (std::find(workloads.begin(), workloads.end(), phase.workload) == workloads.end()) {
      workloads.push_back(phase.workload);
    }
  }
  for (const std::string& workload : workloads) {
    WorkloadComparison comparison{.workload = workload};
    const PhaseResult* raw = FindPhase(phases, workload, "raw");
    const PhaseResult* exactly_once = FindPhase(phases, workload, "exactly-once");
    const PhaseResult* replay = FindPhase(phases, workload, "replay");
    if (raw != nullptr) comparison.raw_submits_per_second = raw->submits_per_second;
    if (exactly_once != nullptr) {
      comparison.exactly_once_submits_per_second = exactly_once->submits_per_second;
      if (exactly_once->latency_committed.count > 0) {
        comparison.fresh_commit_p50_us = exactly_once->latency_committed.p50_us;
      }
    }
    if (raw != nullptr && exactly_once != nullptr && exactly_once->submits_per_second > 0) {
      comparison.overhead = raw->submits_per_second / exactly_once->submits_per_second - 1;
    }
    if (replay != nullptr && replay->latency_duplicate.count > 0) {
      comparison.duplicate_p50_us = replay->latency_duplicate.p50_us;
      if (comparison.fresh_commit_p50_us.has_value() && *comparison.duplicate_p50_us > 0) {
        comparison.duplicate_speedup = *comparison.fresh_commit_p50_us / *comparison.duplicate_p50_us;
      }
    }
    comparisons.push_back(comparison);
  }
  const PhaseResult* hot = FindPhase(phases, "hot", "exactly-once");
  const PhaseResult* uniform = FindPhase(phases, "uniform", "exactly-once");
  if (hot != nullptr && uniform != nullptr && uniform->submits_per_second > 0) {
    hot_to_uniform = hot->submits_per_second / uniform->submits_per_second;
  }
}

double RunReport::OverheadMax() const {
  return info.batching == Batching::kSingle ? kExactlyOnceOverheadMax
                                            : kBatchedExactlyOnceOverheadMax;
}

double RunReport::HotToUniformMin() const {
  return info.batching == Batching::kSingle ? kHotToUniformMin : kBatchedHotToUniformMin;
}

nlohmann::json RunReport::ToJson() const {
  nlohmann::json json;
  json["run"] = {{"label", info.label},
                 {"database", info.database},
                 {"engine", info.engine},
                 {"clients", info.clients},
                 {"accounts", info.accounts},
                 {"phase_bound", info.bound},
                 {"warmup", info.warmup},
                 {"mode", info.mode},
                 {"batching", info.batching_text},
                 {"seed", info.seed},
                 {"started_at", info.started_at},
                 {"hardware_threads", info.hardware_threads},
                 {"load_average_before", info.load_average_before},
                 {"load_average_after", info.load_average_after},
                 {"sqlite_synchronous", info.sqlite_synchronous},
                 {"round_trip_latency", info.round_trip_latency}};
  json["setup"] = setup.ToJson();
  json["phases"] = nlohmann::json::array();
  for (const PhaseResult& phase : phases) json["phases"].push_back(phase.ToJson());
  json["comparisons"] = nlohmann::json::array();
  for (const WorkloadComparison& c : comparisons) {
    json["comparisons"].push_back(
        {{"workload", c.workload},
         {"raw_submits_per_second", OptionalToJson(c.raw_submits_per_second)},
         {"exactly_once_submits_per_second", OptionalToJson(c.exactly_once_submits_per_second)},
         {"exactly_once_overhead", OptionalToJson(c.overhead)},
         {"fresh_commit_p50_us", OptionalToJson(c.fresh_commit_p50_us)},
         {"duplicate_p50_us", OptionalToJson(c.duplicate_p50_us)},
         {"duplicate_speedup", OptionalToJson(c.duplicate_speedup)}});
  }
  json["hot_to_uniform"] = OptionalToJson(hot_to_uniform);
  json["targets"] = {{"exactly_once_overhead_max", OverheadMax()},
                     {"duplicate_speedup_min", kDuplicateSpeedupMin},
                     {"hot_to_uniform_min", HotToUniformMin()}};
  if (verify.has_value()) json["verify"] = verify->ToJson();
  if (!verify_status.ok()) json["verify_error"] = verify_status.ToString();
  return json;
}

void RunReport::PrintText(std::FILE* out) const {
  absl::FPrintF(out, "\n%s (%s) on %s: %s, %d clients, %d accounts, %s per phase, warmup %s, "
                "%u hardware threads, load %s -> %s\n",
                info.label, info.engine, info.database, info.batching_text, info.clients,
                info.accounts, info.bound, info.warmup, info.hardware_threads,
                info.load_average_before, info.load_average_after);
  if (info.round_trip_latency != "0") {
    absl::FPrintF(out, "(every round trip held %s longer by the relay: a database on another host)\n",
                  info.round_trip_latency);
  }
  if (info.batching == Batching::kBatch) {
    absl::FPrintF(out, "(ops count operations; calls/s are batches; a latency is its batch's)\n");
  }
  PrintPhases(out, *this);
  for (const WorkloadComparison& comparison : comparisons) {
    PrintComparison(out, comparison, OverheadMax());
  }
  if (hot_to_uniform.has_value()) {
    absl::FPrintF(out, "hot vs uniform (exactly-once): %.0f%% (target >= %.0f%%: %s)\n",
                  *hot_to_uniform * 100, HotToUniformMin() * 100,
                  Verdict(*hot_to_uniform >= HotToUniformMin()));
  }
  PrintVerify(out, *this);
}

absl::Status RunReport::AppendMarkdownRows(const std::string& path) const {
  std::string header =
      "| engine | batching | clients | workload | mode | ops/s | calls/s | ops/tx | p50 ms "
      "| p95 ms | p99 ms | max ms | committed | duplicate | rejected | faulted | conflict "
      "| in progress | error |\n"
      "|---|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
      "\n";
  std::string rows;
  for (const PhaseResult& p : phases) {
    absl::StrAppend(&rows, absl::StrFormat(
        "| %s | %s | %d | %s | %s | %.0f | %.0f | %s | %s | %s | %s | %s | %d | %d | %d | %d | %d "
        "| %d | %d |\n",
        info.label, info.batching_text, p.clients, p.workload, p.mode, p.submits_per_second,
        p.calls_per_second, PerTransaction(p),
        Milliseconds(p.latency_all.p50_us), Milliseconds(p.latency_all.p95_us),
        Milliseconds(p.latency_all.p99_us), Milliseconds(p.latency_all.max_us), p.counts.committed,
        p.counts.duplicate, p.counts.rejected, p.counts.faulted, p.counts.conflict,
        p.counts.in_progress, p.counts.error));
  }
  return AppendLines(path, header, rows);
}

absl::Status RunReport::AppendMarkdownTargets(const std::string& path) const {
  std::string header =
      "| engine | batching | clients | workload | raw/s | exactly-once/s | exactly-once cost "
      "| fresh p50 ms | duplicate p50 ms | duplicate speedup | hot/uniform | verify |\n"
      "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|\n";
  std::string verdict = verify.has_value() && verify_status.ok()
                            ? (verify->ok() ? "OK" : "VIOLATIONS")
                            : "not run";
  std::string rows;
  for (const WorkloadComparison& c : comparisons) {
    // Blank where the phases behind a cell did not run.
    auto value = [](const std::optional<double>& v, const char* unit, double scale, int digits) {
      return v.has_value() ? absl::StrFormat("%.*f%s", digits, *v * scale, unit) : std::string();
    };
    absl::StrAppend(&rows, absl::StrFormat(
        "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", info.label,
        info.batching_text, info.clients, c.workload, value(c.raw_submits_per_second, "", 1, 0),
        value(c.exactly_once_submits_per_second, "", 1, 0), OverheadIsJudged(c.workload) ? value(c.overhead, "%", 100, 1) : "n/a",
        value(c.fresh_commit_p50_us, "", 1 / kMicrosecondsPerMillisecond, 2),
        value(c.duplicate_p50_us, "", 1 / kMicrosecondsPerMillisecond, 2),
        value(c.duplicate_speedup, "x", 1, 1),
        c.workload == "hot" ? value(hot_to_uniform, "%", 100, 0) : std::string(), verdict));
  }
  return AppendLines(path, header, rows);
}

std::string LoadAverage() {
  std::ifstream file("/proc/loadavg");
  std::string one, five, fifteen;
  if (!(file >> one >> five >> fifteen)) return "";
  return absl::StrCat(one, " ", five, " ", fifteen);
}

}  // namespace ledger::load
