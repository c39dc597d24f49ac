// PostgreSQL failover under Patroni (scripts/cluster-servers.sh start-patroni: two nodes,
// synchronous_mode, Raft DCS with a witness): 16 clients submit through the multi-host
// URL (target_session_attrs=read-write) while the primary is SIGKILLed (Patroni and its
// postmaster), and again while it is frozen (SIGSTOP) until the standby is promoted.
// Every call ends within kCallBound as committed, duplicate, rejected, unavailable, in
// doubt or in progress; afterwards every key is resent and commits exactly once, every
// acknowledged transaction is on the new primary, verify is OK, and the old primary
// comes back as a standby (read-only: it takes no write that would fork the ledger).
// ctest labels: cluster, postgres. The cluster starts once for the executable; without
// it the tests skip, except under CI=true, where that is a failure.
#include <signal.h>

#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "engines/common/database_url.h"
#include "engines/postgres/postgres_connection_pool.h"
#include "engines/postgres/postgres_engine.h"
#include "ledger/ledger.h"
#include "pqxx/connection"
#include "pqxx/nontransaction"
#include "tests/cluster/cluster_servers.h"
#include "tests/cluster/cluster_workload.h"
#include "tests/conformance/conformance_context.h"
#include "tests/support/freezing_proxy.h"
#include "tests/support/open_ledger.h"

namespace ledger::testing {
namespace {

using postgres_internal::ConnectionStringPerHost;

// The engine's waits for these tests: short, so that a call on a dead or frozen node
// gives up soon. The bound of one submit is what these add up to on its worst path: a
// pool lease (kPoolAcquireWait), a new session (kConnectTimeout, shared among the hosts),
// then at most four round trips (session setup, claim, writes, COMMIT), each cut off at
// kReadTimeout; docs/scaling.md gives the same sum.
constexpr absl::Duration kConnectTimeout = absl::Seconds(2);
constexpr absl::Duration kAccountLockWait = absl::Seconds(1);
constexpr absl::Duration kStatementTimeout = absl::Seconds(2);
constexpr absl::Duration kReadTimeout = absl::Seconds(3);
constexpr absl::Duration kPoolAcquireWait = absl::Seconds(5);
const absl::Duration kCallBound = kPoolAcquireWait + kConnectTimeout + 4 * kReadTimeout;
// A busy 2-core machine may come back a little after a bound.
constexpr absl::Duration kSlack = absl::Seconds(4);
// Patroni's ttl is 8 s and its loop 1 s (cluster-servers.sh): a promotion well within.
constexpr absl::Duration kPromotionWait = absl::Seconds(60);
constexpr absl::Duration kRejoinWait = absl::Seconds(120);
constexpr int kClients = 16;

ClusterServers* cluster = nullptr;

std::string NodeUrl(const std::string& node) {
  return cluster->Exported(node == "pg1" ? "LEDGER_TEST_PATRONI_PG1_DSN" : "LEDGER_TEST_PATRONI_PG2_DSN");
}

std::string Other(const std::string& node) { return node == "pg1" ? "pg2" : "pg1"; }

// The answer of `sql` on `node` (first column of the first row), or an error.
absl::StatusOr<std::string> NodeSql(const std::string& node, const std::string& sql) {
  try {
    pqxx::connection connection(NodeUrl(node) + "?connect_timeout=2");
    pqxx::nontransaction work(connection);
    work.exec("SET statement_timeout = '3s'");
    pqxx::result rows = work.exec(sql);
    if (rows.empty() || rows[0].empty() || rows[0][0].is_null()) return std::string();
    return std::string(rows[0][0].c_str());
  } catch (const std::exception& e) {
    return absl::UnavailableError(e.what());
  }
}

bool IsPrimary(const std::string& node) {
  absl::StatusOr<std::string> answer = NodeSql(node, "SELECT pg_is_in_recovery()");
  return answer.ok() && *answer == "f";
}

bool IsStandby(const std::string& node) {
  absl::StatusOr<std::string> answer = NodeSql(node, "SELECT pg_is_in_recovery()");
  return answer.ok() && *answer == "t";
}

// The state each test starts from: a leader whose standby Patroni counts as synchronous
// (only then would Patroni promote it when the leader is lost).
absl::StatusOr<std::string> WaitForHealthyPrimary() {
  absl::StatusOr<std::string> leader = absl::UnavailableError("not asked yet");
  if (!WaitUntil(
          [&] {
            leader = cluster->PatroniLeader();
            return leader.ok();
          },
          kRejoinWait)) {
    return absl::DeadlineExceededError(
        absl::StrCat("no Patroni leader with a synchronous standby: ", leader.status().ToString()));
  }
  return leader;
}

PostgresOptions ClusterOptions(const std::string& url) {
  PostgresOptions options;
  options.connection = url;
  options.pool_size = kClients;
  options.pool_acquire_wait = kPoolAcquireWait;
  options.connect_timeout = kConnectTimeout;
  options.account_lock_wait = kAccountLockWait;
  options.statement_timeout = kStatementTimeout;
  options.read_timeout = kReadTimeout;
  options.tcp_user_timeout = kReadTimeout;
  return options;
}

std::shared_ptr<Engine> OpenClusterEngine(const std::string& url) {
  absl::StatusOr<std::unique_ptr<Engine>> engine = OpenPostgresEngine(ClusterOptions(url));
  if (!engine.ok()) {
    ADD_FAILURE() << "open " << url << ": " << engine.status();
    return nullptr;
  }
  return std::shared_ptr<Engine>(std::move(*engine));
}

class PostgresFailoverTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::unique_ptr<ClusterServers>> started =
        ClusterServers::Start(ClusterServers::Kind::kPatroni);
    if (started.ok()) {
      cluster = started->release();
    } else {
      start_failure_ = new std::string(started.status().ToString());
    }
  }
  static void TearDownTestSuite() {
    delete cluster;
    cluster = nullptr;
  }
  void SetUp() override {
    if (cluster == nullptr) {
      if (RunningInCi()) GTEST_FAIL() << "the Patroni cluster did not start: " << *start_failure_;
      GTEST_SKIP() << "the Patroni cluster did not start: " << *start_failure_;
    }
  }

