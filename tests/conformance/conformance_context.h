// What each engine gives the ONE conformance suite (SOCI's tests/common, for a ledger).
//
// The suite is a parameterized fixture, ConformanceTest (conformance_fixture.h), whose
// parameter is a ContextFactory. Each engine has one executable made of the suite's
// object files plus tests/engines/<engine>/conformance_context.cc, which defines its
// factory and instantiates the suite with it:
//
//   ledger::testing::ConformanceContext PostgresAdvisoryContext() { ... }
//   INSTANTIATE_TEST_SUITE_P(postgres_advisory, ConformanceTest,
//                            ::testing::Values(&PostgresAdvisoryContext));
//
// Server engines read their DSN from the environment; without it they skip with the
// reason, except under CI=true, where a missing server is a failure.
#ifndef LEDGER_TESTS_CONFORMANCE_CONFORMANCE_CONTEXT_H_
#define LEDGER_TESTS_CONFORMANCE_CONFORMANCE_CONTEXT_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "ledger/engine.h"

namespace ledger::testing {

struct ConformanceContext {
  std::string engine_name;
  // Opens an engine on a fresh, empty, migrated database: every call starts clean. An
  // engine from an earlier call is destroyed before the next call.
  std::function<absl::StatusOr<std::unique_ptr<Engine>>()> open_fresh;
  // Opens another engine on the database the last open_fresh made, as a second process
  // would (the unit-of-work suite's forked child). Empty in process (memory).
  std::function<absl::StatusOr<std::unique_ptr<Engine>>()> open_again;
  // Set when the engine cannot run here: the suite skips with this reason, or fails
  // under CI=true.
  std::string unavailable_reason;
  // SQLite serializes every writer: a fail-fast submit sees ANY running writer as "in
  // progress", not only one holding the same key.
  bool writers_serialized = false;
  // Only one submit can hold an open transaction at a time (SQLite, memory): event
  // sequences follow commit order by construction, and a test cannot hold two open.
  bool one_open_submit_at_a_time = false;

  // Server-side controls of the database the last open_fresh made, for the error table's
  // rows that need a second party (error_table_suite.cc). Each is empty where the engine
  // cannot meet the situation; the case then skips and says why.
  //
  // Ends every session of the database on the server (pg_terminate_backend, KILL
  // CONNECTION), idle pooled ones too. Empty in process: there is no connection to lose.
  std::function<absl::Status()> kill_sessions;
  // Waits until at least `count` sessions of the database wait for a lock (an error
  // after a minute). Empty where writers are serialized: no deadlock can form there.
  std::function<absl::Status(int count)> await_lock_waiters;
  // Adds a deferred foreign key that every new transaction row violates, so COMMIT of a
  // submit fails; stop_failing_commits removes it. Empty where nothing can be deferred
  // to COMMIT (InnoDB checks every constraint at the statement; memory has none).
  std::function<absl::Status()> fail_commits;
  std::function<absl::Status()> stop_failing_commits;
};

using ContextFactory = ConformanceContext (*)();

// Reads an environment variable; empty if unset.
std::string EnvironmentOrEmpty(const char* name);
// True when CI=true: a missing server must fail, never skip.
bool RunningInCi();

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_CONFORMANCE_CONFORMANCE_CONTEXT_H_
