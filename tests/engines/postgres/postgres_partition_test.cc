// Every wait of the PostgreSQL engine is bounded, on a server of this test's own
// (ThrowawayServer), frozen with SIGSTOP at each point of a submit: its kernel still
// accepts the client's bytes and answers TCP keepalives, so only the engine's own bounds
// can end the wait. Before COMMIT a frozen submit faults (Unavailable: nothing written);
// during COMMIT it is in doubt; either way it returns within its bound, and resending
// the same key after the server thaws commits exactly once. The waits are small here
// (a second or two) so the test stays quick. ctest label: partition.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "base/status.h"
#include "engines/postgres/postgres_connection.h"
#include "engines/postgres/postgres_engine.h"
#include "ledger/json.h"
#include "ledger/ledger.h"
#include "pqxx/connection"
#include "pqxx/nontransaction"
#include "tests/conformance/conformance_context.h"
#include "tests/support/fault_injecting_engine.h"
#include "tests/support/freezing_proxy.h"
#include "tests/support/open_ledger.h"
#include "tests/support/throwaway_server.h"
#include "tests/support/timed_submit.h"

namespace ledger::testing {
namespace {

constexpr char kAsset[] = "CREDITS";
constexpr absl::Duration kConnectTimeout = absl::Seconds(2);  // libpq's smallest
constexpr absl::Duration kAccountLockWait = absl::Milliseconds(500);
constexpr absl::Duration kStatementTimeout = absl::Seconds(1);
constexpr absl::Duration kReadTimeout = absl::Seconds(2);
// How much later than its bound a call may come back on a busy test machine and still
// count as bounded; a wait that is not bounded hangs until the server thaws.
constexpr absl::Duration kSlack = absl::Seconds(4);
constexpr int kResendsMax = 10;

class PostgresPartitionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::unique_ptr<ThrowawayServer>> started =
        ThrowawayServer::Start(ThrowawayServer::Kind::kPostgres);
    if (started.ok()) {
      server_ = started->release();
    } else {
      *start_failure_ = started.status();
    }
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  void SetUp() override {
    if (server_ == nullptr) {
      if (RunningInCi()) GTEST_FAIL() << "no PostgreSQL server of the test's own: " << *start_failure_;
      GTEST_SKIP() << "no PostgreSQL server of the test's own: " << *start_failure_;
    }
    ASSERT_TRUE(Admin("DROP SCHEMA public CASCADE; CREATE SCHEMA public").ok());
    absl::StatusOr<std::unique_ptr<Engine>> engine = OpenPostgresEngine(Options());
    ASSERT_TRUE(engine.ok()) << engine.status();
    faults_ = std::make_shared<FaultInjectingEngine>(std::shared_ptr<Engine>(std::move(*engine)));
    // Two attempts: a retryable lock wait is retried once, so its bound stays small.
    ledger_ = std::make_unique<Ledger>(OpenTestLedger(faults_, {.attempts_max = 2}));
    ASSERT_TRUE(ledger_->DefineAsset({kAsset, 0}).ok());
    ASSERT_TRUE(
        ledger_->OpenAccount({.id = "issuance", .asset = kAsset, .allow_negative = true}).ok());
    ASSERT_TRUE(ledger_->OpenAccount({.id = "alice", .asset = kAsset}).ok());
  }

  void TearDown() override {
    if (server_ != nullptr) {
      EXPECT_TRUE(server_->Thaw().ok());  // whatever the test did
    }
    if (faults_ != nullptr) faults_->Clear();
  }

  static PostgresOptions Options() {
    PostgresOptions options;
    options.connection = server_->url();
    options.pool_size = 4;
    options.connect_timeout = kConnectTimeout;
    options.account_lock_wait = kAccountLockWait;
    options.statement_timeout = kStatementTimeout;
    options.read_timeout = kReadTimeout;
    return options;
  }

  // Runs `sql` on a session of its own, outside the engine.
  static absl::StatusOr<std::string> Admin(const std::string& sql) {
    try {
      pqxx::connection admin(server_->url());
      pqxx::nontransaction work(admin);
      pqxx::result rows = work.exec(sql);
      if (rows.empty() || rows[0].empty()) return std::string();
      return rows[0][0].c_str();
    } catch (const std::exception& e) {
      return absl::InternalError(e.what());
    }
  }

  static SubmitRequest TopUp(const std::string& key, Amount amount) {
    return SubmitRequest{key, {}, Operation::TopUp("issuance", "alice", kAsset, amount), {}};
  }