  // Runs the load over the multi-host URL, does `disrupt` to the primary once the load
  // runs, and checks everything the file's comment promises. `disrupt` returns once the
  // standby is promoted (or fails the test).
  using Disruption = std::function<void(const std::string& primary, const ClusterWorkload& load,
                                        absl::Time disrupted)>;
  void RunFailover(const std::string& prefix, const Disruption& disrupt) {
    absl::StatusOr<std::string> primary = WaitForHealthyPrimary();
    ASSERT_TRUE(primary.ok()) << primary.status();
    std::shared_ptr<Engine> engine = OpenClusterEngine(cluster->Exported("LEDGER_TEST_PATRONI_DSN"));
    ASSERT_NE(engine, nullptr);
    Ledger ledger = OpenTestLedger(engine);
    ClusterWorkload load({.prefix = prefix, .clients = kClients},
                         [&](int) -> Ledger& { return ledger; });
    ASSERT_TRUE(load.Prepare(ledger).ok());
    load.Start();
    absl::SleepFor(absl::Seconds(2));
    const absl::Time disrupted = absl::Now();
    disrupt(*primary, load, disrupted);
    const std::string promoted = Other(*primary);
    // The load goes on until the new primary has taken commits for a while.
    WaitUntil([&] { return load.FirstCommitStartedAfter(disrupted) != absl::InfiniteFuture(); },
              kPromotionWait);
    absl::SleepFor(absl::Seconds(2));
    load.Stop();
    const absl::Time first_commit = load.FirstCommitStartedAfter(disrupted);
    ASSERT_NE(first_commit, absl::InfiniteFuture()) << "nothing committed after the failover";
    std::cout << "[ failover ] " << prefix << ": first commit on " << promoted << " "
              << absl::FormatDuration(first_commit - disrupted) << " after the primary was lost\n";
    for (const auto& [end, count] : load.Ends()) std::cout << "  " << end << ": " << count << "\n";
    load.ExpectEveryCallEndedWithin(kCallBound + kSlack);

    // The old primary comes back as a standby of the promoted node, read-only.
    ASSERT_TRUE(cluster->StartNode(*primary).ok());
    ASSERT_TRUE(WaitUntil(
        [&] {
          absl::StatusOr<std::string> leader = cluster->PatroniLeader();
          return leader.ok() && *leader == promoted && IsStandby(*primary);
        },
        kRejoinWait))
        << *primary << " did not rejoin as the synchronous standby of " << promoted << ":\n"
        << LogTail(absl::StrCat(cluster->directory(), "/", *primary, "/patroni.log"), 40);
    absl::StatusOr<std::string> forked = NodeSql(
        *primary, absl::StrCat("INSERT INTO assets (code, scale) VALUES ('FORK', 0) RETURNING code"));
    EXPECT_FALSE(forked.ok()) << *primary << " took a write after the failover";

    load.ResendEveryKey(ledger, kRejoinWait);
    // Exactly once, and every acknowledged transaction, read on the new primary alone.
    std::shared_ptr<Engine> promoted_engine = OpenClusterEngine(NodeUrl(promoted));
    ASSERT_NE(promoted_engine, nullptr);
    Ledger on_promoted = OpenTestLedger(promoted_engine);
    load.ExpectExactlyOnce(on_promoted);
    absl::StatusOr<VerifyReport> report = on_promoted.Verify();
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_TRUE(report->ok()) << report->ToText();
    // The rejoined standby holds the promoted node's ledger (once it replayed it all).
    EXPECT_TRUE(WaitUntil(
        [&] {
          absl::StatusOr<std::string> there = NodeSql(promoted, "SELECT count(*) FROM transactions");
          absl::StatusOr<std::string> here = NodeSql(*primary, "SELECT count(*) FROM transactions");
          return there.ok() && here.ok() && *there == *here;
        },
        absl::Seconds(30)))
        << "the rejoined " << *primary << " does not hold the ledger of " << promoted;
  }

