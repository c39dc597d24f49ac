// The `ledger demo` workload: a small creator economy driven by a seeded generator on a
// few threads, with the failures a real client meets injected on purpose:
//   - client retries: the same key and payload resent after a commit (must replay);
//   - duplicate deliveries: two threads send the same key at once (one commit);
//   - declined requests: a spend rejected for insufficient funds, retried under the
//     same key after the wallet was funded (the key stayed unused, so it commits);
//   - conflicts: the same key with a different payload (must be refused).
// Creator payouts go through a hold (two-phase transfer): the hold is placed, then the
// simulated bank confirms it (capture) or refuses it (void), each under its own key.
// Afterwards CheckExactlyOnce reads the database back and compares it with what the
// clients saw.
//
// Each wallet and each creator's payouts belong to one worker thread, so whether an
// operation can commit is decided by that thread alone and the expected outcomes are
// exact; credits (spends to creators, fees) still cross threads and contend.
//
// Thread-safe: RunDemoWorkload starts and joins its own threads.
#ifndef LEDGER_CLI_DEMO_H_
#define LEDGER_CLI_DEMO_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ledger/ledger.h"

namespace ledger::cli {

inline constexpr char kDemoAsset[] = "USD";
inline constexpr int kDemoAssetScale = 2;
inline constexpr char kDemoIssuance[] = "issuance";
inline constexpr char kDemoPlatformFees[] = "platform-fees";
inline constexpr char kDemoPayoutClearing[] = "payout-clearing";
inline constexpr int kDemoCreators = 8;
inline constexpr int kDemoWallets = 48;
inline constexpr int kDemoThreadsMax = 16;

struct DemoOptions {
  int64_t operations = 3000;  // logical operations: distinct idempotency keys
  uint64_t seed = 42;
  int threads = 4;
};

// Submit attempts by what they returned.
struct SubmitCounts {
  int64_t committed = 0;
  int64_t duplicate = 0;
  int64_t rejected = 0;
  int64_t conflict = 0;
  int64_t in_progress = 0;  // resent with the same key
  int64_t faulted = 0;      // resent with the same key
  void Add(const SubmitCounts& other);
  int64_t total() const;
};

// How often each injected situation ran and behaved as the contract says.
struct ScenarioCounts {
  int64_t client_retries = 0;           // resend after commit: duplicate, same transaction
  int64_t concurrent_deliveries = 0;    // two threads, one key: one committed, one duplicate
  int64_t declined_then_committed = 0;  // rejected, funded, same key committed
  int64_t conflicts_refused = 0;        // same key, other payload: conflict
  int64_t reversals_committed = 0;
  int64_t reversals_rejected = 0;  // the wallet had spent the money since
  int64_t payouts_captured = 0;    // held, then the bank confirmed: captured
  int64_t payouts_voided = 0;      // held, then the bank refused: voided, money released
  void Add(const ScenarioCounts& other);
};

// What one idempotency key produced, as the clients saw it.
struct KeyObservation {
  int64_t commits = 0;
  std::string transaction_id;         // of the commit, or of the replays
  std::vector<std::string> problems;  // replays of another transaction, unexpected results
};

struct DemoRun {
  SubmitCounts submits;
  ScenarioCounts scenarios;
  std::map<std::string, KeyObservation> keys;  // by key; keys are unique per run
  absl::Duration elapsed;
};

struct ExactlyOnceReport {
  int64_t keys_committed = 0;
  int64_t key_records = 0;
  int64_t transactions = 0;
  std::vector<std::string> violations;
  bool ok() const { return violations.empty(); }
};

// Defines the asset and opens the accounts. The database must hold no accounts yet.
absl::Status BuildDemoEconomy(Ledger& ledger);

// Runs the workload; an error means the demo could not run (e.g. the database went away).
absl::StatusOr<DemoRun> RunDemoWorkload(Ledger& ledger, const DemoOptions& options);

// Every key committed at most once; every replay returned its key's transaction; the
// database holds exactly one transaction and one key record per committed key, each
// pointing at the transaction its client saw.
absl::StatusOr<ExactlyOnceReport> CheckExactlyOnce(Engine& engine, const DemoRun& run);

std::string DemoWalletId(int index);
std::string DemoCreatorId(int index);

}  // namespace ledger::cli

#endif  // LEDGER_CLI_DEMO_H_