  // Exactly one transaction was ever committed under `key`, and alice holds it once.
  void ExpectCommittedOnce(const std::string& key, Amount amount) {
    EXPECT_EQ(Admin(absl::StrCat("SELECT count(*) FROM idempotency_keys WHERE key = '", key,
                                 "' AND state = 'committed'"))
                  .value_or("the query failed"),
              "1");
    EXPECT_EQ(Admin("SELECT count(*) FROM transactions").value_or("the query failed"), "1");
    absl::StatusOr<Account> alice = ledger_->GetAccount("alice");
    ASSERT_TRUE(alice.ok()) << alice.status();
    EXPECT_EQ(alice->balance, amount);
  }

  // A submit the frozen server answered with nothing: faulted within `bound`; then the
  // server thaws and resends of the key commit exactly once.
  void ExpectBoundedFaultThenOneCommit(const TimedOutcome& first, bool in_doubt,
                                       absl::Duration bound, const SubmitRequest& request) {
    ASSERT_TRUE(first.outcome.ok()) << first.outcome.status();
    EXPECT_EQ(first.outcome->kind, OutcomeKind::kFaulted) << OutcomeToJson(*first.outcome).dump();
    EXPECT_EQ(first.outcome->in_doubt, in_doubt) << first.outcome->fault;
    if (!in_doubt) {
      EXPECT_TRUE(absl::IsUnavailable(first.outcome->fault)) << first.outcome->fault;
    }
    EXPECT_LT(first.elapsed, bound + kSlack) << "the submit waited on the frozen server";
    // The engine's reply deadline cut it off, not some other failure.
    EXPECT_NE(first.outcome->fault.message().find("no reply from the server within read_timeout"), absl::string_view::npos)
        << first.outcome->fault;
    RecordProperty("frozen_submit_ms", absl::ToInt64Milliseconds(first.elapsed));
    ASSERT_TRUE(server_->Thaw().ok());
    faults_->Clear();
    absl::StatusOr<Outcome> resent = ResendUntilDefinite(*ledger_, request, kResendsMax);
    ASSERT_TRUE(resent.ok()) << resent.status();
    EXPECT_TRUE(resent->ok()) << OutcomeToJson(*resent).dump();
    // Once more: whatever happened before, the key now replays.
    absl::StatusOr<Outcome> again = ledger_->Submit(request);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->kind, OutcomeKind::kDuplicate);
    ExpectCommittedOnce(request.key, 100);
  }

  // An engine opened through a proxy that freezes the connection at one point
  // (`freeze`): the open fails Unavailable within `bound`, and the point was reached.
  // A fresh schema when `fresh`, so the open applies the migrations.
  void ExpectOpenFailsWithin(const std::function<void(FreezingProxy&)>& freeze,
                             absl::Duration bound, bool fresh = false) {
    if (fresh) {
      ASSERT_TRUE(Admin("DROP SCHEMA public CASCADE; CREATE SCHEMA public").ok());
    }
    absl::StatusOr<std::unique_ptr<FreezingProxy>> proxy = FreezingProxy::Start(server_->port());
    ASSERT_TRUE(proxy.ok()) << proxy.status();
    freeze(**proxy);
    PostgresOptions options = Options();
    options.connection = ThroughProxy((*proxy)->port());
    const absl::Time start = absl::Now();
    absl::StatusOr<std::unique_ptr<Engine>> engine = OpenPostgresEngine(options);
    const absl::Duration elapsed = absl::Now() - start;
    EXPECT_EQ((*proxy)->frozen(), 1) << "the open never reached the freeze point";
    EXPECT_TRUE(absl::IsUnavailable(engine.status())) << engine.status();
    EXPECT_LT(elapsed, bound + kSlack) << "the open waited on the frozen connection";
    RecordProperty("frozen_open_ms", absl::ToInt64Milliseconds(elapsed));
  }

  // The server's URL with the proxy's port.
  static std::string ThroughProxy(int port) {
    return absl::StrReplaceAll(server_->url(), {{absl::StrCat(":", server_->port(), "/"),
                                                 absl::StrCat(":", port, "/")}});
  }

  void FreezeAt(FaultPoint point) {
    faults_->SetHook(point, [] { ASSERT_TRUE(server_->Freeze().ok()); });
  }

  static ThrowawayServer* server_;
  static absl::Status* start_failure_;
  std::shared_ptr<FaultInjectingEngine> faults_;
  std::unique_ptr<Ledger> ledger_;
};

ThrowawayServer* PostgresPartitionTest::server_ = nullptr;
absl::Status* PostgresPartitionTest::start_failure_ = new absl::Status();