  static std::string* start_failure_;
};

std::string* PostgresFailoverTest::start_failure_ = nullptr;

bool WaitForPromotion(const std::string& old_primary) {
  return WaitUntil([&] { return IsPrimary(Other(old_primary)); }, kPromotionWait);
}

TEST(PostgresHostListTest, AHostListIsSplitIntoOneConnectionStringPerHost) {
  std::vector<std::string> per_host = ConnectionStringPerHost(
      "postgresql://app:s3cr3t@10.0.0.1:5433,10.0.0.2:5434/books?target_session_attrs=read-write");
  ASSERT_EQ(per_host.size(), 2u);
  EXPECT_NE(per_host[0].find("host='10.0.0.1'"), std::string::npos) << per_host[0];
  EXPECT_NE(per_host[0].find("port='5433'"), std::string::npos) << per_host[0];
  EXPECT_NE(per_host[1].find("host='10.0.0.2'"), std::string::npos) << per_host[1];
  EXPECT_NE(per_host[1].find("port='5434'"), std::string::npos) << per_host[1];
  for (const std::string& one : per_host) {
    EXPECT_NE(one.find("dbname='books'"), std::string::npos) << one;
    EXPECT_NE(one.find("target_session_attrs='read-write'"), std::string::npos) << one;
    EXPECT_NE(one.find("password='s3cr3t'"), std::string::npos) << one;
  }
  // key=value, one port for every host; a quote in a value stays quoted.
  per_host = ConnectionStringPerHost("host=a,b port=5432 user=o\\'neil dbname=x");
  ASSERT_EQ(per_host.size(), 2u);
  EXPECT_NE(per_host[1].find("host='b'"), std::string::npos) << per_host[1];
  EXPECT_NE(per_host[1].find("port='5432'"), std::string::npos) << per_host[1];
  EXPECT_NE(per_host[1].find("user='o\\'neil'"), std::string::npos) << per_host[1];
  // One host, or lists libpq refuses: the string as given.
  EXPECT_EQ(ConnectionStringPerHost("host=a port=1"), std::vector<std::string>{"host=a port=1"});
  EXPECT_EQ(ConnectionStringPerHost("host=a,b,c port=1,2"),
            std::vector<std::string>{"host=a,b,c port=1,2"});
}

