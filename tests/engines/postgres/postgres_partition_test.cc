// The partition suite (tests/engines/common/partition_suite.h) on PostgreSQL, and the
// cases only PostgreSQL has: libpq's host lists, its connect_timeout and keepalives,
// the open's migration steps (advisory lock) and a freeze inside COMMIT. The server's
// kernel also answers TCP keepalives while it is frozen. ctest labels: partition,
// postgres.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "base/status.h"
#include "engines/postgres/postgres_connection.h"
#include "engines/postgres/postgres_engine.h"
#include "pqxx/connection"
#include "pqxx/nontransaction"
#include "tests/engines/common/partition_suite.h"
#include "tests/support/freezing_proxy.h"
#include "tests/support/throwaway_server.h"
#include "tests/support/timed_submit.h"

namespace ledger::testing {
namespace {

constexpr absl::Duration kConnectTimeout = absl::Seconds(2);  // libpq's smallest
constexpr absl::Duration kAccountLockWait = absl::Milliseconds(500);
constexpr absl::Duration kStatementTimeout = absl::Seconds(1);
constexpr absl::Duration kReadTimeout = absl::Seconds(2);

// The server's URL, set once it started (the database is the server's own).
std::string* server_url = new std::string();

PostgresOptions Options(const std::string& url) {
  PostgresOptions options;
  options.connection = url;
  options.pool_size = 4;
  options.connect_timeout = kConnectTimeout;
  options.account_lock_wait = kAccountLockWait;
  options.statement_timeout = kStatementTimeout;
  options.read_timeout = kReadTimeout;
  return options;
}

// Runs `sql` on a session of its own, outside the engine.
absl::StatusOr<std::string> Admin(const std::string& sql) {
  try {
    pqxx::connection admin(*server_url);
    pqxx::nontransaction work(admin);
    pqxx::result rows = work.exec(sql);
    if (rows.empty() || rows[0].empty()) return std::string();
    return rows[0][0].c_str();
  } catch (const std::exception& e) {
    return absl::InternalError(e.what());
  }
}

absl::Status AdminStatus(const std::string& sql) { return Admin(sql).status(); }

PartitionContext PostgresPartitionContext() {
  PartitionContext context;
  context.server_name = "PostgreSQL";
  context.server_kind = ThrowawayServer::Kind::kPostgres;
  context.connect_timeout = kConnectTimeout;
  context.account_lock_wait = kAccountLockWait;
  context.statement_timeout = kStatementTimeout;
  context.read_timeout = kReadTimeout;
  context.frozen_claim_bound = kReadTimeout;
  context.commit_follows_claim = true;  // the accounts' lock rides with the claim
  // A lost COMMIT answer is read back on a new connection (ResolveInDoubtCommit).
  context.lost_commit_read_bound = kConnectTimeout;
  context.attach = [](const ThrowawayServer& server) {
    *server_url = server.url();
    return absl::OkStatus();
  };
  context.detach = [] { server_url->clear(); };
  context.recreate_database = []() -> absl::StatusOr<std::string> {
    LEDGER_RETURN_IF_ERROR(AdminStatus("DROP SCHEMA public CASCADE; CREATE SCHEMA public"));
    return *server_url;
  };
  context.open = [](const std::string& url) { return OpenPostgresEngine(Options(url)); };
  context.admin_query = &Admin;
  context.table_prefix = "";
  context.key_column = "key";
  // The startup message names the user.
  context.user_in_login = "user";
  // The engine's reply deadline.
  context.frozen_reply_fault = "no reply from the server within read_timeout";
  context.hold_account_lock =
      [](const std::string& url) -> absl::StatusOr<std::function<void()>> {
    try {
      auto holder = std::make_shared<pqxx::connection>(url);
      auto work = std::make_shared<pqxx::nontransaction>(*holder);
      work->exec("BEGIN; SELECT 1 FROM accounts WHERE id = 'alice' FOR UPDATE");
      return std::function<void()>([holder, work] { work->exec("ROLLBACK"); });
    } catch (const std::exception& e) {
      return absl::InternalError(e.what());
    }
  };
  context.account_lock_fault = "lock";
  context.slow_down_outbox = [] {
    return AdminStatus(R"sql(
    CREATE FUNCTION slow_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_sleep(30); RETURN NEW; END $$;
    CREATE TRIGGER slow_outbox BEFORE INSERT ON outbox_events
      FOR EACH ROW EXECUTE FUNCTION slow_insert())sql");
  };
  context.stop_slowing_outbox = [] {
    return AdminStatus("DROP TRIGGER slow_outbox ON outbox_events");
  };
  return context;
}

INSTANTIATE_TEST_SUITE_P(postgres, PartitionTest, ::testing::Values(&PostgresPartitionContext));

// libpq's connect_timeout counts per host (and per address): five frozen hosts would
// take five of it. The engine bounds the attempt as a whole.
TEST_P(PartitionTest, AConnectionAttemptOverManyHostsIsBoundedAsAWhole) {
  absl::StatusOr<std::unique_ptr<FreezingProxy>> proxy = FreezingProxy::Start(server().port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  (*proxy)->FreezeOnConnect();
  PostgresOptions options = Options(url());
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
  EXPECT_LT(elapsed, kConnectTimeout + kPartitionSlack) << "the attempt took one connect_timeout per host";
}

// Frozen before the server hears a statement, and after it ran it (its answer held).
TEST_P(PartitionTest, AnOpenFrozenWhileSettingUpTheSessionIsUnavailableWithinTheReadTimeout) {
  for (FreezingProxy::Trigger trigger :
       {FreezingProxy::Trigger::kWithheld, FreezingProxy::Trigger::kDelivered}) {
    ExpectOpenEndsWithin(
        [&](FreezingProxy& proxy) { proxy.FreezeWhenClientSends("SET lock_timeout", trigger); },
        kReadTimeout);
  }
}

TEST_P(PartitionTest, AnOpenFrozenAtTheMigrationLockIsUnavailableWithinTheReadTimeout) {
  for (FreezingProxy::Trigger trigger :
       {FreezingProxy::Trigger::kWithheld, FreezingProxy::Trigger::kDelivered}) {
    ExpectOpenEndsWithin(
        [&](FreezingProxy& proxy) { proxy.FreezeWhenClientSends("advisory_lock", trigger); },
        kReadTimeout);
  }
}

TEST_P(PartitionTest, AnOpenFrozenCreatingSchemaMigrationsIsUnavailableWithinTheReadTimeout) {
  ExpectOpenEndsWithin(
      [](FreezingProxy& proxy) { proxy.FreezeWhenClientSends("CREATE TABLE IF NOT EXISTS schema_migrations"); },
      kReadTimeout);
}

TEST_P(PartitionTest, AnOpenFrozenReadingSchemaMigrationsIsUnavailableWithinTheReadTimeout) {
  ExpectOpenEndsWithin(
      [](FreezingProxy& proxy) { proxy.FreezeWhenClientSends("SELECT version FROM schema_migrations"); },
      kReadTimeout);
}

TEST_P(PartitionTest, AnOpenFrozenApplyingAMigrationIsUnavailableWithinTheReadTimeout) {
  ExpectOpenEndsWithin(
      [](FreezingProxy& proxy) { proxy.FreezeWhenClientSends("INSERT INTO schema_migrations"); },
      kReadTimeout, /*fresh=*/true);
}

TEST_P(PartitionTest, AnOpenFrozenReleasingTheMigrationLockIsUnavailableWithinTheReadTimeout) {
  ExpectOpenEndsWithin(
      [](FreezingProxy& proxy) { proxy.FreezeWhenClientSends("pg_advisory_unlock"); }, kReadTimeout);
}

// Another migrator holding the lock past migration_lock_wait: a retryable Unavailable
// that says so, not a wait as long as the other one's.
TEST_P(PartitionTest, AMigrationLockHeldElsewhereIsUnavailableWithinTheMigrationLockWait) {
  pqxx::connection holder(server().url());
  pqxx::nontransaction work(holder);
  work.exec("SELECT pg_advisory_lock(hashtextextended('ledger.schema_migrations', 0))");
  PostgresOptions options = Options(url());
  options.connection = absl::StrCat(server().url(), "?migration_lock_wait=1s");
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<Engine>> engine = OpenPostgresEngine(options);
  const absl::Duration elapsed = absl::Now() - start;
  work.exec("SELECT pg_advisory_unlock(hashtextextended('ledger.schema_migrations', 0))");
  EXPECT_TRUE(absl::IsUnavailable(engine.status())) << engine.status();
  EXPECT_NE(engine.status().message().find("migration lock"), absl::string_view::npos)
      << engine.status();
  EXPECT_LT(elapsed, absl::Seconds(1) + kPartitionSlack);
  // Released: the next open migrates.
  EXPECT_TRUE(OpenPostgresEngine(Options(url())).ok());
}

// The write batch goes out with COMMIT's call, so the freeze has to come from the
// server itself: a deferred trigger, which runs inside COMMIT before the commit record
// is written, stops its own backend (SIGSTOP, from a COPY ... TO PROGRAM child that
// waits for the COPY to end first). The client has sent COMMIT and hears nothing.
TEST_P(PartitionTest, FrozenDuringCommitIsInDoubtInBoundAndTheResendCommitsOnce) {
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
  ASSERT_TRUE(server().Thaw().ok());
  ASSERT_TRUE(Admin("DROP TRIGGER freeze_at_commit ON outbox_events").ok());
  ExpectBoundedFaultThenOneCommit(first, /*in_doubt=*/true, kReadTimeout, request);
}

// The connect_timeout libpq gets is the one the engine's deadline uses, whoever gave it;
// libpq would read 0 as "wait forever", so it is refused.
TEST_P(PartitionTest, TheConnectTimeoutInTheUrlBoundsTheWholeAttempt) {
  PostgresOptions options = Options(url());
  options.connection = absl::StrCat(server().url(), "?connect_timeout=3");
  absl::StatusOr<postgres_internal::ParsedPostgresConnection> parsed =
      postgres_internal::ParsePostgresConnection(options);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->options.connect_timeout, absl::Seconds(3));
  options.connection = absl::StrCat(server().url(), "?connect_timeout=1");  // libpq: 2 s
  EXPECT_EQ(postgres_internal::ParsePostgresConnection(options)->options.connect_timeout,
            absl::Seconds(2));
  for (const char* value : {"0", "-1", "soon"}) {
    options.connection = absl::StrCat(server().url(), "?connect_timeout=", value);
    absl::StatusOr<std::unique_ptr<Engine>> engine = OpenPostgresEngine(options);
    EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument) << engine.status();
  }
  options.connection = "host=127.0.0.1 connect_timeout=0";
  EXPECT_EQ(OpenPostgresEngine(options).status().code(), absl::StatusCode::kInvalidArgument);
}

// What the engine hands libpq reaches the socket: keepalive probes and the user
// timeout are the kernel's, so they are checked there.
TEST_P(PartitionTest, KeepalivesAndTheUserTimeoutReachTheSocket) {
  PostgresOptions options = Options(url());
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
