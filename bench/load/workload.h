// The data set and the request streams of the load driver.
//
// Data set: asset BENCH (scale 2), user accounts bench-user-000000.. funded with
// kUserFunding minor units each, the platform account (allow_negative: top-ups come
// from it and fees go to it) and the issuance account that funds users at setup.
//
// Streams, one RequestSource per client thread (not thread-safe; each client owns its
// own, the conflict workload's shared sequence is atomic):
//   uniform   transfer between two distinct random users, 1..100 minor units
//   hot       alternately a top-up platform -> user and a spend user -> user whose fee
//             goes to the platform: every submit locks the platform account
//   retry     uniform, but with probability retry_fraction the client resends one of
//             its own earlier requests (same key, same payload): a duplicate
//   conflict  keys come from a sequence shared by all clients, each key twice, so two
//             clients race on it (one commits, the other waits on the claim and replays);
//             every fifth key's second submit carries another amount: a conflict error
//   replay    resends committed requests, each once: the duplicate path alone
#ifndef LEDGER_BENCH_LOAD_WORKLOAD_H_
#define LEDGER_BENCH_LOAD_WORKLOAD_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench/load/load_options.h"
#include "ledger/ledger.h"

namespace ledger::load {

inline constexpr char kLoadAsset[] = "BENCH";
inline constexpr int kLoadAssetScale = 2;
inline constexpr char kPlatformAccountId[] = "bench-platform";
inline constexpr char kIssuanceAccountId[] = "bench-issuance";
inline constexpr Amount kUserFunding = 1'000'000'000;  // far beyond what a run moves
inline constexpr Amount kMovedAmountMax = 100;
inline constexpr int kResendMemorySize = 1024;   // earlier requests a retry client keeps
inline constexpr int kConflictPayloadEvery = 5;  // every 5th raced key differs in payload

std::string UserAccountId(int index);
// All load keys share one scope, so clients of the conflict workload meet on a key.
Scope LoadScope();

struct PlannedSubmit {
  SubmitRequest request;
  bool resend = false;  // a deliberate retry of an earlier key
};

class RequestSource {
 public:
  virtual ~RequestSource() = default;
  // The next submit, or nullopt when the source has nothing more (replay only).
  virtual std::optional<PlannedSubmit> Next() = 0;
};

struct WorkloadPlan {
  Workload workload = Workload::kUniform;
  std::string key_prefix;  // unique per run and phase, so phases never share keys
  int accounts = 10'000;
  double retry_fraction = 0.3;
  uint64_t seed = 1;
};

// Shared by the sources of one phase: the conflict workload's key sequence.
struct SharedSequence {
  std::atomic<int64_t> next{0};
};

std::unique_ptr<RequestSource> MakeWorkloadSource(const WorkloadPlan& plan, int client_index,
                                                  SharedSequence& shared);

// Requests to resend, taken in turn by every client of the replay phase.
struct ReplayQueue {
  std::vector<SubmitRequest> requests;
  std::atomic<size_t> next{0};
};

std::unique_ptr<RequestSource> MakeReplaySource(ReplayQueue& queue);

}  // namespace ledger::load

#endif  // LEDGER_BENCH_LOAD_WORKLOAD_H_