// A host list whose first host accepts the connection and then never answers (a frozen
// old primary) still reaches the second within connect_timeout: each host gets its
// share of the attempt's bound instead of the first one taking all of it.
TEST_F(PostgresFailoverTest, AFrozenFirstHostLeavesTheNextHostItsShareOfTheConnectTimeout) {
  absl::StatusOr<std::string> primary = WaitForHealthyPrimary();
  ASSERT_TRUE(primary.ok()) << primary.status();
  const std::string port = cluster->Exported(absl::StrCat(
      "LEDGER_TEST_PATRONI_", *primary == "pg1" ? "PG1" : "PG2", "_DSN"));
  const std::string primary_port = port.substr(port.rfind(':') + 1, port.rfind('/') - port.rfind(':') - 1);
  int server_port = 0;
  ASSERT_TRUE(absl::SimpleAtoi(primary_port, &server_port)) << port;
  absl::StatusOr<std::unique_ptr<FreezingProxy>> proxy = FreezingProxy::Start(server_port);
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  (*proxy)->FreezeOnConnect();
  PostgresOptions options = ClusterOptions(absl::StrCat(
      "postgresql://postgres@127.0.0.1:", (*proxy)->port(), ",127.0.0.1:", server_port,
      "/ledger_test?target_session_attrs=read-write"));
  options.pool_size = 2;
  absl::StatusOr<std::unique_ptr<Engine>> engine = OpenPostgresEngine(options);
  EXPECT_GE((*proxy)->frozen(), 1) << "the first host was not tried";
  EXPECT_TRUE(engine.ok()) << "the second host was not reached: " << engine.status();
}

// The URL form the ledger is given for a Patroni pair: parsed, its password hidden like
// any other URL's, and every engine parameter still read.
TEST(PostgresHostListTest, AMultiHostUrlIsParsedAndItsPasswordHidden) {
  const std::string url =
      "postgresql://app:s3cr3t@10.0.0.1:5433,10.0.0.2:5434/books"
      "?target_session_attrs=read-write&connect_timeout=2&read_timeout=3s";
  absl::StatusOr<DatabaseUrl> parsed = ParseDatabaseUrl(url);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->base, "postgresql://app:s3cr3t@10.0.0.1:5433,10.0.0.2:5434/books");
  EXPECT_EQ(parsed->Parameter("target_session_attrs", ""), "read-write");
  EXPECT_EQ(RedactDatabaseUrl(url),
            "postgresql://app:***@10.0.0.1:5433,10.0.0.2:5434/books"
            "?target_session_attrs=read-write&connect_timeout=2&read_timeout=3s");
  // A raw '@' in the password is refused as everywhere (the driver would print the rest).
  EXPECT_TRUE(absl::IsInvalidArgument(
      ParseDatabaseUrl("postgresql://app:p@ss@10.0.0.1,10.0.0.2/books").status()));
}

TEST(PostgresHostListTest, PreferStandbyTriesEveryHostAsAStandbyBeforeAnyHost) {
  std::vector<std::string> per_host = ConnectionStringPerHost(
      "postgresql://app@10.0.0.1:5433,10.0.0.2:5434/books?target_session_attrs=prefer-standby");
  ASSERT_EQ(per_host.size(), 4u);
  for (size_t i = 0; i < per_host.size(); ++i) {
    EXPECT_NE(per_host[i].find(i % 2 == 0 ? "host='10.0.0.1'" : "host='10.0.0.2'"), std::string::npos)
        << per_host[i];
    EXPECT_NE(per_host[i].find(i < 2 ? "target_session_attrs=standby" : "target_session_attrs=any"),
              std::string::npos)
        << per_host[i];
    EXPECT_EQ(per_host[i].find("prefer-standby"), std::string::npos) << per_host[i];
  }
}

// "host:port" of a node's URL (postgresql://postgres@HOST:PORT/ledger_test).
std::string HostPortOf(const std::string& node_url) {
  const size_t at = node_url.find('@');
  const size_t slash = node_url.find('/', at);
  return node_url.substr(at + 1, slash - at - 1);
}

// The read engine's sessions name themselves, so that a failure can say where they are.
constexpr char kReadsApplication[] = "ledger-reads";

