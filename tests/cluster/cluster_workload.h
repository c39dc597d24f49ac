// The load of the cluster tests: client threads submitting top-ups, each with keys of its
// own plus same-key storms every client sends, recording how every call ended and how
// long it took; then the resend of every key and the exactly-once checks.
//
//   ClusterWorkload load({.prefix = "kill", .clients = 16}, [&](int client) -> Ledger& {...});
//   load.Start();  ... kill the primary ...  load.Stop();
//   load.ExpectEveryCallEndedWithin(kCallBound);
//   load.ResendEveryKey(ledger);  load.ExpectExactlyOnce(ledger);
//
// Accounts: "<prefix>-issuance" (allow_negative), "<prefix>-u<client>" (one per client,
// credited 1 per own key) and "<prefix>-storm" (credited 1 per storm key): after every
// key is resent, each balance counts its keys exactly when each committed exactly once.
// Thread-safe between Start and Stop (each client thread records its own calls).
#ifndef LEDGER_TESTS_CLUSTER_CLUSTER_WORKLOAD_H_
#define LEDGER_TESTS_CLUSTER_CLUSTER_WORKLOAD_H_

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "ledger/ledger.h"

namespace ledger::testing {

inline constexpr char kClusterAsset[] = "CREDITS";

struct ClusterWorkloadOptions {
  std::string prefix;       // of keys and accounts: one workload's own
  int clients = 16;
  int storm_every = 4;      // every n-th call of a client sends the shared storm key
  absl::Duration pause = absl::Milliseconds(5);  // between one client's calls
};

// How one call ended.
struct ClusterCall {
  int client = 0;
  std::string key;
  absl::StatusOr<Outcome> outcome;
  absl::Time started;
  absl::Duration elapsed;
};

// The words of the brief: committed, duplicate, rejected, unavailable, in doubt (a
// fault during COMMIT), in progress (the same key's other attempt still runs), or
// "other" (anything else: a bug the tests report).
std::string EndOf(const absl::StatusOr<Outcome>& outcome);

class ClusterWorkload {
 public:
  using LedgerOf = std::function<Ledger&(int client)>;
  ClusterWorkload(ClusterWorkloadOptions options, LedgerOf ledger_of)
      : options_(std::move(options)), ledger_of_(std::move(ledger_of)) {}
  ~ClusterWorkload() { Stop(); }

  // Opens the accounts (the asset too, when missing) through `ledger`.
  absl::Status Prepare(Ledger& ledger);
  void Start();
  void Stop();

  std::vector<ClusterCall> Calls() const;
  // Counts of EndOf over every call, e.g. {"committed": 812, "unavailable": 40}.
  std::map<std::string, int> Ends() const;
  // The earliest call started after `after` that committed; InfiniteFuture when none.
  absl::Time FirstCommitStartedAfter(absl::Time after) const;
  // What happened when, for a failure's message: one line per `bucket` from `from` on,
  // the calls that ended in it by how they ended, the clients of each, and the longest,
  // e.g. "+12s committed 31 [c0 c2] unavailable 2 [c1] longest 3.0s (c1 unavailable)".
  // A line with nothing ended is a stall. `client_name` names a client ("c1@galera2");
  // optional.
  std::string Timeline(absl::Time from, absl::Duration bucket,
                       const std::function<std::string(int client)>& client_name = nullptr) const;

  // Every call ended within `bound` and as one of the words of EndOf but "other".
  void ExpectEveryCallEndedWithin(absl::Duration bound) const;
  // Resends every key the clients sent, until each is committed or duplicate (retrying
  // faults for at most `deadline`); a key acknowledged before (committed or duplicate)
  // must come back as that same transaction.
  void ResendEveryKey(Ledger& ledger, absl::Duration deadline) const;
  // The balances count every key exactly once, and every acknowledged transaction is
  // found through `ledger` (e.g. the new primary's alone).
  void ExpectExactlyOnce(Ledger& ledger) const;

  std::string AccountId(const std::string& name) const { return options_.prefix + "-" + name; }

 private:
  std::string CreditedAccountOf(const std::string& key) const;
  SubmitRequest RequestFor(const std::string& key) const;
  void RunClient(int client);

  const ClusterWorkloadOptions options_;
  const LedgerOf ledger_of_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  mutable absl::Mutex mutex_;
  std::vector<ClusterCall> calls_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_CLUSTER_CLUSTER_WORKLOAD_H_