TEST_F(PostgresPartitionTest, ConnectingToAFrozenServerIsUnavailableWithinTheConnectTimeout) {
  ASSERT_TRUE(server_->Freeze().ok());
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<Engine>> engine = OpenPostgresEngine(Options());
  const absl::Duration elapsed = absl::Now() - start;
  ASSERT_TRUE(server_->Thaw().ok());
  EXPECT_TRUE(absl::IsUnavailable(engine.status())) << engine.status();
  EXPECT_LT(elapsed, kConnectTimeout + kSlack);
}

// Every round trip of an open is bounded: the connection itself (connect_timeout, as a
// whole), the session's setup and each step of the migrations (read_timeout).
TEST_F(PostgresPartitionTest, AnOpenFrozenWhileConnectingIsUnavailableWithinTheConnectTimeout) {
  ExpectOpenFailsWithin([](FreezingProxy& proxy) { proxy.FreezeOnConnect(); }, kConnectTimeout);
}

TEST_F(PostgresPartitionTest, AnOpenFrozenDuringAuthenticationIsUnavailableWithinTheConnectTimeout) {
  // The startup message names the user: frozen before the server hears it.
  ExpectOpenFailsWithin([](FreezingProxy& proxy) { proxy.FreezeWhenClientSends("user"); },
                        kConnectTimeout);
}

