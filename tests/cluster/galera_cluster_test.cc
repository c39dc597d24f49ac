// MariaDB Galera, three nodes accepting writes (scripts/cluster-servers.sh start-galera),
// one ledger per node: the same key sent to all three at once commits exactly once (a
// certification conflict is a retryable error, rerun by the ledger, and ends as a
// duplicate replay); transfers racing on the same accounts from different nodes never
// overdraw; clients spread over the nodes keep committing while one node is SIGKILLed
// and brought back, and while one is frozen (SIGSTOP) and resumed; afterwards every
// node holds the same ledger (CHECKSUM TABLE of every table), verify is OK on each, and
// resending every key gives each exactly once. ctest labels: cluster, mysql. The
// cluster starts once for the executable; without it the tests skip, except under
// CI=true, where that is a failure.
#include <signal.h>

#include <atomic>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/barrier.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "base/status.h"
#include "engines/mysql/mysql_engine.h"
#include "engines/mysql/mysql_errors.h"
#include "ledger/ledger.h"
#include "ledger/unit_of_work.h"
#include "tests/cluster/cluster_servers.h"
#include "tests/cluster/cluster_workload.h"
#include "tests/conformance/conformance_context.h"
#include "tests/support/open_ledger.h"

namespace ledger::testing {
namespace {

// Short waits, so a call on a dead or frozen node gives up soon. One submit's bound on
// its worst path: a pool lease, a connection, then at most four round trips (session
// setup, claim, writes, COMMIT) each cut off at the read timeout, for each of the
// ledger's attempts that a certification conflict may cost (a conflict comes back at
// once, so only the last attempt can wait that long).
constexpr absl::Duration kConnectTimeout = absl::Seconds(2);
constexpr absl::Duration kAccountLockWait = absl::Seconds(1);
constexpr absl::Duration kStatementTimeout = absl::Seconds(2);
constexpr absl::Duration kReadTimeout = absl::Seconds(3);
constexpr absl::Duration kPoolAcquireWait = absl::Seconds(5);
const absl::Duration kCallBound = kPoolAcquireWait + kConnectTimeout + 4 * kReadTimeout;
constexpr absl::Duration kSlack = absl::Seconds(4);
constexpr absl::Duration kRejoinWait = absl::Seconds(120);
// How long the two remaining nodes may take to evict a dead or frozen one: evs.suspect_
// timeout (3 s) and evs.inactive_timeout (6 s) in cluster-servers.sh, then the new view's
// installation, on a busy machine.
constexpr absl::Duration kEvictionWait = absl::Seconds(30);
constexpr int kNodes = 3;

ClusterServers* cluster = nullptr;
std::string* start_failure = nullptr;

std::string NodeUrl(int node) {
  return cluster->Exported(absl::StrCat("LEDGER_TEST_GALERA", node, "_DSN"));
}

absl::StatusOr<std::shared_ptr<Engine>> OpenNode(int node) {
  MysqlOptions options;
  options.connection = NodeUrl(node);
  options.pool_size = 8;
  options.pool_acquire_wait = kPoolAcquireWait;
  options.connect_timeout = kConnectTimeout;
  options.account_lock_wait = kAccountLockWait;
  options.statement_timeout = kStatementTimeout;
  options.read_timeout = kReadTimeout;
  options.write_timeout = kReadTimeout;
  absl::StatusOr<std::unique_ptr<Engine>> engine = OpenMysqlEngine(options);
  if (!engine.ok()) return engine.status();
  return std::shared_ptr<Engine>(std::move(*engine));
}

std::string Status(int node, const std::string& variable) {
  absl::StatusOr<std::string> answer =
      cluster->GaleraSql(node, absl::StrCat("SHOW STATUS LIKE '", variable, "'"));
  if (!answer.ok()) return "";
  std::vector<std::string> fields = absl::StrSplit(*answer, absl::ByAnyChar("\t\n"));
  return fields.size() > 1 ? fields[1] : "";
}

bool AllSynced() {
  for (int node = 1; node <= kNodes; ++node) {
    if (Status(node, "wsrep_local_state_comment") != "Synced" ||
        Status(node, "wsrep_cluster_size") != "3") {
      return false;
    }
  }
  return true;
}

// Whether every node has applied all it received (wsrep_local_recv_queue 0).
bool AllCaughtUp() {
  for (int node = 1; node <= kNodes; ++node) {
    if (Status(node, "wsrep_local_recv_queue") != "0") return false;
  }
  return true;
}

// CHECKSUM TABLE of every table of the ledger's database, as one text per node.
absl::StatusOr<std::string> LedgerChecksum(int node) {
  absl::StatusOr<std::string> tables = cluster->GaleraSql(
      node, "SELECT GROUP_CONCAT(table_name ORDER BY table_name) FROM information_schema.tables "
            "WHERE table_schema = 'ledger_test'");
  if (!tables.ok()) return tables.status();
  std::string list = std::string(absl::StripAsciiWhitespace(*tables));
  std::vector<std::string> qualified;
  for (absl::string_view table : absl::StrSplit(list, ',')) {
    qualified.push_back(absl::StrCat("ledger_test.", table));
  }
  return cluster->GaleraSql(node, absl::StrCat("CHECKSUM TABLE ", absl::StrJoin(qualified, ", ")));
}

// Whether `node` sees a primary component of `size` nodes (wsrep_cluster_size), asked
// with wsrep_sync_wait off so that the question does not wait for the cluster.
bool SeesPrimaryOf(int node, int size) {
  absl::StatusOr<std::string> answer = cluster->GaleraSql(
      node, "SET SESSION wsrep_sync_wait = 0; SELECT CONCAT(MAX(IF(variable_name = "
            "'WSREP_CLUSTER_STATUS', variable_value, NULL)), ' ', MAX(IF(variable_name = "
            "'WSREP_CLUSTER_SIZE', variable_value, NULL))) FROM information_schema.global_status");
  return answer.ok() &&
         absl::StripAsciiWhitespace(*answer) == absl::StrCat("Primary ", size);
}

// Each node's error log for a failure's message: its last lines about membership
// (suspicions, evictions, components, quorum), which the last lines of all may no longer
// hold, then its last lines (state transfers, flow control).
std::string NodeLogs() {
  const std::vector<std::string> membership = {"suspect", "inactive", "COMPONENT", "PRIMARY",
                                               "partition", "declaring", "re-merge", "Quorum"};
  std::string logs;
  for (int node = 1; node <= kNodes; ++node) {
    const std::string path = absl::StrCat(cluster->directory(), "/galera", node, "/error.log");
    absl::StrAppend(&logs, "--- galera", node, "/error.log, last lines about membership:\n",
                    LogTail(path, 40, membership), "\n--- galera", node,
                    "/error.log, last lines:\n", LogTail(path, 60), "\n");
  }
  return logs;
}

// What node n is doing, for a failure's message: its wsrep state and flow control
// counters, and what its server threads wait on. Asked with wsrep_sync_wait off, so that
// the question does not itself wait for the cluster.
std::string NodeState(int node) {
  absl::StatusOr<std::string> status = cluster->GaleraSql(
      node, "SET SESSION wsrep_sync_wait = 0; "
            "SELECT GROUP_CONCAT(CONCAT(variable_name, '=', variable_value) SEPARATOR ' ') "
            "FROM information_schema.global_status WHERE variable_name IN ("
            "'WSREP_LOCAL_STATE_COMMENT', 'WSREP_CLUSTER_STATUS', 'WSREP_CLUSTER_SIZE', "
            "'WSREP_FLOW_CONTROL_PAUSED', 'WSREP_FLOW_CONTROL_SENT', 'WSREP_FLOW_CONTROL_RECV', "
            "'WSREP_LOCAL_RECV_QUEUE', 'WSREP_LOCAL_SEND_QUEUE', 'WSREP_LAST_COMMITTED'); "
            "SELECT GROUP_CONCAT(CONCAT(n, ' x ', s) SEPARATOR '; ') FROM (SELECT COUNT(*) AS n, "
            "CONCAT(command, ' ', IFNULL(state, ''), "
            "IF(info IS NULL, '', CONCAT(' (', LEFT(info, 60), ')'))) AS s "
            "FROM information_schema.processlist GROUP BY s) AS threads; "
            "SELECT CONCAT('InnoDB lock waits: ', COUNT(*)) FROM information_schema.innodb_lock_waits");
  return absl::StrCat("galera", node, ": ", status.ok() ? *status : status.status().ToString());
}

// Every node's NodeState, a line each.
std::string ClusterState() {
  return absl::StrCat(NodeState(1), "\n", NodeState(2), "\n", NodeState(3));
}

// What Galera answers that a single server never does, mapped by the engine's error table.
TEST(GaleraErrorsTest, ANodeOutsideThePrimaryComponentIsUnavailableAndACertificationConflictRetryable) {
  using mysql_internal::ErrorContext;
  using mysql_internal::MysqlError;
  using mysql_internal::MysqlErrorStatus;
  // 1047 by its number, whatever SQLSTATE a server or proxy gives it.
  const MysqlError not_ready{.code = 1047, .sql_state = "HY000",
                             .message = "WSREP has not yet prepared node for application use"};
  EXPECT_TRUE(mysql_internal::IsConnectionLost(not_ready));
  EXPECT_TRUE(absl::IsUnavailable(MysqlErrorStatus(not_ready, "claim", ErrorContext::kClaim)));
  EXPECT_TRUE(IsInDoubt(MysqlErrorStatus(not_ready, "COMMIT", ErrorContext::kCommit)));
  const MysqlError conflict{.code = 1213, .sql_state = "40001",
                            .message = "WSREP detected deadlock/conflict and aborted the transaction. "
                                       "Try restarting the transaction"};
  for (ErrorContext context : {ErrorContext::kClaim, ErrorContext::kWrite, ErrorContext::kCommit}) {
    EXPECT_TRUE(IsRetryable(MysqlErrorStatus(conflict, "statement", context)));
  }
}

class GaleraClusterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::unique_ptr<ClusterServers>> started =
        ClusterServers::Start(ClusterServers::Kind::kGalera);
    if (!started.ok()) {
      start_failure = new std::string(started.status().ToString());
      return;
    }
    cluster = started->release();
  }
  static void TearDownTestSuite() {
    delete cluster;
    cluster = nullptr;
  }