// Where the read engine's sessions are (each node's pg_stat_activity), and the standby's
// replay state and start time: for a failure's message.
std::string ReadSessions(const std::string& primary, const std::string& standby) {
  std::string where;
  for (const std::string& node : {primary, standby}) {
    absl::StatusOr<std::string> sessions = NodeSql(
        node, absl::StrCat("SELECT count(*) || ' session(s), opened ' || coalesce(string_agg("
                           "backend_start::text, ', ' ORDER BY backend_start), '-') FROM "
                           "pg_stat_activity WHERE application_name = '", kReadsApplication, "'"));
    absl::StrAppend(&where, "  ", kReadsApplication, " on ", node,
                    node == primary ? " (primary): " : " (standby): ",
                    sessions.ok() ? *sessions : sessions.status().ToString(), "\n");
  }
  absl::StatusOr<std::string> replay = NodeSql(
      standby, "SELECT pg_get_wal_replay_pause_state() || ', replayed ' || "
               "pg_last_wal_replay_lsn() || ' of ' || pg_last_wal_receive_lsn() || "
               "', up since ' || pg_postmaster_start_time()");
  absl::StrAppend(&where, "  ", standby, " replay: ",
                  replay.ok() ? *replay : replay.status().ToString(), "\n");
  return where;
}

// Reads off the primary (LedgerOptions::read_engine, docs/scaling.md) on the cluster:
// the read URL lists the primary FIRST with target_session_attrs=prefer-standby, yet its
// reads reach the standby. Proven by staleness: with the standby's replay paused, a
// commit is still acknowledged (synchronous_commit=on waits for the standby's flush, not
// its replay), a read that allows a replica does not see it, and the same read asking
// for the primary does; once replay resumes, the replica read catches up. The pause is
// held under Patroni's maintenance mode: otherwise Patroni resumes a paused replay at
// its next loop (within a second), and the replica reads raced it (seen once: the
// balance read still stale, the history read right after it already not).
TEST_F(PostgresFailoverTest, ReadsAllowingAReplicaReachTheStandbyAndPrimaryReadsSeeTheWrite) {
  absl::StatusOr<std::string> primary = WaitForHealthyPrimary();
  ASSERT_TRUE(primary.ok()) << primary.status();
  const std::string standby = Other(*primary);
  std::shared_ptr<Engine> engine = OpenClusterEngine(cluster->Exported("LEDGER_TEST_PATRONI_DSN"));
  ASSERT_NE(engine, nullptr);
  PostgresOptions read_options = ClusterOptions(absl::StrCat(
      "postgresql://postgres@", HostPortOf(NodeUrl(*primary)), ",", HostPortOf(NodeUrl(standby)),
      "/ledger_test?target_session_attrs=prefer-standby&application_name=", kReadsApplication));
  read_options.migrate = false;  // a standby refuses writes; OpenReadEngine does the same
  absl::StatusOr<std::unique_ptr<Engine>> reads = OpenPostgresEngine(read_options);
  ASSERT_TRUE(reads.ok()) << reads.status();
  Ledger ledger = OpenTestLedger(engine, {.read_engine = std::shared_ptr<Engine>(*std::move(reads))});
  ASSERT_TRUE(ledger.DefineAsset({"READS", 0}).ok());
  ASSERT_TRUE(ledger.OpenAccount({.id = "reads-issuance", .asset = "READS", .allow_negative = true}).ok());
  ASSERT_TRUE(ledger.OpenAccount({.id = "reads-alice", .asset = "READS"}).ok());
  auto top_up = [&](const std::string& key, Amount amount) {
    absl::StatusOr<Outcome> outcome = ledger.Submit(
        {.key = key, .operation = Operation::TopUp("reads-issuance", "reads-alice", "READS", amount)});
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    ASSERT_EQ(outcome->kind, OutcomeKind::kCommitted);
  };
  auto balance = [&](ReadConsistency consistency) -> Amount {
    absl::StatusOr<Account> account = ledger.GetAccount("reads-alice", consistency);
    return account.ok() ? account->balance : -1;
  };
  top_up("reads-1", 100);
  ASSERT_TRUE(WaitUntil([&] { return balance(ReadConsistency::kReplicaAllowed) == 100; },
                        absl::Seconds(30)))
      << "the standby never showed the first commit";

  // Whatever fails below, the standby replays again and Patroni leaves maintenance mode
  // (the failover tests after this one need it to promote).
  struct ResumeReplay {
    std::string node;
    ~ResumeReplay() {
      (void)NodeSql(node, "SELECT pg_wal_replay_resume()");
      absl::Status left = cluster->SetPatroniMaintenance(false);
      EXPECT_TRUE(left.ok()) << "Patroni did not leave maintenance mode: " << left;
    }
  } resume{standby};
  ASSERT_TRUE(cluster->SetPatroniMaintenance(true).ok()) << "Patroni did not enter maintenance mode";
  ASSERT_TRUE(NodeSql(standby, "SELECT pg_wal_replay_pause()").ok());
  auto replay_state = [&] {
    absl::StatusOr<std::string> state = NodeSql(standby, "SELECT pg_get_wal_replay_pause_state()");
    return state.ok() ? *state : state.status().ToString();
  };
  ASSERT_TRUE(WaitUntil([&] { return replay_state() == "paused"; }, absl::Seconds(30)))
      << standby << "'s replay did not pause: " << replay_state();
  top_up("reads-2", 5);  // acknowledged: the standby flushed it, it has not replayed it
  EXPECT_EQ(balance(ReadConsistency::kPrimary), 105) << "read-your-writes on the primary";
  EXPECT_EQ(balance(ReadConsistency::kReplicaAllowed), 100)
      << "the read did not reach the standby\n" << ReadSessions(*primary, standby);
  absl::StatusOr<std::vector<HistoryEntry>> stale = ledger.ListHistory("reads-alice", 0, 10);
  ASSERT_TRUE(stale.ok()) << stale.status();
  EXPECT_EQ(stale->size(), 1u) << "the history read did not reach the standby, or it replayed\n"
                               << ReadSessions(*primary, standby);
  EXPECT_EQ(ledger.ListHistory("reads-alice", 0, 10, ReadConsistency::kPrimary)->size(), 2u);
  // The stale answers above were taken while the replay was paused, not by luck.
  EXPECT_EQ(replay_state(), "paused") << "something resumed " << standby << "'s replay meanwhile";

  ASSERT_TRUE(NodeSql(standby, "SELECT pg_wal_replay_resume()").ok());
  EXPECT_TRUE(WaitUntil([&] { return balance(ReadConsistency::kReplicaAllowed) == 105; },
                        absl::Seconds(30)))
      << "the standby did not catch up once replay resumed";
}

