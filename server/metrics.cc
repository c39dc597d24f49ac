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
  absl::StrAppend(&text, "# HELP ledger_submits_total POST /v1/operations by outcome.\n",
                  "# TYPE ledger_submits_total counter\n");
  for (const auto& [outcome, count] : submits_) {
    absl::StrAppend(&text, "ledger_submits_total{outcome=\"", outcome, "\"} ", count, "\n");
  }
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