  void SetUp() override {
    if (cluster == nullptr) {
      if (RunningInCi()) GTEST_FAIL() << "the Galera cluster did not start: " << *start_failure;
      GTEST_SKIP() << "the Galera cluster did not start: " << *start_failure;
    }
    ASSERT_TRUE(WaitUntil(AllSynced, kRejoinWait)) << "the three nodes are not synced";
    // One node migrates first: the others then find the schema in place.
    for (int node = 1; node <= kNodes; ++node) {
      absl::StatusOr<std::shared_ptr<Engine>> engine = OpenNode(node);
      ASSERT_TRUE(engine.ok()) << "galera" << node << ": " << engine.status();
      ledgers_.push_back(std::make_unique<Ledger>(OpenTestLedger(*engine)));
    }
  }

  Ledger& On(int node) { return *ledgers_[node - 1]; }

  std::vector<std::unique_ptr<Ledger>> ledgers_;
};

// Reads off the primary (LedgerOptions::read_engine, docs/scaling.md) on Galera: the
// ledger writes through galera1 and reads through galera2. Proven with a row only galera2
// holds (written with wsrep_on=OFF, so it is not replicated, and removed the same way):
// a read that allows a replica sees it, a read that asks for the primary does not. A
// submit goes to galera1; with wsrep_sync_wait=1 (cluster-servers.sh) galera2's next
// read waits until it applied it, so even the replica read sees the caller's write.
TEST_F(GaleraClusterTest, ReadsAllowingAReplicaReachAnotherNodeAndWritesThePrimaryNode) {
  absl::StatusOr<std::shared_ptr<Engine>> primary = OpenNode(1);
  ASSERT_TRUE(primary.ok()) << primary.status();
  MysqlOptions read_options;
  read_options.connection = NodeUrl(2);
  read_options.pool_size = 2;
  read_options.connect_timeout = kConnectTimeout;
  read_options.account_lock_wait = kAccountLockWait;
  read_options.statement_timeout = kStatementTimeout;
  read_options.read_timeout = kReadTimeout;
  read_options.write_timeout = kReadTimeout;
  read_options.migrate = false;  // as OpenReadEngine opens it
  absl::StatusOr<std::unique_ptr<Engine>> reads = OpenMysqlEngine(read_options);
  ASSERT_TRUE(reads.ok()) << reads.status();
  Ledger ledger = OpenTestLedger(*primary, {.read_engine = std::shared_ptr<Engine>(*std::move(reads))});

  const std::string kNodeOnly = "NODE2ONLY";
  ASSERT_TRUE(cluster
                  ->GaleraSql(2, absl::StrCat("SET SESSION wsrep_on = OFF; INSERT INTO ledger_test.assets "
                                              "(code, scale) VALUES ('", kNodeOnly, "', 0)"))
                  .ok());
  struct RemoveNodeOnlyRow {  // whatever fails below, the nodes hold the same rows again
    std::string code;
    ~RemoveNodeOnlyRow() {
      (void)cluster->GaleraSql(2, absl::StrCat("SET SESSION wsrep_on = OFF; DELETE FROM "
                                               "ledger_test.assets WHERE code = '", code, "'"));
    }
  } remove{kNodeOnly};
  EXPECT_TRUE(ledger.GetAsset(kNodeOnly).ok()) << "the read did not reach galera2";
  EXPECT_TRUE(absl::IsNotFound(ledger.GetAsset(kNodeOnly, ReadConsistency::kPrimary).status()));

  ASSERT_TRUE(ledger.DefineAsset({"GREADS", 0}).ok());
  ASSERT_TRUE(ledger.OpenAccount({.id = "greads-issuance", .asset = "GREADS", .allow_negative = true}).ok());
  ASSERT_TRUE(ledger.OpenAccount({.id = "greads-alice", .asset = "GREADS"}).ok());
  absl::StatusOr<Outcome> topped_up = ledger.Submit(
      {.key = "greads-1", .operation = Operation::TopUp("greads-issuance", "greads-alice", "GREADS", 40)});
  ASSERT_TRUE(topped_up.ok()) << topped_up.status();
  ASSERT_EQ(topped_up->kind, OutcomeKind::kCommitted);
  absl::StatusOr<Account> on_primary = ledger.GetAccount("greads-alice", ReadConsistency::kPrimary);
  absl::StatusOr<Account> on_replica = ledger.GetAccount("greads-alice");
  ASSERT_TRUE(on_primary.ok()) << on_primary.status();
  ASSERT_TRUE(on_replica.ok()) << on_replica.status();
  EXPECT_EQ(on_primary->balance, 40);
  EXPECT_EQ(on_replica->balance, 40) << "wsrep_sync_wait=1: galera2 applies before it reads";
}

