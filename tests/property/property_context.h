// What each engine gives the property suite: a fresh database per run, and for server
// engines the means to break things for real (kill sessions, restart the server).
//
// One property executable per engine links the shared suite (property_suite.cc) with
// that engine's context file (contexts/<engine>_context.cc), which defines a factory
// and instantiates the suite with it, like the conformance suite does:
//
//   ledger::property::PropertyContext PostgresContext() { ... }
//   INSTANTIATE_TEST_SUITE_P(postgres, PropertyTest, ::testing::Values(&PostgresContext));
//
// Budgets come from the environment (budget.cc): a short default run, a soak mode
// (LEDGER_PROPERTY_SOAK=1) and an exact replay of one seed (LEDGER_PROPERTY_SEED).
//
// Thread safety: open_fresh is called from one thread at a time; the kill functions
// may be called from any thread (each context serializes its own admin session).
#ifndef LEDGER_TESTS_PROPERTY_PROPERTY_CONTEXT_H_
#define LEDGER_TESTS_PROPERTY_PROPERTY_CONTEXT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ledger/engine.h"

namespace ledger::property {

struct PropertyContext {
  std::string engine_name;
  // Opens an engine on a fresh, empty, migrated database. An engine from an earlier
  // call is destroyed before the next call.
  std::function<absl::StatusOr<std::unique_ptr<Engine>>()> open_fresh;
  // Set when the engine cannot run here: the suite skips with this reason, or fails
  // under CI=true.
  std::string unavailable_reason;

  // Server engines only (empty functions elsewhere). Each kills sessions of the
  // context's own scratch database from a separate administrative session and returns
  // how many it killed.
  // Every session with an open transaction: the paused submit of a single client.
  std::function<absl::StatusOr<int>()> kill_sessions_in_transaction;
  // One session that is running a statement or holds an open transaction, chosen by
  // the server: a random victim among concurrent clients.
  std::function<absl::StatusOr<int>()> kill_one_busy_session;
  // Every session, idle pooled connections included.
  std::function<absl::StatusOr<int>()> kill_all_sessions;
  // Stops and starts the server (scripts/test-servers.sh restart-<server>), blocking
  // until it accepts connections again.
  std::function<absl::Status()> restart_server;
  // Why restart_server cannot run here ("" when it can).
  std::string restart_unavailable_reason;

  // SQL engines: the application table the concurrent runs' units of work insert their
  // order rows into (ledger/unit_of_work.h), beside the ledger's tables in the same
  // database, and the statements run before it is created (a schema of its own).
  // Empty on an engine without caller SQL (memory): its units hold the submit alone.
  std::string orders_table;
  std::vector<std::string> orders_table_setup;

  // The engine may decide a submit or a batch on rows it remembers and let the database
  // refuse the guess (PostgreSQL's one_round_trip): a resend or a rejection may then
  // reach LockAccounts, the write and Commit before the refusal sends it back to be
  // decided on what the database holds. The sequential run's path predictions allow it.
  bool guesses_on_remembered_rows = false;

  // How many seeds the default (non-soak) run uses on this engine.
  int default_seed_count = 3;
  // Steps between two full comparisons of the database with the model (every
  // transaction, key record and event, and VerifyLedger). Answers and accounts are
  // compared after every step regardless. 1 where a full comparison is cheap.
  int checkpoint_every = 1;
};

using PropertyContextFactory = PropertyContext (*)();

// The size of one run, from the environment.
struct PropertyBudget {
  std::vector<uint64_t> seeds;    // single-client runs, one workload each
  int steps = 400;                // steps per single-client run
  int threads = 4;                // concurrent clients
  int requests_per_thread = 200;  // per concurrent phase
  int phases = 3;                 // concurrent phases, each ending at a quiescent point
  double shrink_seconds_max = 60;
  // LEDGER_PROPERTY_KEEP_STEPS: run only these step indexes of the seed's workload
  // (what a shrunk failure prints). Empty: run every step.
  std::vector<int> keep_steps;
  bool soak = false;
};

// Reads LEDGER_PROPERTY_SEED, LEDGER_PROPERTY_SOAK, LEDGER_PROPERTY_STEPS,
// LEDGER_PROPERTY_THREADS, LEDGER_PROPERTY_REQUESTS, LEDGER_PROPERTY_PHASES,
// LEDGER_PROPERTY_SHRINK_SECONDS and LEDGER_PROPERTY_KEEP_STEPS. `base_seed` makes
// each test's default seeds its own; `default_seed_count` is the context's.
PropertyBudget BudgetFromEnvironment(uint64_t base_seed, int default_seed_count);

// The command line that replays `seed` in this executable (printed with every
// failure); server engines also need the server environment (DIR/env) set.
std::string ReplayCommand(const std::string& test_name, uint64_t seed,
                          const std::vector<int>& keep_steps = {});

// Why scripts/test-servers.sh cannot restart the servers here ("" when it can): it
// needs LEDGER_TEST_SERVERS_DIR, which `test-servers.sh start DIR` writes to DIR/env.
std::string RestartUnavailableReason();
// Runs `scripts/test-servers.sh restart-<server> $LEDGER_TEST_SERVERS_DIR` and waits for
// it: the server accepts connections again when it returns. `server` is "postgres" or
// "mysql".
absl::Status RestartTestServer(const std::string& server);

}  // namespace ledger::property

#endif  // LEDGER_TESTS_PROPERTY_PROPERTY_CONTEXT_H_