// libpq's connect_timeout counts per host (and per address): five frozen hosts would
// take five of it. The engine bounds the attempt as a whole.
TEST_F(PostgresPartitionTest, AConnectionAttemptOverManyHostsIsBoundedAsAWhole) {
  absl::StatusOr<std::unique_ptr<FreezingProxy>> proxy = FreezingProxy::Start(server_->port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  (*proxy)->FreezeOnConnect();
  PostgresOptions options = Options();
  const std::string port = absl::StrCat((*proxy)->port());
  options.connection = absl::StrCat(
      "host=", absl::StrJoin(std::vector<std::string>(5, "127.0.0.1"), ","),
      " port=", absl::StrJoin(std::vector<std::string>(5, port), ","),
      " user=postgres dbname=ledger_test");
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<Engine>> engine = OpenPostgresEngine(options);
  const absl::Duration elapsed = absl::Now() - start;
  EXPECT_GE((*proxy)->frozen(), 1);
  EXPECT_TRUE(absl::IsUnavailable(engine.status())) << engine.status();
  EXPECT_LT(elapsed, kConnectTimeout + kSlack) << "the attempt took one connect_timeout per host";
}

// Frozen before the server hears a statement, and after it ran it (its answer held).
TEST_F(PostgresPartitionTest, AnOpenFrozenWhileSettingUpTheSessionIsUnavailableWithinTheReadTimeout) {
  for (FreezingProxy::Trigger trigger :
       {FreezingProxy::Trigger::kWithheld, FreezingProxy::Trigger::kDelivered}) {
    ExpectOpenFailsWithin(
        [&](FreezingProxy& proxy) { proxy.FreezeWhenClientSends("SET lock_timeout", trigger); },
        kReadTimeout);
  }
}

TEST_F(PostgresPartitionTest, AnOpenFrozenAtTheMigrationLockIsUnavailableWithinTheReadTimeout) {
  for (FreezingProxy::Trigger trigger :
       {FreezingProxy::Trigger::kWithheld, FreezingProxy::Trigger::kDelivered}) {
    ExpectOpenFailsWithin(
        [&](FreezingProxy& proxy) { proxy.FreezeWhenClientSends("advisory_lock", trigger); },
        kReadTimeout);
  }
}

TEST_F(PostgresPartitionTest, AnOpenFrozenCreatingSchemaMigrationsIsUnavailableWithinTheReadTimeout) {
  ExpectOpenFailsWithin(
      [](FreezingProxy& proxy) { proxy.FreezeWhenClientSends("CREATE TABLE IF NOT EXISTS schema_migrations"); },
      kReadTimeout);
}

TEST_F(PostgresPartitionTest, AnOpenFrozenReadingSchemaMigrationsIsUnavailableWithinTheReadTimeout) {
  ExpectOpenFailsWithin(
      [](FreezingProxy& proxy) { proxy.FreezeWhenClientSends("SELECT version FROM schema_migrations"); },
      kReadTimeout);
}

TEST_F(PostgresPartitionTest, AnOpenFrozenApplyingAMigrationIsUnavailableWithinTheReadTimeout) {
  ExpectOpenFailsWithin(
      [](FreezingProxy& proxy) { proxy.FreezeWhenClientSends("INSERT INTO schema_migrations"); },
      kReadTimeout, /*fresh=*/true);
}

TEST_F(PostgresPartitionTest, AnOpenFrozenReleasingTheMigrationLockIsUnavailableWithinTheReadTimeout) {
  ExpectOpenFailsWithin(
      [](FreezingProxy& proxy) { proxy.FreezeWhenClientSends("pg_advisory_unlock"); }, kReadTimeout);
}

// Another migrator holding the lock past migration_lock_wait: a retryable Unavailable
// that says so, not a wait as long as the other one's.
TEST_F(PostgresPartitionTest, AMigrationLockHeldElsewhereIsUnavailableWithinTheMigrationLockWait) {
  pqxx::connection holder(server_->url());
  pqxx::nontransaction work(holder);
  work.exec("SELECT pg_advisory_lock(hashtextextended('ledger.schema_migrations', 0))");
  PostgresOptions options = Options();
  options.connection = absl::StrCat(server_->url(), "?migration_lock_wait=1s");
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<Engine>> engine = OpenPostgresEngine(options);
  const absl::Duration elapsed = absl::Now() - start;
  work.exec("SELECT pg_advisory_unlock(hashtextextended('ledger.schema_migrations', 0))");
  EXPECT_TRUE(absl::IsUnavailable(engine.status())) << engine.status();
  EXPECT_NE(engine.status().message().find("migration lock"), absl::string_view::npos)
      << engine.status();
  EXPECT_LT(elapsed, absl::Seconds(1) + kSlack);
  // Released: the next open migrates.
  EXPECT_TRUE(OpenPostgresEngine(Options()).ok());
}

TEST_F(PostgresPartitionTest, FrozenBeforeTheClaimFaultsInBoundAndTheResendCommitsOnce) {
  FreezeAt(FaultPoint::kClaim);
  const SubmitRequest request = TopUp("frozen-before-claim", 100);
  ExpectBoundedFaultThenOneCommit(SubmitTimed(*ledger_, request), /*in_doubt=*/false,
                                  kReadTimeout, request);
}

TEST_F(PostgresPartitionTest, FrozenWhileHoldingTheClaimFaultsInBoundAndTheResendCommitsOnce) {
  FreezeAt(FaultPoint::kAfterClaim);
  const SubmitRequest request = TopUp("frozen-holding-claim", 100);
  ExpectBoundedFaultThenOneCommit(SubmitTimed(*ledger_, request), /*in_doubt=*/false,
                                  kReadTimeout, request);
}

// The write batch goes out with COMMIT's call, so the freeze has to come from the
// server itself: a deferred trigger, which runs inside COMMIT before the commit record
// is written, stops its own backend (SIGSTOP, from a COPY ... TO PROGRAM child that
// waits for the COPY to end first). The client has sent COMMIT and hears nothing.
TEST_F(PostgresPartitionTest, FrozenDuringCommitIsInDoubtInBoundAndTheResendCommitsOnce) {
  ASSERT_TRUE(Admin(R"sql(
    CREATE FUNCTION freeze_own_backend() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      EXECUTE format('COPY (SELECT 1) TO PROGRAM %L',
                     'cat >/dev/null; kill -STOP ' || pg_backend_pid());
      RETURN NULL;
    END $$;
    CREATE CONSTRAINT TRIGGER freeze_at_commit AFTER INSERT ON outbox_events
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION freeze_own_backend())sql")
                  .ok());
  const SubmitRequest request = TopUp("frozen-during-commit", 100);
  TimedOutcome first = SubmitTimed(*ledger_, request);
  ASSERT_TRUE(server_->Thaw().ok());
  ASSERT_TRUE(Admin("DROP TRIGGER freeze_at_commit ON outbox_events").ok());
  ExpectBoundedFaultThenOneCommit(first, /*in_doubt=*/true, kReadTimeout, request);
}

TEST_F(PostgresPartitionTest, AnAccountLockHeldElsewhereIsRetryableWithinTheAccountLockWait) {
  pqxx::connection holder(server_->url());
  pqxx::nontransaction work(holder);
  work.exec("BEGIN; SELECT 1 FROM accounts WHERE id = 'alice' FOR UPDATE");
  const SubmitRequest request = TopUp("account-locked", 100);
  TimedOutcome first = SubmitTimed(*ledger_, request);
  work.exec("ROLLBACK");
  ASSERT_TRUE(first.outcome.ok()) << first.outcome.status();
  ASSERT_EQ(first.outcome->kind, OutcomeKind::kFaulted) << OutcomeToJson(*first.outcome).dump();
  EXPECT_TRUE(IsRetryable(first.outcome->fault)) << first.outcome->fault;
  EXPECT_NE(first.outcome->fault.message().find("lock"), absl::string_view::npos);
  EXPECT_LT(first.elapsed, 2 * kAccountLockWait + kSlack);  // two attempts
  absl::StatusOr<Outcome> resent = ledger_->Submit(request);
  ASSERT_TRUE(resent.ok()) << resent.status();
  EXPECT_EQ(resent->kind, OutcomeKind::kCommitted);
}

// The server's own bound, not the client's: DeadlineExceeded (57014), and the
// connection survives (the next submit on the pool commits).
TEST_F(PostgresPartitionTest, AStatementLongerThanTheStatementTimeoutIsCutByTheServer) {
  ASSERT_TRUE(Admin(R"sql(
    CREATE FUNCTION slow_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_sleep(30); RETURN NEW; END $$;
    CREATE TRIGGER slow_outbox BEFORE INSERT ON outbox_events
      FOR EACH ROW EXECUTE FUNCTION slow_insert())sql")
                  .ok());
  const SubmitRequest request = TopUp("slow-statement", 100);
  TimedOutcome first = SubmitTimed(*ledger_, request);
  ASSERT_TRUE(Admin("DROP TRIGGER slow_outbox ON outbox_events").ok());
  ASSERT_TRUE(first.outcome.ok()) << first.outcome.status();
  ASSERT_EQ(first.outcome->kind, OutcomeKind::kFaulted) << OutcomeToJson(*first.outcome).dump();
  EXPECT_TRUE(absl::IsDeadlineExceeded(first.outcome->fault)) << first.outcome->fault;
  EXPECT_FALSE(first.outcome->in_doubt);
  EXPECT_LT(first.elapsed, kStatementTimeout + kSlack);
  absl::StatusOr<Outcome> resent = ledger_->Submit(request);
  ASSERT_TRUE(resent.ok()) << resent.status();
  EXPECT_EQ(resent->kind, OutcomeKind::kCommitted);
  ExpectCommittedOnce(request.key, 100);
}

// The connect_timeout libpq gets is the one the engine's deadline uses, whoever gave it;
// libpq would read 0 as "wait forever", so it is refused.
TEST_F(PostgresPartitionTest, TheConnectTimeoutInTheUrlBoundsTheWholeAttempt) {
  PostgresOptions options = Options();
  options.connection = absl::StrCat(server_->url(), "?connect_timeout=3");
  absl::StatusOr<postgres_internal::ParsedPostgresConnection> parsed =
      postgres_internal::ParsePostgresConnection(options);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->options.connect_timeout, absl::Seconds(3));
  options.connection = absl::StrCat(server_->url(), "?connect_timeout=1");  // libpq: 2 s
  EXPECT_EQ(postgres_internal::ParsePostgresConnection(options)->options.connect_timeout,
            absl::Seconds(2));
  for (const char* value : {"0", "-1", "soon"}) {
    options.connection = absl::StrCat(server_->url(), "?connect_timeout=", value);
    absl::StatusOr<std::unique_ptr<Engine>> engine = OpenPostgresEngine(options);
    EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument) << engine.status();
  }
  options.connection = "host=127.0.0.1 connect_timeout=0";
  EXPECT_EQ(OpenPostgresEngine(options).status().code(), absl::StatusCode::kInvalidArgument);
}