TEST_F(GaleraClusterTest, TheSameKeySentToAllThreeNodesAtOnceCommitsExactlyOnce) {
  ClusterWorkload setup({.prefix = "same", .clients = 1}, nullptr);
  ASSERT_TRUE(setup.Prepare(On(1)).ok());
  constexpr int kRounds = 30;
  int committed_rounds = 0;
  for (int round = 0; round < kRounds; ++round) {
    SubmitRequest request;
    request.key = absl::StrCat("same-key-", round);
    request.operation = Operation::TopUp(setup.AccountId("issuance"), setup.AccountId("u0"),
                                         kClusterAsset, 1);
    absl::Barrier* barrier = new absl::Barrier(kNodes);
    std::vector<absl::StatusOr<Outcome>> outcomes(kNodes, absl::UnknownError("not run"));
    std::vector<std::thread> threads;
    for (int node = 1; node <= kNodes; ++node) {
      threads.emplace_back([&, node] {
        if (barrier->Block()) delete barrier;
        outcomes[node - 1] = On(node).Submit(request);
      });
    }
    for (std::thread& thread : threads) thread.join();
    int committed = 0;
    std::string transaction_id;
    for (int node = 1; node <= kNodes; ++node) {
      const absl::StatusOr<Outcome>& outcome = outcomes[node - 1];
      ASSERT_TRUE(outcome.ok() && outcome->ok())
          << request.key << " on galera" << node << ": " << EndOf(outcome) << " "
          << (outcome.ok() ? outcome->fault : outcome.status());
      if (outcome->kind == OutcomeKind::kCommitted) ++committed;
      if (transaction_id.empty()) transaction_id = outcome->transaction.id;
      EXPECT_EQ(outcome->transaction.id, transaction_id) << request.key << " on galera" << node;
    }
    EXPECT_EQ(committed, 1) << request.key;
    committed_rounds += committed == 1;
  }
  for (int node = 1; node <= kNodes; ++node) {
    absl::StatusOr<Account> target = On(node).GetAccount(setup.AccountId("u0"));
    ASSERT_TRUE(target.ok()) << target.status();
    EXPECT_EQ(target->balance, kRounds) << "galera" << node;
  }
  EXPECT_EQ(committed_rounds, kRounds);
}

