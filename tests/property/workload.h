// The seeded workload of the property suite: a fixed universe of accounts and a list of
// steps (submits with retries, duplicate deliveries, conflicting payloads, reversals,
// holds with and without expiry, captures (full, partial, above the hold, of unknown or
// settled holds), voids, clock moves past expiries, ExpireHolds sweeps, account closes,
// injected faults), generated from a seed alone, so the
// seed replays a run exactly and any subset of the steps is still a valid run (what
// shrinking needs).
//
//   Universe universe = MakeUniverse(seed);
//   std::vector<Step> steps = GenerateWorkload(seed, universe, {.steps = 300});
//
// Thread-safe: pure functions over values.
#ifndef LEDGER_TESTS_PROPERTY_WORKLOAD_H_
#define LEDGER_TESTS_PROPERTY_WORKLOAD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "idempotency/key.h"
#include "ledger/account.h"
#include "ledger/operation.h"
#include "tests/support/fault_injecting_engine.h"

namespace ledger::property {

inline constexpr char kCredits[] = "CREDITS";
inline constexpr char kUsd[] = "USD";

// Where every run's ManualClock starts (2026-01-01): the generator plans absolute hold
// expiries from it.
inline constexpr int64_t kClockStartUnixSeconds = 1'767'225'600;
inline absl::Time ClockStart() { return absl::FromUnixSeconds(kClockStartUnixSeconds); }

// The accounts every run starts with, and the pools the generator draws from.
struct Universe {
  std::vector<Asset> assets;
  std::vector<AccountSpec> accounts;         // opened at setup, in this order
  std::vector<std::string> closed_at_setup;  // closed right after opening
  std::string issuance;                      // CREDITS, allow_negative
  std::string usd_issuance;                  // USD, allow_negative
  std::string payouts;                       // CREDITS payout clearing
  std::string platform;                      // CREDITS fee account
  std::vector<std::string> credit_wallets;   // the first few are hot
  std::vector<std::string> usd_wallets;
  std::vector<std::string> merchants;  // creators: receive spends, pay out
  std::vector<std::string> ghosts;     // never opened: "account not found"
};

// A few hundred accounts; overdraft limits vary with the seed.
Universe MakeUniverse(uint64_t seed);

enum class FaultMode {
  kNone,
  kUnavailable,       // FaultInjectingEngine: the call fails, the attempt rolls back
  kRetryable,         // FaultInjectingEngine: a deadlock-like failure the ledger retries
  kCommitReplyLost,   // FaultInjectingEngine: COMMIT succeeds, the reply is "lost"
  kKillSession,       // server: the submit's own session is killed at the point
  kKillIdleSessions,  // server: every session is killed before the submit
  kRestartServer,     // server: restarted at the point (kBegin: before the transaction)
};

struct InjectedFault {
  FaultMode mode = FaultMode::kNone;
  testing::FaultPoint point = testing::FaultPoint::kBegin;
};

// A reversal names its target by the identity that committed it; the runner resolves
// it to that transaction's id when the step runs (a made-up id if none committed), so a
// step keeps its meaning when shrinking removes the step that committed the target.
struct ReverseTarget {
  std::string key_namespace;
  Scope scope;
  std::string key;
};

// A capture or void names its hold the same way: by the identity of the hold request
// (the default key space, like every request here), resolved to the hold's id (its transaction's id) when the step runs.
using HoldTarget = ReverseTarget;

struct Request {
  std::string key;
  Scope scope;
  Operation operation;  // reverse: transaction_id, capture/void: hold_id, filled in at run
  std::optional<ReverseTarget> reverse_target;
  std::optional<HoldTarget> hold_target;
  absl::Duration ttl = kKeyTtlDefault;
};

enum class StepKind { kSubmit, kCloseAccount, kExpireHolds };

struct Step {
  StepKind kind = StepKind::kSubmit;
  absl::Duration advance = absl::ZeroDuration();  // the clock moves by this first
  Request request;                                // kSubmit
  InjectedFault fault;                            // kSubmit, kExpireHolds (boundary faults)
  std::string account_id;                         // kCloseAccount
  std::string origin;  // why the generator made it: "new", "retry of #12", ...
};

struct WorkloadOptions {
  int steps = 300;
  bool boundary_faults = true;  // FaultInjectingEngine faults on some submits
  bool kill_sessions = false;   // server engines: real session kills
  int server_restarts = 0;      // spread evenly over the run
};

std::vector<Step> GenerateWorkload(uint64_t seed, const Universe& universe,
                                   const WorkloadOptions& options);

// One phase of the concurrent workload: a request list per client. Some requests are
// sent by several clients at once (racing duplicate deliveries), some reuse a shared key
// with another payload (racing conflicts), some race to reverse the same transaction,
// some race to capture or void the same hold under different keys (the runner races
// ExpireHolds sweeps and a clock move against them).
struct ConcurrentPhaseOptions {
  int phase = 0;
  int threads = 4;
  int requests_per_thread = 200;
  std::vector<std::string> reversible_transaction_ids;  // committed in earlier phases
  // Holds placed in earlier phases: several clients race to capture or void each.
  std::vector<std::string> hold_ids;
};

std::vector<std::vector<Request>> GenerateConcurrentPhase(uint64_t seed, const Universe& universe,
                                                          const ConcurrentPhaseOptions& options);

std::string FaultModeName(FaultMode mode);
std::string FaultPointName(testing::FaultPoint point);
std::string DescribeRequest(const Request& request);
std::string DescribeStep(int index, const Step& step);

}  // namespace ledger::property

#endif  // LEDGER_TESTS_PROPERTY_WORKLOAD_H_
