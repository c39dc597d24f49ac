#include "bench/load/load_phase.h"

#include <atomic>
#include <chrono>
#include <iterator>
#include <thread>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/notification.h"
#include "base/status.h"

namespace ledger::load {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Samples one client gathers; merged once the phase ends, so clients never share a lock.
using ClientTally = PhaseSamples;

// The shared state of a running phase.
struct PhaseControl {
  const PhaseSpec& spec;
  absl::BlockingCounter clients_ready;
  absl::Notification start;
  std::optional<SteadyClock::time_point> deadline;
  std::atomic<int64_t> submits_left;  // only when spec.operations > 0
  std::atomic<int64_t> submits_done{0};

  explicit PhaseControl(const PhaseSpec& phase_spec)
      : spec(phase_spec), clients_ready(phase_spec.clients), submits_left(phase_spec.operations) {}

  bool TakeTicket() {
    if (spec.operations <= 0) return true;
    return submits_left.fetch_sub(1, std::memory_order_relaxed) > 0;
  }
  bool PastDeadline() const { return deadline.has_value() && SteadyClock::now() >= *deadline; }
};

void Problem(OutcomeCounts& counts, const absl::Status& status) {
  if (counts.first_problem.empty()) counts.first_problem = status.ToString();
}

void Tally(ClientTally& tally, const SubmitRequest& request, bool resend,
           const SubmitResult& result, int64_t latency_ns, size_t keep_max) {
  tally.all_ns.push_back(latency_ns);
  if (resend) tally.counts.resends += 1;
  if (!result.ok()) {
    const absl::Status& status = result.status();
    if (IsConflict(status)) {
      tally.counts.conflict += 1;
    } else if (IsInProgress(status)) {
      tally.counts.in_progress += 1;
    } else {
      tally.counts.error += 1;
      Problem(tally.counts, status);
    }
    return;
  }
  switch (result->kind) {
    case OutcomeKind::kCommitted:
      tally.counts.committed += 1;
      tally.committed_ns.push_back(latency_ns);
      if (tally.committed_requests.size() < keep_max) {
        tally.committed_requests.push_back(request);
      }
      break;
    case OutcomeKind::kDuplicate:
      tally.counts.duplicate += 1;
      tally.duplicate_ns.push_back(latency_ns);
      break;
    case OutcomeKind::kRejected:
      tally.counts.rejected += 1;
      break;
    case OutcomeKind::kFaulted:
      tally.counts.faulted += 1;
      Problem(tally.counts, result->fault);
      break;
  }
}

// The operations of one call: up to `count`, fewer at the phase's bound or when the
// source runs dry; none when the client is done.
struct CallPlan {
  SubmitBatchRequest batch;
  std::vector<bool> resends;
};

CallPlan NextCall(PhaseControl& control, RequestSource& source, size_t count) {
  CallPlan call;
  while (call.batch.items.size() < count && control.TakeTicket()) {
    std::optional<PlannedSubmit> planned = source.Next();
    if (!planned.has_value()) break;
    call.batch.items.push_back(std::move(planned->request));
    call.resends.push_back(planned->resend);
  }
  return call;
}

// One result per item, whichever call carried them. A batch refused as a whole gives
// every item its error, so per-item checks still see it.
std::vector<SubmitResult> SubmitCall(Ledger& ledger, const SubmitBatchRequest& batch,
                                     bool batched) {
  if (!batched) return {ledger.Submit(batch.items.front())};
  absl::StatusOr<std::vector<SubmitResult>> results = ledger.SubmitBatch(batch);
  if (!results.ok()) return std::vector<SubmitResult>(batch.items.size(), results.status());
  if (results->size() != batch.items.size()) {
    return std::vector<SubmitResult>(
        batch.items.size(),
        absl::InternalError(absl::StrFormat("SubmitBatch returned %d results for %d items",
                                            results->size(), batch.items.size())));
  }
  return *std::move(results);
}

void RunClient(Ledger& ledger, PhaseControl& control, RequestSource& source, ClientTally& tally) {
  const bool batched = control.spec.batch_items > 0;
  const size_t per_call = batched ? control.spec.batch_items : 1;
  control.clients_ready.DecrementCount();
  control.start.WaitForNotification();
  while (true) {
    CallPlan call = NextCall(control, source, per_call);
    if (call.batch.items.empty()) break;
    SteadyClock::time_point started = SteadyClock::now();
    std::vector<SubmitResult> results = SubmitCall(ledger, call.batch, batched);
    int64_t latency_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - started).count();
    tally.calls += 1;
    for (size_t index = 0; index < results.size(); ++index) {
      Tally(tally, call.batch.items[index], call.resends[index], results[index], latency_ns,
            control.spec.committed_kept_per_client);
    }
    control.submits_done.fetch_add(static_cast<int64_t>(results.size()),
                                   std::memory_order_relaxed);
    if (control.PastDeadline()) break;
  }
}

// Prints a status line every interval until `done`: long runs show they are alive.
void ReportProgress(const PhaseControl& control, const absl::Notification& done) {
  SteadyClock::time_point started = SteadyClock::now();
  int64_t previous = 0;
  while (!done.WaitForNotificationWithTimeout(control.spec.progress_interval)) {
    double elapsed_s = std::chrono::duration<double>(SteadyClock::now() - started).count();
    int64_t submits = control.submits_done.load(std::memory_order_relaxed);
    absl::FPrintF(stderr, "  [%s %s, %d clients] %6.1fs %9d submits  %8.0f/s now\n",
                  WorkloadName(control.spec.workload), control.spec.mode, control.spec.clients,
                  elapsed_s, submits,
                  static_cast<double>(submits - previous) /
                      absl::ToDoubleSeconds(control.spec.progress_interval));
    previous = submits;
  }
}

}  // namespace

