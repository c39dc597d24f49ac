#include "server/metrics.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ledger::server {

void Metrics::RecordRequest(const std::string& method, const std::string& route, int status,
                            absl::Duration latency) {
  absl::MutexLock lock(&mutex_);
  ++requests_[{method, route, status}];
  AddToHistogram(latency_[route], latency);
}

void Metrics::AddToHistogram(Histogram& histogram, absl::Duration duration) {
  double seconds = absl::ToDoubleSeconds(duration);
  for (size_t i = 0; i < kBucketSeconds.size(); ++i) {
    if (seconds <= kBucketSeconds[i]) {
      ++histogram.buckets[i];
      break;
    }
  }
  ++histogram.count;
  histogram.sum_seconds += seconds;
}

// `labels`: "" or the histogram's own labels with a trailing comma (route="/x",).
void Metrics::RenderHistogram(std::string& text, const std::string& name, const std::string& labels,
                              const Histogram& histogram) {
  int64_t cumulative = 0;
  for (size_t i = 0; i < kBucketSeconds.size(); ++i) {
    cumulative += histogram.buckets[i];
    absl::StrAppend(&text, name, "_bucket{", labels, "le=\"", absl::StrFormat("%g", kBucketSeconds[i]),
                    "\"} ", cumulative, "\n");
  }
  std::string own_labels = labels.empty() ? "" : absl::StrCat("{", labels.substr(0, labels.size() - 1), "}");
  absl::StrAppend(&text, name, "_bucket{", labels, "le=\"+Inf\"} ", histogram.count, "\n", name, "_sum",
                  own_labels, " ", absl::StrFormat("%.6f", histogram.sum_seconds), "\n", name, "_count",
                  own_labels, " ", histogram.count, "\n");
}

void Metrics::RecordHoldSweep(std::optional<int64_t> expired, absl::Duration duration) {
  absl::MutexLock lock(&mutex_);
  AddToHistogram(hold_sweep_duration_, duration);
  if (!expired.has_value()) {
    ++hold_sweeps_failed_;
    return;
  }
  ++hold_sweeps_ok_;
  holds_expired_ += *expired;
}

void Metrics::RenderHoldSweeps(std::string& text) const {
  absl::StrAppend(&text, "# HELP ledger_holds_expired_total Holds whose expiry the hold sweeper recorded.\n",
                  "# TYPE ledger_holds_expired_total counter\nledger_holds_expired_total ", holds_expired_,
                  "\n# HELP ledger_hold_sweeps_total Sweeps of the hold sweeper by result.\n",
                  "# TYPE ledger_hold_sweeps_total counter\n",
                  "ledger_hold_sweeps_total{result=\"ok\"} ", hold_sweeps_ok_, "\n",
                  "ledger_hold_sweeps_total{result=\"failed\"} ", hold_sweeps_failed_, "\n",
                  "# HELP ledger_hold_sweep_duration_seconds Time of one sweep (Ledger::ExpireHolds).\n",
                  "# TYPE ledger_hold_sweep_duration_seconds histogram\n");
  RenderHistogram(text, "ledger_hold_sweep_duration_seconds", "", hold_sweep_duration_);
  absl::StrAppend(&text, "# HELP ledger_hold_sweep_interval_seconds Seconds between sweeps; 0: no sweeper.\n",
                  "# TYPE ledger_hold_sweep_interval_seconds gauge\nledger_hold_sweep_interval_seconds ",
                  absl::ToInt64Seconds(hold_sweep_interval_), "\n");
}

void Metrics::RecordSubmit(const std::string& outcome) {
  absl::MutexLock lock(&mutex_);
  ++submits_[outcome];
}

void Metrics::RecordBatch(size_t items) {
  absl::MutexLock lock(&mutex_);
  for (size_t i = 0; i < kBucketItems.size(); ++i) {
    if (items <= kBucketItems[i]) {
      ++batch_items_.buckets[i];
      break;
    }
  }
  ++batch_items_.count;
  batch_items_.sum_items += static_cast<int64_t>(items);
}