// SIGKILL of Patroni and its postmaster (killing only the postmaster lets Patroni restart
// it in place). The standby is promoted once the leader key expires.
TEST_F(PostgresFailoverTest, PrimaryKilledUnderLoadEveryKeyCommitsExactlyOnce) {
  RunFailover("kill", [](const std::string& primary, const ClusterWorkload&, absl::Time) {
    ASSERT_TRUE(cluster->Signal(primary, SIGKILL).ok());
    EXPECT_TRUE(WaitForPromotion(primary)) << Other(primary) << " was not promoted";
  });
}

// SIGSTOP of Patroni, the postmaster and its backends: the kernel still accepts
// connections and bytes, so only the engine's own bounds end the waits. Thawed once the
// standby is promoted: Patroni then finds it lost the leader key and demotes its node;
// a commit sent there meanwhile waits for a synchronous standby it no longer has, so it
// can never be acknowledged (the client's read timeout ends it as in doubt). The old
// primary stays frozen until the new one has committed: the ledger must get there past
// a host that accepts connections and never answers.
TEST_F(PostgresFailoverTest, PrimaryFrozenUntilTheStandbyIsPromotedEveryKeyCommitsExactlyOnce) {
  RunFailover("freeze", [](const std::string& primary, const ClusterWorkload& load,
                           absl::Time disrupted) {
    ASSERT_TRUE(cluster->Signal(primary, SIGSTOP).ok());
    const bool promoted = WaitForPromotion(primary);
    const bool committed_while_frozen = WaitUntil(
        [&] { return load.FirstCommitStartedAfter(disrupted) != absl::InfiniteFuture(); },
        kPromotionWait);
    EXPECT_TRUE(cluster->Signal(primary, SIGCONT).ok());
    EXPECT_TRUE(promoted) << Other(primary) << " was not promoted";
    EXPECT_TRUE(committed_while_frozen)
        << "nothing committed on " << Other(primary) << " while " << primary << " was frozen";
    // The thawed node is demoted (or stays down); StartNode then brings it back either way.
    WaitUntil([&] { return !IsPrimary(primary); }, kPromotionWait);
  });
}

}  // namespace
}  // namespace ledger::testing
