#include "server/metrics.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ledger::server {

void Metrics::RecordRequest(const std::string& method, const std::string& route, int status,
                            absl::Duration latency) {
  double seconds = absl::ToDoubleSeconds(latency);
  absl::MutexLock lock(&mutex_);
  ++requests_[{method, route, status}];
  Histogram& histogram = latency_[route];
  for (size_t i = 0; i < kBucketSeconds.size(); ++i) {
    if (seconds <= kBucketSeconds[i]) {
      ++histogram.buckets[i];
      break;
    }
  }
  ++histogram.count;
  histogram.sum_seconds += seconds;
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
    int64_t cumulative = 0;
    for (size_t i = 0; i < kBucketSeconds.size(); ++i) {
      cumulative += histogram.buckets[i];
      absl::StrAppend(&text, "ledger_http_request_duration_seconds_bucket{route=\"", route,
                      "\",le=\"", absl::StrFormat("%g", kBucketSeconds[i]), "\"} ", cumulative, "\n");
    }
    absl::StrAppend(&text, "ledger_http_request_duration_seconds_bucket{route=\"", route,
                    "\",le=\"+Inf\"} ", histogram.count, "\n",
                    "ledger_http_request_duration_seconds_sum{route=\"", route, "\"} ",
                    absl::StrFormat("%.6f", histogram.sum_seconds), "\n",
                    "ledger_http_request_duration_seconds_count{route=\"", route, "\"} ",
                    histogram.count, "\n");
  }
  absl::StrAppend(&text, "# HELP ledger_submits_total Submits by outcome: each single POST and each batch item.\n",
                  "# TYPE ledger_submits_total counter\n");
  for (const auto& [outcome, count] : submits_) {
    absl::StrAppend(&text, "ledger_submits_total{outcome=\"", outcome, "\"} ", count, "\n");
  }
  RenderBatchAndGroupCommit(text);
  absl::StrAppend(&text, "# HELP ledger_http_in_flight Requests being handled now.\n",
                  "# TYPE ledger_http_in_flight gauge\nledger_http_in_flight ", in_flight_.load(), "\n",
                  "# HELP ledger_http_in_flight_max Requests handled at once before 429.\n",
                  "# TYPE ledger_http_in_flight_max gauge\nledger_http_in_flight_max ",
                  in_flight_max_, "\n",
                  "# HELP ledger_http_worker_threads Worker threads serving connections.\n",
                  "# TYPE ledger_http_worker_threads gauge\nledger_http_worker_threads ",
                  worker_threads_, "\n");
  return text;
}

}  // namespace ledger::server