void Metrics::RenderBatchAndGroupCommit(std::string& text) const {
  absl::StrAppend(&text, "# HELP ledger_batch_items Items per SubmitBatch call of POST /v1/operations/batch.\n",
                  "# TYPE ledger_batch_items histogram\n");
  int64_t cumulative = 0;
  for (size_t i = 0; i < kBucketItems.size(); ++i) {
    cumulative += batch_items_.buckets[i];
    absl::StrAppend(&text, "ledger_batch_items_bucket{le=\"", kBucketItems[i], "\"} ", cumulative, "\n");
  }
  absl::StrAppend(&text, "ledger_batch_items_bucket{le=\"+Inf\"} ", batch_items_.count, "\n",
                  "ledger_batch_items_sum ", batch_items_.sum_items, "\n",
                  "ledger_batch_items_count ", batch_items_.count, "\n",
                  "# HELP ledger_group_commit_enabled 1 when concurrent single submits share transactions.\n",
                  "# TYPE ledger_group_commit_enabled gauge\nledger_group_commit_enabled ",
                  group_commit_batch_items_max_.has_value() ? 1 : 0, "\n",
                  "# HELP ledger_group_commit_batch_items_max Most submits one shared transaction takes.\n",
                  "# TYPE ledger_group_commit_batch_items_max gauge\nledger_group_commit_batch_items_max ",
                  group_commit_batch_items_max_.value_or(0), "\n");
}

bool Metrics::TryEnter() {
  int now = in_flight_.load();
  do {
    if (now >= in_flight_max_) return false;
  } while (!in_flight_.compare_exchange_weak(now, now + 1));
  return true;
}

void Metrics::Leave() { in_flight_.fetch_sub(1); }

std::string Metrics::RenderPrometheusText() const {
  std::string text;
  absl::MutexLock lock(&mutex_);
  absl::StrAppend(&text, "# HELP ledger_http_requests_total HTTP requests by route template and status.\n",
                  "# TYPE ledger_http_requests_total counter\n");
  for (const auto& [labels, count] : requests_) {
    const auto& [method, route, status] = labels;
    absl::StrAppend(&text, "ledger_http_requests_total{method=\"", method, "\",route=\"", route,
                    "\",status=\"", status, "\"} ", count, "\n");
  }
  absl::StrAppend(&text, "# HELP ledger_http_request_duration_seconds Time from request read to response.\n",
                  "# TYPE ledger_http_request_duration_seconds histogram\n");
  for (const auto& [route, histogram] : latency_) {
    RenderHistogram(text, "ledger_http_request_duration_seconds", absl::StrCat("route=\"", route, "\","),
                    histogram);
  }
  absl::StrAppend(&text, "# HELP ledger_submits_total Submits by outcome: each single POST and each batch item.\n",
                  "# TYPE ledger_submits_total counter\n");
  for (const auto& [outcome, count] : submits_) {
    absl::StrAppend(&text, "ledger_submits_total{outcome=\"", outcome, "\"} ", count, "\n");
  }
  RenderBatchAndGroupCommit(text);
  RenderHoldSweeps(text);
  absl::StrAppend(&text, "# HELP ledger_http_in_flight Requests being handled now.\n",
                  "# TYPE ledger_http_in_flight gauge\nledger_http_in_flight ", in_flight_.load(), "\n",
                  "# HELP ledger_http_in_flight_max Requests admitted at once (queued, running, long polls) before 429.\n",
                  "# TYPE ledger_http_in_flight_max gauge\nledger_http_in_flight_max ",
                  in_flight_max_, "\n",
                  "# HELP ledger_http_worker_threads Worker threads running handlers (not tied to connections).\n",
                  "# TYPE ledger_http_worker_threads gauge\nledger_http_worker_threads ",
                  worker_threads_, "\n");
  return text;
}

}  // namespace ledger::server