// A claim's transaction aborted by another node's write set while its session is idle
// (a brute-force abort) must not commit the rest of the submit. A unit of work on
// galera1, on a ledger of its own (sessions that have prepared nothing yet), claims a
// key, locks the accounts and stops; galera2 commits the same key, which aborts
// galera1's idle transaction when galera1 applies it; then the unit commits: its
// attempt fails and its rerun replays. This pins the abort the node reports (it passes
// without VerifyClaimsHeld too); the one it once did not report, mid-submit, is what
// TheSameKeySentToAllThreeNodesAtOnce caught (docs/scaling.md).
TEST_F(GaleraClusterTest, AClaimAbortedByAnotherNodeWhileIdleNeverCommitsWithoutItsKey) {
  ClusterWorkload setup({.prefix = "idle", .clients = 1}, nullptr);
  ASSERT_TRUE(setup.Prepare(On(1)).ok());
  ASSERT_TRUE(WaitUntil(AllCaughtUp, kRejoinWait));
  absl::StatusOr<std::shared_ptr<Engine>> engine = OpenNode(1);
  ASSERT_TRUE(engine.ok()) << engine.status();
  Ledger fresh = OpenTestLedger(*engine);
  SubmitRequest request;
  request.key = "idle-abort-1";
  request.operation = Operation::TopUp(setup.AccountId("issuance"), setup.AccountId("u0"),
                                       kClusterAsset, 1);
  int attempts = 0;
  std::vector<OutcomeKind> unit_outcomes;
  absl::StatusOr<Outcome> elsewhere = absl::UnknownError("not run");
  absl::Status unit = fresh.Transact([&](UnitOfWork& work) -> absl::Status {
    ++attempts;
    LEDGER_ASSIGN_OR_RETURN(Outcome outcome, work.Submit(request));
    unit_outcomes.push_back(outcome.kind);
    if (attempts == 1) {
      elsewhere = On(2).Submit(request);  // galera1's claim is not visible to galera2
      if (!WaitUntil(AllCaughtUp, kRejoinWait)) return absl::DeadlineExceededError("apply");
    }
    return absl::OkStatus();
  });
  ASSERT_TRUE(elsewhere.ok() && elsewhere->kind == OutcomeKind::kCommitted)
      << EndOf(elsewhere);
  EXPECT_TRUE(unit.ok()) << unit;
  EXPECT_GE(attempts, 2) << "the aborted attempt was not noticed";
  ASSERT_FALSE(unit_outcomes.empty());
  EXPECT_EQ(unit_outcomes.back(), OutcomeKind::kDuplicate);
  ASSERT_TRUE(WaitUntil(AllCaughtUp, kRejoinWait));
  for (int node = 1; node <= kNodes; ++node) {
    absl::StatusOr<Account> target = On(node).GetAccount(setup.AccountId("u0"));
    ASSERT_TRUE(target.ok()) << target.status();
    EXPECT_EQ(target->balance, 1) << "galera" << node << ": the key posted twice";
  }
}

