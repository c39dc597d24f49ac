// The partition suite's fixture and the cases every server engine shares
// (partition_suite.h). Each engine's own cases are in its partition test file.
#include "tests/engines/common/partition_suite.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "ledger/json.h"
#include "ledger/ledger.h"
#include "tests/conformance/conformance_context.h"
#include "tests/support/open_ledger.h"

namespace ledger::testing {

namespace {
constexpr int kResendsMax = 10;
}  // namespace

PartitionContext* PartitionTest::context_ = nullptr;
ThrowawayServer* PartitionTest::server_ = nullptr;
absl::Status* PartitionTest::start_failure_ = nullptr;

void PartitionTest::TearDownTestSuite() {
  if (server_ != nullptr && context_->detach) context_->detach();
  delete server_;
  server_ = nullptr;
}

void PartitionTest::SetUp() {
  if (context_ == nullptr) {  // the first test: one engine per executable
    context_ = new PartitionContext(GetParam()());
    start_failure_ = new absl::Status();
    absl::StatusOr<std::unique_ptr<ThrowawayServer>> started =
        ThrowawayServer::Start(context_->server_kind);
    if (!started.ok()) {
      *start_failure_ = started.status();
    } else if (absl::Status attached = context_->attach(**started); !attached.ok()) {
      *start_failure_ = attached;
    } else {
      server_ = started->release();
    }
  }
  if (server_ == nullptr) {
    if (RunningInCi()) {
      GTEST_FAIL() << "no " << context_->server_name << " server of the test's own: "
                   << *start_failure_;
    }
    GTEST_SKIP() << "no " << context_->server_name << " server of the test's own: "
                 << *start_failure_;
  }
  absl::StatusOr<std::string> url = context_->recreate_database();
  ASSERT_TRUE(url.ok()) << url.status();
  url_ = *url;
  absl::StatusOr<std::unique_ptr<Engine>> engine = context_->open(url_);
  ASSERT_TRUE(engine.ok()) << engine.status();
  faults_ = std::make_shared<FaultInjectingEngine>(std::shared_ptr<Engine>(std::move(*engine)));
  // Two attempts: a retryable lock wait is retried once, so its bound stays small.
  ledger_ = std::make_unique<Ledger>(OpenTestLedger(faults_, {.attempts_max = 2}));
  ASSERT_TRUE(ledger_->DefineAsset({kPartitionAsset, 0}).ok());
  ASSERT_TRUE(ledger_
                  ->OpenAccount({.id = "issuance", .asset = kPartitionAsset,
                                 .allow_negative = true})
                  .ok());
  ASSERT_TRUE(ledger_->OpenAccount({.id = "alice", .asset = kPartitionAsset}).ok());
}

void PartitionTest::TearDown() {
  if (server_ != nullptr) {
    EXPECT_TRUE(server_->Thaw().ok());  // whatever the test did
  }
  if (faults_ != nullptr) faults_->Clear();
}

std::string PartitionTest::ThroughProxy(int port) const {
  return absl::StrReplaceAll(url_, {{absl::StrCat(":", server_->port(), "/"),
                                     absl::StrCat(":", port, "/")}});
}

absl::StatusOr<std::string> PartitionTest::AdminValue(const std::string& sql) const {
  return context_->admin_query(sql);
}

SubmitRequest PartitionTest::TopUp(const std::string& key, Amount amount) {
  return SubmitRequest{key, {}, Operation::TopUp("issuance", "alice", kPartitionAsset, amount), {}};
}

void PartitionTest::ExpectCommittedOnce(const std::string& key, Amount amount) {
  EXPECT_EQ(AdminValue(absl::StrCat("SELECT COUNT(*) FROM ", context_->table_prefix,
                                    "idempotency_keys WHERE ", context_->key_column, " = '",
                                    key, "' AND state = 'committed'"))
                .value_or("the query failed"),
            "1");
  EXPECT_EQ(AdminValue(absl::StrCat("SELECT COUNT(*) FROM ", context_->table_prefix,
                                    "transactions"))
                .value_or("the query failed"),
            "1");
  absl::StatusOr<Account> alice = ledger_->GetAccount("alice");
  ASSERT_TRUE(alice.ok()) << alice.status();
  EXPECT_EQ(alice->balance, amount);
}

void PartitionTest::ExpectBoundedFaultThenOneCommit(const TimedOutcome& first, bool in_doubt,
                                                    absl::Duration bound,
                                                    const SubmitRequest& request) {
  ASSERT_TRUE(first.outcome.ok()) << first.outcome.status();
  EXPECT_EQ(first.outcome->kind, OutcomeKind::kFaulted) << OutcomeToJson(*first.outcome).dump();
  EXPECT_EQ(first.outcome->in_doubt, in_doubt) << first.outcome->fault;
  if (!in_doubt) {
    EXPECT_TRUE(absl::IsUnavailable(first.outcome->fault)) << first.outcome->fault;
  }
  EXPECT_LT(first.elapsed, bound + kPartitionSlack) << "the submit waited on the frozen server";
  // The engine's own bound cut it off, not some other failure.
  EXPECT_NE(first.outcome->fault.message().find(context_->frozen_reply_fault),
            absl::string_view::npos)
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

void PartitionTest::ExpectOpenEndsWithin(const std::function<void(FreezingProxy&)>& freeze,
                                         absl::Duration bound, bool fresh, bool may_succeed) {
  if (fresh) {
    ASSERT_TRUE(context_->recreate_database().ok());
  }
  absl::StatusOr<std::unique_ptr<FreezingProxy>> proxy = FreezingProxy::Start(server_->port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  freeze(**proxy);
  const std::string through_proxy = ThroughProxy((*proxy)->port());
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<Engine>> engine = context_->open(through_proxy);
  const absl::Duration elapsed = absl::Now() - start;
  EXPECT_EQ((*proxy)->frozen(), 1) << "the open never reached the freeze point";
  if (!may_succeed || !engine.ok()) {
    EXPECT_TRUE(absl::IsUnavailable(engine.status())) << engine.status();
  }
  EXPECT_LT(elapsed, bound + kPartitionSlack) << "the open waited on the frozen connection";
  RecordProperty("frozen_open_ms", absl::ToInt64Milliseconds(elapsed));
}

void PartitionTest::FreezeAt(FaultPoint point) {
  faults_->SetHook(point, [] { ASSERT_TRUE(server_->Freeze().ok()); });
}

// The cases every server engine shares.

TEST_P(PartitionTest, ConnectingToAFrozenServerIsUnavailableWithinTheConnectTimeout) {
  ASSERT_TRUE(server().Freeze().ok());
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<Engine>> engine = context().open(url());
  const absl::Duration elapsed = absl::Now() - start;
  ASSERT_TRUE(server().Thaw().ok());
  EXPECT_TRUE(absl::IsUnavailable(engine.status())) << engine.status();
  EXPECT_LT(elapsed, context().connect_timeout + kPartitionSlack);
}

// Every round trip of an open is bounded: the connection itself (connect_timeout, as a
// whole), the session's setup and each step of the migrations (read_timeout). Frozen
// before the server's first byte (MariaDB's greeting, PostgreSQL's answer to the startup).
TEST_P(PartitionTest, AnOpenFrozenWhileConnectingIsUnavailableWithinTheConnectTimeout) {
  ExpectOpenEndsWithin([](FreezingProxy& proxy) { proxy.FreezeOnConnect(); },
                       context().connect_timeout);
}

TEST_P(PartitionTest, AnOpenFrozenDuringAuthenticationIsUnavailableWithinTheConnectTimeout) {
  // The client's login names the user: frozen before the server hears it.
  ExpectOpenEndsWithin(
      [](FreezingProxy& proxy) { proxy.FreezeWhenClientSends(context().user_in_login); },
      context().connect_timeout);
}

TEST_P(PartitionTest, FrozenBeforeTheClaimFaultsInBoundAndTheResendCommitsOnce) {
  FreezeAt(FaultPoint::kClaim);
  const SubmitRequest request = TopUp("frozen-before-claim", 100);
  ExpectBoundedFaultThenOneCommit(SubmitTimed(*ledger_, request), /*in_doubt=*/false,
                                  context().frozen_claim_bound, request);
}

TEST_P(PartitionTest, FrozenWhileHoldingTheClaimFaultsInBoundAndTheResendCommitsOnce) {
  FreezeAt(FaultPoint::kAfterClaim);
  const SubmitRequest request = TopUp("frozen-holding-claim", 100);
  ExpectBoundedFaultThenOneCommit(SubmitTimed(*ledger_, request),
                                  /*in_doubt=*/context().commit_follows_claim,
                                  context().read_timeout + context().lost_commit_read_bound,
                                  request);
}

TEST_P(PartitionTest, AnAccountLockHeldElsewhereIsRetryableWithinTheAccountLockWait) {
  absl::StatusOr<std::function<void()>> release = context().hold_account_lock(url());
  ASSERT_TRUE(release.ok()) << release.status();
  const SubmitRequest request = TopUp("account-locked", 100);
  TimedOutcome first = SubmitTimed(*ledger_, request);
  (*release)();
  ASSERT_TRUE(first.outcome.ok()) << first.outcome.status();
  ASSERT_EQ(first.outcome->kind, OutcomeKind::kFaulted) << OutcomeToJson(*first.outcome).dump();
  EXPECT_TRUE(IsRetryable(first.outcome->fault)) << first.outcome->fault;
  if (!context().account_lock_fault.empty()) {
    EXPECT_NE(first.outcome->fault.message().find(context().account_lock_fault),
              absl::string_view::npos)
        << first.outcome->fault;
  }
  EXPECT_LT(first.elapsed, 2 * context().account_lock_wait + kPartitionSlack);  // two attempts
  absl::StatusOr<Outcome> resent = ledger_->Submit(request);
  ASSERT_TRUE(resent.ok()) << resent.status();
  EXPECT_EQ(resent->kind, OutcomeKind::kCommitted);
}

// The server's own bound (PostgreSQL's statement_timeout, MariaDB's max_statement_time),
// not the client's: DeadlineExceeded, and the session survives (the next submit on the
// pool commits).
TEST_P(PartitionTest, AStatementLongerThanTheStatementTimeoutIsCutByTheServer) {
  ASSERT_TRUE(context().slow_down_outbox().ok());
  const SubmitRequest request = TopUp("slow-statement", 100);
  TimedOutcome first = SubmitTimed(*ledger_, request);
  ASSERT_TRUE(context().stop_slowing_outbox().ok());
  ASSERT_TRUE(first.outcome.ok()) << first.outcome.status();
  ASSERT_EQ(first.outcome->kind, OutcomeKind::kFaulted) << OutcomeToJson(*first.outcome).dump();
  EXPECT_TRUE(absl::IsDeadlineExceeded(first.outcome->fault)) << first.outcome->fault;
  EXPECT_FALSE(first.outcome->in_doubt);
  EXPECT_LT(first.elapsed, context().statement_timeout + kPartitionSlack);
  absl::StatusOr<Outcome> resent = ledger_->Submit(request);
  ASSERT_TRUE(resent.ok()) << resent.status();
  EXPECT_EQ(resent->kind, OutcomeKind::kCommitted);
  ExpectCommittedOnce(request.key, 100);
}

}  // namespace ledger::testing