void OutcomeCounts::Add(const OutcomeCounts& other) {
  committed += other.committed;
  duplicate += other.duplicate;
  rejected += other.rejected;
  faulted += other.faulted;
  conflict += other.conflict;
  in_progress += other.in_progress;
  error += other.error;
  resends += other.resends;
  if (first_problem.empty()) first_problem = other.first_problem;
}

int64_t OutcomeCounts::Total() const {
  return committed + duplicate + rejected + faulted + conflict + in_progress + error;
}

nlohmann::json OutcomeCounts::ToJson() const {
  nlohmann::json json = {{"committed", committed}, {"duplicate", duplicate},
                         {"rejected", rejected},   {"faulted", faulted},
                         {"conflict", conflict},   {"in_progress", in_progress},
                         {"error", error},         {"resends", resends}};
  if (!first_problem.empty()) json["first_problem"] = first_problem;
  return json;
}

void PhaseSamples::Append(PhaseSamples&& other) {
  all_ns.insert(all_ns.end(), other.all_ns.begin(), other.all_ns.end());
  committed_ns.insert(committed_ns.end(), other.committed_ns.begin(), other.committed_ns.end());
  duplicate_ns.insert(duplicate_ns.end(), other.duplicate_ns.begin(), other.duplicate_ns.end());
  counts.Add(other.counts);
  calls += other.calls;
  database_transactions += other.database_transactions;
  round_trips += other.round_trips;
  elapsed_seconds += other.elapsed_seconds;
  std::move(other.committed_requests.begin(), other.committed_requests.end(),
            std::back_inserter(committed_requests));
}

PhaseResult Summarize(const PhaseSpec& spec, PhaseSamples samples) {
  PhaseResult result{.workload = std::string(WorkloadName(spec.workload)),
                     .mode = spec.mode,
                     .clients = spec.clients,
                     .elapsed_seconds = samples.elapsed_seconds,
                     .submits = static_cast<int64_t>(samples.all_ns.size()),
                     .calls = samples.calls,
                     .database_transactions = samples.database_transactions,
                     .round_trips = samples.round_trips,
                     .counts = std::move(samples.counts),
                     .committed_requests = std::move(samples.committed_requests)};
  if (result.elapsed_seconds > 0) {
    result.submits_per_second = static_cast<double>(result.submits) / result.elapsed_seconds;
    result.commits_per_second =
        static_cast<double>(result.counts.committed) / result.elapsed_seconds;
    result.calls_per_second = static_cast<double>(result.calls) / result.elapsed_seconds;
  }
  if (result.database_transactions > 0) {
    result.submits_per_transaction =
        static_cast<double>(result.submits) / static_cast<double>(result.database_transactions);
  }
  if (result.round_trips > 0 && result.submits > 0) {
    result.round_trips_per_submit =
        static_cast<double>(result.round_trips) / static_cast<double>(result.submits);
  }
  result.latency_all = SummarizeLatencies(samples.all_ns);
  result.latency_committed = SummarizeLatencies(samples.committed_ns);
  result.latency_duplicate = SummarizeLatencies(samples.duplicate_ns);
  return result;
}

nlohmann::json PhaseResult::ToJson() const {
  return {{"workload", workload},
          {"mode", mode},
          {"clients", clients},
          {"elapsed_seconds", elapsed_seconds},
          {"submits", submits},
          {"submits_per_second", submits_per_second},
          {"commits_per_second", commits_per_second},
          {"calls", calls},
          {"calls_per_second", calls_per_second},
          {"database_transactions", database_transactions},
          {"submits_per_transaction", submits_per_transaction},
          {"round_trips", round_trips},
          {"round_trips_per_submit", round_trips_per_submit},
          {"latency", LatencyToJson(latency_all)},
          {"latency_committed", LatencyToJson(latency_committed)},
          {"latency_duplicate", LatencyToJson(latency_duplicate)},
          {"outcomes", counts.ToJson()}};
}

PhaseResult RunPhase(Ledger& ledger, const PhaseSpec& spec, const SourceFactory& make_source) {
  return Summarize(spec, RunPhaseSamples(ledger, spec, make_source));
}

PhaseSamples RunPhaseSamples(Ledger& ledger, const PhaseSpec& spec,
                             const SourceFactory& make_source) {
  PhaseControl control(spec);
  std::vector<ClientTally> tallies(static_cast<size_t>(spec.clients));
  std::vector<std::unique_ptr<RequestSource>> sources;
  for (int client = 0; client < spec.clients; ++client) sources.push_back(make_source(client));
  std::vector<std::thread> clients;
  for (int client = 0; client < spec.clients; ++client) {
    clients.emplace_back(RunClient, std::ref(ledger), std::ref(control),
                         std::ref(*sources[static_cast<size_t>(client)]),
                         std::ref(tallies[static_cast<size_t>(client)]));
  }
  control.clients_ready.Wait();  // thread start-up stays out of the measurement
  SteadyClock::time_point started = SteadyClock::now();
  if (spec.duration.has_value()) {
    control.deadline = started + absl::ToChronoNanoseconds(*spec.duration);
  }
  control.start.Notify();
  absl::Notification done;
  std::thread progress;
  if (spec.progress) progress = std::thread(ReportProgress, std::cref(control), std::cref(done));
  for (std::thread& client : clients) client.join();
  double elapsed_seconds = std::chrono::duration<double>(SteadyClock::now() - started).count();
  done.Notify();
  if (progress.joinable()) progress.join();
  PhaseSamples samples;
  for (ClientTally& tally : tallies) samples.Append(std::move(tally));
  samples.elapsed_seconds = elapsed_seconds;
  return samples;
}

}  // namespace ledger::load
