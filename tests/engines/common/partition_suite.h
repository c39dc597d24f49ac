// The ONE partition suite: every wait of a server engine is bounded, on a server of the
// test's own (ThrowawayServer), frozen with SIGSTOP at each point of a submit or an
// open. Its kernel still accepts the client's bytes, so only the engine's own bounds
// can end the wait. Before COMMIT a frozen submit faults (Unavailable: nothing
// written); during COMMIT it is in doubt; either way it returns within its bound, and
// resending the same key after the server thaws commits exactly once. The waits are
// small (a second or two) so the tests stay quick.
//
// Like the conformance suite (tests/conformance/conformance_context.h), the fixture is
// parameterized by a PartitionContextFactory; each engine's partition test file
// defines its context, instantiates the suite with it, and adds its own cases as
// TEST_P(PartitionTest, ...):
//
//   PartitionContext PostgresPartitionContext() { ... }
//   INSTANTIATE_TEST_SUITE_P(postgres, PartitionTest,
//                            ::testing::Values(&PostgresPartitionContext));
//
// The server starts once per executable (one engine each). Without one the tests skip
// with the reason, except under CI=true, where a missing server is a failure. ctest
// labels: partition and the engine's.
#ifndef LEDGER_TESTS_ENGINES_COMMON_PARTITION_SUITE_H_
#define LEDGER_TESTS_ENGINES_COMMON_PARTITION_SUITE_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "ledger/engine.h"
#include "ledger/ledger.h"
#include "tests/support/fault_injecting_engine.h"
#include "tests/support/freezing_proxy.h"
#include "tests/support/throwaway_server.h"
#include "tests/support/timed_submit.h"

namespace ledger::testing {

// The asset of the suite's accounts ("issuance", allow_negative, and "alice").
inline constexpr char kPartitionAsset[] = "CREDITS";
// How much later than its bound a call may come back on a busy test machine and still
// count as bounded; a wait that is not bounded hangs until the server thaws.
inline constexpr absl::Duration kPartitionSlack = absl::Seconds(4);

// What an engine gives the partition suite.
struct PartitionContext {
  std::string server_name;  // in messages: "PostgreSQL", "MariaDB"
  ThrowawayServer::Kind server_kind = ThrowawayServer::Kind::kPostgres;

  // The engine's short waits, as `open` sets them.
  absl::Duration connect_timeout;
  absl::Duration account_lock_wait;
  absl::Duration statement_timeout;
  absl::Duration read_timeout;
  // The bound of a submit frozen before its claim (the claim's statement, and whatever
  // the engine does after a session it counts as stale).
  absl::Duration frozen_claim_bound;
  // Whether the round trip after the claim's carries COMMIT (the claim's round trip also
  // locks the accounts, so the next is the write with COMMIT): a submit
  // frozen while holding its claim is then in doubt, not Unavailable.
  bool commit_follows_claim = false;
  // What an engine adds after a lost COMMIT answer to read the outcome back on a new
  // session, when the frozen server cannot be reached either (its connect_timeout).
  absl::Duration lost_commit_read_bound;

  // Once the server has started: connects what the hooks below need (an administrative
  // session). `detach` drops it before the server stops.
  std::function<absl::Status(const ThrowawayServer& server)> attach;
  std::function<void()> detach;
  // Empties the engine's database (no tables: the next open migrates); returns the URL
  // the engine opens it with.
  std::function<absl::StatusOr<std::string>()> recreate_database;
  // Opens the engine on `url` with the short waits above.
  std::function<absl::StatusOr<std::unique_ptr<Engine>>(const std::string& url)> open;
  // Runs `sql` on the administrative session; the first column of the first row.
  std::function<absl::StatusOr<std::string>(const std::string& sql)> admin_query;
  // The suite's tables as the administrative session names them ("db.transactions"),
  // and the idempotency key's column, quoted if the engine needs it.
  std::string table_prefix;
  std::string key_column;

  // Bytes of the client's login that name the user: the proxy freezes there.
  std::string user_in_login;
  // What a submit's fault says when the frozen server never answered (which bound cut
  // it off).
  std::string frozen_reply_fault;
  // Locks alice's row from a session of its own on `url`; the returned function
  // releases it.
  std::function<absl::StatusOr<std::function<void()>>(const std::string& url)> hold_account_lock;
  // What the retryable fault of a locked account says; empty: not checked.
  std::string account_lock_fault;
  // Makes every insert into outbox_events sleep far past the statement timeout, and
  // undoes it.
  std::function<absl::Status()> slow_down_outbox;
  std::function<absl::Status()> stop_slowing_outbox;
};

using PartitionContextFactory = PartitionContext (*)();

class PartitionTest : public ::testing::TestWithParam<PartitionContextFactory> {
 protected:
  static void TearDownTestSuite();
  void SetUp() override;
  void TearDown() override;

  static const PartitionContext& context() { return *context_; }
  static ThrowawayServer& server() { return *server_; }
  // The URL of the database, fresh for this test.
  const std::string& url() const { return url_; }
  // `url()` with the proxy's port instead of the server's.
  std::string ThroughProxy(int port) const;
  absl::StatusOr<std::string> AdminValue(const std::string& sql) const;

  static SubmitRequest TopUp(const std::string& key, Amount amount);
  // Exactly one transaction was ever committed under `key`, and alice holds it once.
  void ExpectCommittedOnce(const std::string& key, Amount amount);
  // A submit the frozen server answered with nothing: faulted within `bound`; then the
  // server thaws and resends of the key commit exactly once.
  void ExpectBoundedFaultThenOneCommit(const TimedOutcome& first, bool in_doubt,
                                       absl::Duration bound, const SubmitRequest& request);
  // An engine opened through a proxy that freezes the connection at one point
  // (`freeze`): the open returns within `bound`, Unavailable unless `may_succeed`, and
  // the point was reached. A fresh database when `fresh`, so the open applies the
  // migrations.
  void ExpectOpenEndsWithin(const std::function<void(FreezingProxy&)>& freeze,
                            absl::Duration bound, bool fresh = false, bool may_succeed = false);
  // The server freezes when the submit reaches `point`.
  void FreezeAt(FaultPoint point);

  std::shared_ptr<FaultInjectingEngine> faults_;
  std::unique_ptr<Ledger> ledger_;

 private:
  static PartitionContext* context_;
  static ThrowawayServer* server_;
  static absl::Status* start_failure_;  // set once a start was tried and failed
  std::string url_;
};

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_ENGINES_COMMON_PARTITION_SUITE_H_