TEST_F(GaleraClusterTest, TransfersRacingFromDifferentNodesNeverOverdraw) {
  ClusterWorkload setup({.prefix = "race", .clients = 2}, nullptr);
  ASSERT_TRUE(setup.Prepare(On(1)).ok());
  const std::string source = setup.AccountId("u0");
  const std::string target = setup.AccountId("u1");
  constexpr Amount kFunds = 100;
  constexpr Amount kEach = 7;
  constexpr int kPerNode = 15;  // 45 * 7 asked for, 100 there
  absl::StatusOr<Outcome> funded = On(1).Submit(
      {.key = "race-fund", .operation = Operation::TopUp(setup.AccountId("issuance"), source,
                                                         kClusterAsset, kFunds)});
  ASSERT_TRUE(funded.ok() && funded->ok());
  std::atomic<int> committed{0};
  std::vector<std::thread> threads;
  for (int node = 1; node <= kNodes; ++node) {
    threads.emplace_back([&, node] {
      for (int n = 0; n < kPerNode; ++n) {
        absl::StatusOr<Outcome> outcome = On(node).Submit(
            {.key = absl::StrCat("race-", node, "-", n),
             .operation = Operation::Transfer(source, target, kClusterAsset, kEach)});
        if (outcome.ok() && outcome->kind == OutcomeKind::kCommitted) ++committed;
        EXPECT_NE(EndOf(outcome), "other")
            << "galera" << node << ": " << (outcome.ok() ? outcome->fault : outcome.status());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(committed.load(), kFunds / kEach) << "every transfer that fits commits (after retries)";
  for (int node = 1; node <= kNodes; ++node) {
    absl::StatusOr<Account> from = On(node).GetAccount(source);
    absl::StatusOr<Account> to = On(node).GetAccount(target);
    ASSERT_TRUE(from.ok() && to.ok());
    EXPECT_GE(from->balance, 0) << "overdrawn on galera" << node;
    EXPECT_EQ(to->balance, committed.load() * kEach) << "galera" << node;
    EXPECT_EQ(from->balance + to->balance, kFunds) << "galera" << node;
  }
}

// The disruptions follow what the cluster reports, not fixed sleeps: the remaining two
// nodes must commit once they have evicted the lost one (a call started after the new
// view ends committed within one call's bound), and the lost node comes back only then.
// With fixed sleeps (kill, 5 s, restart) the check raced Galera's own eviction (3 s
// suspect timeout, then the view change: 4 to 6 s after the kill on this machine), and
// the restarted node's state transfer could stall the cluster before anything committed.
TEST_F(GaleraClusterTest, NodesKilledAndFrozenUnderLoadEveryKeyCommitsExactlyOnce) {
  ClusterWorkload load({.prefix = "load", .clients = 6},
                       [&](int client) -> Ledger& { return On(client % kNodes + 1); });
  ASSERT_TRUE(load.Prepare(On(1)).ok());
  load.Start();
  const absl::Time started = absl::Now();
  absl::SleepFor(absl::Seconds(2));
  // Waits until nodes `a` and `b` form a primary component of two; then (bounded) for a
  // call started after that to commit.
  struct Remaining {
    absl::Time evicted;      // when the wait for the two-node view ended
    bool primary = false;    // whether the two formed it
    bool committed = false;  // whether a call started after it committed
  };
  auto remaining_commit = [&](int a, int b) {
    Remaining remaining;
    remaining.primary = WaitUntil(
        [&] { return SeesPrimaryOf(a, 2) && SeesPrimaryOf(b, 2); }, kEvictionWait);
    remaining.evicted = absl::Now();
    remaining.committed =
        remaining.primary &&
        WaitUntil([&] { return load.FirstCommitStartedAfter(remaining.evicted) !=
                               absl::InfiniteFuture(); },
                  kCallBound + kSlack);
    return remaining;
  };
  auto since_start = [&](absl::Time when) {
    return absl::FormatDuration(absl::Trunc(when - started, absl::Milliseconds(100)));
  };
  // Killed only once every node has applied what it received, as the freeze below: a
  // node still working through a backlog (seen: galera1 446 write sets behind on a busy
  // machine) installs the two-node view only after it, and nothing commits meanwhile.
  ASSERT_TRUE(WaitUntil(AllCaughtUp, kRejoinWait))
      << "a node kept a backlog under load\n" << ClusterState();
  const absl::Time killed = absl::Now();
  ASSERT_TRUE(cluster->Signal("galera3", SIGKILL).ok());
  const Remaining while_dead = remaining_commit(1, 2);
  const std::string while_dead_states =
      while_dead.committed ? "" : absl::StrCat(NodeState(1), "\n", NodeState(2), "\n");
  const absl::Time restarted = absl::Now();
  ASSERT_TRUE(cluster->StartNode("galera3").ok()) << "galera3 did not rejoin";
  // Freeze a node only once galera3's state transfer is over and every node has applied
  // what it received: until then its donor is desynced, or the restarted node still works
  // through a backlog, and a freeze makes a double fault in which Galera may stall for up
  // to pc.wait_prim_timeout. Seen both ways: galera1 still Donor/Desynced; and galera3,
  // synced but 446 write sets behind (wsrep_local_recv_queue), never installing the
  // two-node view, so galera2 was evicted only 30 s after its freeze. So the node frozen
  // is galera3 itself: the two that stay have run all along.
  const bool resynced = WaitUntil(AllSynced, kRejoinWait);
  const absl::Time galera3_synced = absl::Now();
  ASSERT_TRUE(resynced) << "galera3 did not sync after its restart\n" << ClusterState();
  ASSERT_TRUE(WaitUntil(AllCaughtUp, kRejoinWait))
      << "a node kept a backlog after galera3's sync\n" << ClusterState();
  // The freeze is tried a second time when galera1 and galera2 did not form a primary
  // component of two at all. That is Galera's own decision, not the ledger's: seen once in
  // about thirty runs on a loaded machine, both stayed non-Primary for the whole wait and
  // the primary came back only by the full re-merge when galera3 was thawed. The ledger's
  // part (a call started once the two form the primary commits) is asserted below.
  Remaining while_frozen;
  std::string freezes, while_frozen_states;
  bool rejoined = false;
  for (int attempt = 1; attempt <= 2; ++attempt) {
    absl::SleepFor(absl::Seconds(2));
    const absl::Time frozen = absl::Now();
    ASSERT_TRUE(cluster->Signal("galera3", SIGSTOP).ok());
    while_frozen = remaining_commit(1, 2);
    while_frozen_states = absl::StrCat(NodeState(1), "\n", NodeState(2), "\n");
    absl::SleepFor(frozen + absl::Seconds(10) - absl::Now());  // frozen 10 s at least
    const absl::Time thawed = absl::Now();
    ASSERT_TRUE(cluster->Signal("galera3", SIGCONT).ok());
    // Synced is not enough before the checks below: a node that says so may still work
    // through a backlog, and its reads wait for it (wsrep_sync_wait=1).
    rejoined = WaitUntil(AllSynced, kRejoinWait) && WaitUntil(AllCaughtUp, kRejoinWait);
    absl::StrAppend(&freezes, "; galera3 frozen +", since_start(frozen),
                    while_frozen.primary ? ", evicted +" : ", no primary of two by +",
                    since_start(while_frozen.evicted), ", thawed +", since_start(thawed));
    if (while_frozen.primary || !rejoined) break;
    std::cout << "  freeze " << attempt << ": galera1 and galera2 formed no primary component"
              << " of two; galera3 frozen again\n" << while_frozen_states;
  }
  absl::SleepFor(absl::Seconds(2));
  load.Stop();
  for (const auto& [end, count] : load.Ends()) std::cout << "  " << end << ": " << count << "\n";
  // When what happened, for a failure below: the disruptions, then every second's calls.
  const std::string timeline = absl::StrCat(
      "galera3 killed at +", since_start(killed), ", evicted +", since_start(while_dead.evicted),
      ", restarted +", since_start(restarted), ", synced +", since_start(galera3_synced),
      freezes, "\n",
      load.Timeline(started, absl::Seconds(1), [](int client) {
        return absl::StrCat("c", client, "@galera", client % kNodes + 1);
      }),
      while_dead.committed ? "" : absl::StrCat("while galera3 was dead:\n", while_dead_states),
      "while galera3 was frozen (the last time):\n", while_frozen_states);
  // Printed after the failures, and only with them: a report that shows a run's first
  // lines (CI's does) then shows what failed, not forty lines of timeline before it.
  absl::Cleanup explain = [&] {
    if (HasFailure()) std::cout << "timeline:\n" << timeline << NodeLogs();
  };
  ASSERT_TRUE(rejoined) << "the resumed galera3 did not rejoin and catch up (timeline below)\n"
                        << ClusterState();
  load.ExpectEveryCallEndedWithin(kCallBound + kSlack);
  // The remaining quorum kept committing while a node was dead, and while one was frozen.
  EXPECT_TRUE(while_dead.committed) << "nothing committed while galera3 was dead";
  EXPECT_TRUE(while_frozen.committed) << "nothing committed while galera3 was frozen";

  for (int node = 1; node <= kNodes; ++node) {
    absl::StatusOr<VerifyReport> report = On(node).Verify();
    ASSERT_TRUE(report.ok()) << "galera" << node << ": " << report.status() << "\n"
                             << NodeState(node);
    EXPECT_TRUE(report->ok()) << "galera" << node << ": " << report->ToText();
  }
  load.ResendEveryKey(On(1), kRejoinWait);
  for (int node = 1; node <= kNodes; ++node) load.ExpectExactlyOnce(On(node));
  ASSERT_TRUE(WaitUntil(AllSynced, kRejoinWait));
  absl::StatusOr<std::string> first = LedgerChecksum(1);
  ASSERT_TRUE(first.ok()) << first.status();
  for (int node = 2; node <= kNodes; ++node) {
    absl::StatusOr<std::string> other = LedgerChecksum(node);
    ASSERT_TRUE(other.ok()) << other.status();
    EXPECT_EQ(*other, *first) << "galera" << node << " holds another ledger than galera1";
  }
}

}  // namespace
}  // namespace ledger::testing
