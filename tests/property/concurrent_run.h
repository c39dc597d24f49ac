// The multi-client property run: several client threads send a seeded workload at once
// (racing duplicate deliveries of the same key, racing conflicting payloads, racing
// reversals of one transaction), optionally under injected faults, killed sessions or
// a server restart. Outcomes depend on the interleaving, so instead of predicting each
// one the checker establishes, at every quiescent point (all clients joined):
// - per key: at most one commit, every duplicate replays exactly that transaction, a
//   conflict only against another payload;
// - the database holds exactly the acknowledged commits, plus in-doubt ones it then
//   adopts, each named by one key record, each once, with one outbox event;
// - balances equal the sum of those transactions' entries, per-asset totals are zero,
//   nobody is below the floor, no transaction is reversed twice, VerifyLedger is clean;
// - holds: every hold row is an answered hold transaction's; each settled hold is settled
//   by exactly one capture, void or expire transaction (so exactly one of them won),
//   matching its status; a capture posts at most the hold; a pending hold has none;
//   every capture or void refused as captured / voided / expired / not found / too
//   large agrees with the hold's final state; stored pending amounts are the pending
//   holds' and nobody's available balance (lapsed holds released) is below the floor;
// - order rows (order_rows.h): every third key goes through a unit of work that also
//   inserts an order row keyed by it (on the SQL engines), skipping the insert on
//   `duplicate`; each order row names the transaction its key committed, and each key
//   committed through a unit has its row;
// then resends every unacknowledged request under its key (exactly one commit; a unit's
// key again as a unit) and, after the last phase, every request ever sent (each replays
// or conflicts).
//
// Thread safety: RunConcurrent owns its threads; a ConcurrencyChecker is used by one
// thread at a time (after the clients joined).
#ifndef LEDGER_TESTS_PROPERTY_CONCURRENT_RUN_H_
#define LEDGER_TESTS_PROPERTY_CONCURRENT_RUN_H_

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ledger/engine.h"
#include "ledger/ledger.h"
#include "tests/property/model.h"
#include "tests/property/order_rows.h"
#include "tests/property/property_context.h"
#include "tests/property/sequential_run.h"
#include "tests/property/workload.h"

namespace ledger::property {

// One submit as a client saw it.
struct Attempt {
  SubmitRequest request;
  std::string fingerprint;
  absl::StatusOr<Outcome> result = absl::UnknownError("not sent");
};

Attempt MakeAttempt(const Request& request);

class ConcurrencyChecker {
 public:
  // Takes one quiescent point's answers. `faults_allowed`: faulted and in-progress
  // answers are expected (fault phases) rather than violations.
  std::string TakeAnswers(const std::vector<Attempt>& attempts, bool faults_allowed);
  // Compares the database with what the answers established, at clock time `now`;
  // adopts commits of in-doubt attempts found there.
  std::string CheckDatabase(Engine& engine, int read_attempts, absl::Time now);
  // Takes the answer to a resend made while nothing else runs.
  std::string TakeResend(const Attempt& attempt);

  // Attempts answered with a fault or "in progress", since the last call.
  std::vector<Attempt> TakeUnacknowledged();
  // Ids of committed transactions that are not reversals, for later phases to reverse.
  std::vector<std::string> ReversibleTransactionIds(size_t count_max) const;
  // Ids of the holds placed most recently, for later phases to race settlements on.
  std::vector<std::string> RecentHoldIds(size_t count_max) const;
  RunStats& stats() { return stats_; }

 private:
  struct Known {
    std::string fingerprint;
    Transaction transaction;
    int commit_acknowledgements = 0;
    int64_t learned_in_batch = 0;  // which TakeAnswers call first learned it
  };
  std::string Learn(const IdentityTuple& identity, const std::string& fingerprint,
                    const Transaction& transaction, bool acknowledged_commit);
  std::string CheckSettlesTheNamedHold(const Attempt& attempt);
  std::string CheckKeysAgainstAnswers(Engine& engine, const std::vector<KeyRecord>& keys);
  std::string CheckBalances(const std::vector<Account>& accounts) const;
  std::string CheckHolds(const std::vector<Hold>& holds,
                         const std::vector<Transaction>& transactions,
                         const std::vector<Account>& accounts, absl::Time now);
  std::string CheckRefusedSettlements(const std::map<std::string, const Hold*>& holds,
                                      absl::Time now);

  // A capture or void refused for a reason about its hold.
  struct RefusedSettlement {
    std::string hold_id;
    RejectionReason reason;
    std::optional<Amount> capture_amount;
  };

  std::map<IdentityTuple, Known> known_;  // committed keys and their transactions
  std::map<std::string, IdentityTuple> by_transaction_id_;
  std::map<IdentityTuple, bool> unresolved_;  // identity -> some attempt was in doubt
  std::vector<Attempt> unacknowledged_;
  std::vector<std::pair<IdentityTuple, std::string>> conflicts_;  // identity, fingerprint
  std::vector<RefusedSettlement> refused_settlements_;
  std::vector<std::string> hold_ids_;  // holds learned, in the order learned
  RunStats stats_;
  int64_t batch_ = 0;  // TakeAnswers calls so far
};

struct ConcurrentOptions {
  int threads = 4;
  int requests_per_thread = 200;
  int phases = 2;
  bool boundary_faults = false;    // clients arm FaultInjectingEngine faults at random
  // Clients kill a random busy session (servers); with group_commit they ask one killing
  // thread to, so that they keep submitting together.
  bool kill_sessions = false;
  bool restart_mid_phase = false;  // one client restarts the server during phase 0
  // Clients send their requests in SubmitBatch calls of this many (the last may be
  // shorter); 1: one Submit per request.
  int batch_size = 1;
  bool group_commit = false;  // the ledger coalesces the clients' single submits
  // How the units of work write their order rows (order_rows.h): kApart only in the
  // self-test that shows the order checks catch a service committing them separately.
  OrderRowWrite order_row_write = OrderRowWrite::kInTheUnit;
  // Wraps the engine under test, e.g. with a broken claim for the self-test.
  std::function<std::shared_ptr<Engine>(std::shared_ptr<Engine>)> wrap_engine;
  int resend_attempts_max = 20;
};

RunResult RunConcurrent(const PropertyContext& context, const Universe& universe, uint64_t seed,
                        const ConcurrentOptions& options);

}  // namespace ledger::property

#endif  // LEDGER_TESTS_PROPERTY_CONCURRENT_RUN_H_
