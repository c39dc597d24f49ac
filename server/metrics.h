// Counters for GET /metrics, in the Prometheus text exposition format:
//
//   ledger_http_requests_total{method,route,status}   requests by route template
//   ledger_http_request_duration_seconds{route}        latency histogram
//   ledger_submits_total{outcome}                      submits by outcome: each single
//                                                      POST and each batch item
//   ledger_batch_items                                 histogram: items per SubmitBatch
//                                                      call of POST /v1/operations/batch
//   ledger_group_commit_enabled, ledger_group_commit_batch_items_max   the setting
//   ledger_http_in_flight, ledger_http_in_flight_max, ledger_http_worker_threads
//   ledger_holds_expired_total                         holds the sweeper expired
//   ledger_hold_sweeps_total{result}                   sweeps: ok, failed
//   ledger_hold_sweep_duration_seconds                 histogram: one ExpireHolds call
//   ledger_hold_sweep_interval_seconds                 the setting (0: disabled)
//
// Group commit's shared transactions are not counted: the library does not report their
// sizes (GroupCommitOptions has no observer), so only the setting is exported.
//
// Routes are templates (/v1/accounts/{id}), never raw paths, so label sets stay bounded.
//
// Thread-safe: one mutex around the maps (one short lock per request).
#ifndef LEDGER_SERVER_METRICS_H_
#define LEDGER_SERVER_METRICS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ledger::server {

class Metrics {
 public:
  // `group_commit_batch_items_max`: nullopt when group commit is off.
  // `hold_sweep_interval`: zero when the hold sweeper is off.
  Metrics(int worker_threads, int in_flight_max, std::optional<size_t> group_commit_batch_items_max,
          absl::Duration hold_sweep_interval)
      : worker_threads_(worker_threads),
        in_flight_max_(in_flight_max),
        group_commit_batch_items_max_(group_commit_batch_items_max),
        hold_sweep_interval_(hold_sweep_interval) {}

  void RecordRequest(const std::string& method, const std::string& route, int status,
                     absl::Duration latency);
  // outcome: committed, duplicate, rejected, faulted, conflict, in_progress, invalid.
  void RecordSubmit(const std::string& outcome);
  // One SubmitBatch call of the batch route with `items` items.
  void RecordBatch(size_t items);
  // One sweep of the hold sweeper: how many holds it expired, nullopt when it failed.
  void RecordHoldSweep(std::optional<int64_t> expired, absl::Duration duration);

  // Requests being handled now; TryEnter fails (and changes nothing) at the maximum.
  bool TryEnter();
  void Leave();

  std::string RenderPrometheusText() const;

 private:
  static constexpr std::array<double, 12> kBucketSeconds = {
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5};
  struct Histogram {
    std::array<int64_t, kBucketSeconds.size()> buckets{};  // cumulative at render
    int64_t count = 0;
    double sum_seconds = 0;
  };
  // Powers of two up to kBatchItemsMax (8190).
  static constexpr std::array<size_t, 14> kBucketItems = {1,   2,   4,    8,    16,   32,   64,
                                                           128, 256, 512, 1024, 2048, 4096, 8190};
  struct ItemsHistogram {
    std::array<int64_t, kBucketItems.size()> buckets{};  // cumulative at render
    int64_t count = 0;
    int64_t sum_items = 0;
  };

  void RenderBatchAndGroupCommit(std::string& text) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void RenderHoldSweeps(std::string& text) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  static void AddToHistogram(Histogram& histogram, absl::Duration duration);
  static void RenderHistogram(std::string& text, const std::string& name, const std::string& labels,
                              const Histogram& histogram);

  const int worker_threads_;
  const int in_flight_max_;
  const std::optional<size_t> group_commit_batch_items_max_;
  const absl::Duration hold_sweep_interval_;
  std::atomic<int> in_flight_{0};
  mutable absl::Mutex mutex_;
  std::map<std::tuple<std::string, std::string, int>, int64_t> requests_ ABSL_GUARDED_BY(mutex_);
  std::map<std::string, Histogram> latency_ ABSL_GUARDED_BY(mutex_);
  std::map<std::string, int64_t> submits_ ABSL_GUARDED_BY(mutex_);
  ItemsHistogram batch_items_ ABSL_GUARDED_BY(mutex_);
  int64_t holds_expired_ ABSL_GUARDED_BY(mutex_) = 0;
  int64_t hold_sweeps_ok_ ABSL_GUARDED_BY(mutex_) = 0;
  int64_t hold_sweeps_failed_ ABSL_GUARDED_BY(mutex_) = 0;
  Histogram hold_sweep_duration_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace ledger::server

#endif  // LEDGER_SERVER_METRICS_H_
