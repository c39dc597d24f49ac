// The single-client property run: executes a workload's steps against a fresh database
// through a Ledger over a FaultInjectingEngine and a ManualClock, and after every step
// checks the engine's answer against the reference model and the invariants (per-asset
// totals zero, every balance equal to the model's and above its floor). Every
// `checkpoint_every` steps, and at the end, the whole database is compared with the
// model: the same transactions byte for byte, one key record per committed key pointing
// at its transaction, one outbox event per transaction, every hold as stored, every
// account as of now (pending and available amounts with lapsed holds released), and
// VerifyLedger clean. ExpireHolds steps must record exactly the expiries the model has
// lapsed. At the end every request never acknowledged (faulted) is resent under its key
// (each must yield exactly one commit) and every hold is read one by one (Engine::GetHold,
// Ledger::GetHold, Ledger::ListHolds).
//
// On a failure, Shrink removes steps (delta debugging, bounded time) while the run still
// fails, and FailureReport prints the seed, the remaining steps and how to replay both.
//
// Not thread-safe: one run per thread.
#ifndef LEDGER_TESTS_PROPERTY_SEQUENTIAL_RUN_H_
#define LEDGER_TESTS_PROPERTY_SEQUENTIAL_RUN_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "ledger/engine.h"
#include "ledger/ledger.h"
#include "tests/property/property_context.h"
#include "tests/property/workload.h"

namespace ledger::property {

// The velocity limits of the single-client runs: tight enough that hot accounts hit
// them, loose enough that most submits commit.
std::vector<VelocityLimit> PropertyVelocityLimits();

struct SequentialOptions {
  std::vector<VelocityLimit> velocity_limits = PropertyVelocityLimits();
  // The broken-ledger switch (LedgerTestingHooks::OpenWithoutIdempotency): the self-test
  // proves the run fails with it.
  bool skip_idempotency = false;
  // Wraps the engine under test, e.g. with a broken hold read for the self-test.
  std::function<std::shared_ptr<Engine>(std::shared_ptr<Engine>)> wrap_engine;
  int checkpoint_every = 50;  // steps between full database comparisons
  // After a real fault (killed session, restarted server) a client resends the same
  // request at most this many times before the run fails for lost availability.
  int resend_attempts_max = 20;
};

struct Violation {
  int step_index = -1;  // the workload's step index; -1 for setup, steps.size() for the end
  std::string message;
};

// What a run exercised, to show coverage in the log.
struct RunStats {
  std::map<std::string, int> counts;  // "committed", "duplicate", "rejected:<reason>", ...
  void Add(const std::string& what, int n = 1) { counts[what] += n; }
  std::string ToText() const;
};

struct RunResult {
  std::optional<Violation> violation;
  RunStats stats;
};

// Runs the steps whose indexes are in `indexes` (every step when empty), in order.
RunResult RunSequential(const PropertyContext& context, const Universe& universe,
                        const std::vector<Step>& steps, const std::vector<int>& indexes,
                        const SequentialOptions& options);

struct ShrinkResult {
  std::vector<int> indexes;  // a failing subset of the steps, as small as found in time
  Violation violation;       // what that subset fails with
  int runs = 0;
  bool out_of_time = false;
};

// Delta debugging over the steps up to and including the failing one. A smaller list
// is kept only if it fails at the same step with the same kind of message.
ShrinkResult Shrink(const PropertyContext& context, const Universe& universe,
                    const std::vector<Step>& steps, const std::vector<int>& indexes,
                    const Violation& violation, const SequentialOptions& options,
                    absl::Duration time_max);

// The failure text: seed, violation, the shrunk steps and the replay commands.
std::string FailureReport(const std::string& engine_name, const std::string& test_name,
                          uint64_t seed, const std::vector<Step>& steps, const Violation& original,
                          const std::optional<ShrinkResult>& shrunk);

}  // namespace ledger::property

#endif  // LEDGER_TESTS_PROPERTY_SEQUENTIAL_RUN_H_