// What the engine hands libpq reaches the socket: keepalive probes and the user
// timeout are the kernel's, so they are checked there.
TEST_F(PostgresPartitionTest, KeepalivesAndTheUserTimeoutReachTheSocket) {
  PostgresOptions options = Options();
  options.keepalives_idle = absl::Seconds(7);
  options.keepalives_interval = absl::Seconds(3);
  options.keepalives_count = 4;
  options.tcp_user_timeout = absl::Milliseconds(2500);
  absl::StatusOr<postgres_internal::ParsedPostgresConnection> parsed =
      postgres_internal::ParsePostgresConnection(options);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  pqxx::connection connection(parsed->connection);
  auto option = [&](int level, int name) {
    int value = -1;
    socklen_t size = sizeof(value);
    EXPECT_EQ(getsockopt(connection.sock(), level, name, &value, &size), 0);
    return value;
  };
  EXPECT_EQ(option(SOL_SOCKET, SO_KEEPALIVE), 1);
  EXPECT_EQ(option(IPPROTO_TCP, TCP_KEEPIDLE), 7);
  EXPECT_EQ(option(IPPROTO_TCP, TCP_KEEPINTVL), 3);
  EXPECT_EQ(option(IPPROTO_TCP, TCP_KEEPCNT), 4);
  EXPECT_EQ(option(IPPROTO_TCP, TCP_USER_TIMEOUT), 2500);
}

}  // namespace
}  // namespace ledger::testing
