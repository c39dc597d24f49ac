// Options are validated where they enter: Ledger::Open rejects bad LedgerOptions, Submit
// rejects bad ClaimOptions, each with InvalidArgument naming the field; nothing is
// clamped or ignored in silence.
#include <limits>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "engines/memory/memory_engine.h"
#include "gtest/gtest.h"
#include "idempotency/key.h"
#include "ledger/ledger.h"

namespace ledger {
namespace {

// Expects InvalidArgument whose message names `field`.
void ExpectRejected(const absl::Status& status, const std::string& field) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), field))
      << "the message does not name " << field << ": " << status;
}

absl::Status OpenWith(LedgerOptions options) {
  return Ledger::Open(OpenMemoryEngine(), std::move(options)).status();
}

LedgerOptions WithVelocityLimit(VelocityLimit limit) {
  LedgerOptions options;
  options.velocity_limits = {VelocityLimit{.debit_count_max = 5}, limit};
  return options;
}

TEST(LedgerOpen, DefaultOptionsOpen) {
  absl::StatusOr<Ledger> ledger = Ledger::Open(OpenMemoryEngine());
  ASSERT_TRUE(ledger.ok()) << ledger.status();
  EXPECT_TRUE(ledger->DefineAsset({"USD", 2}).ok());
}

TEST(LedgerOpen, RejectsAMissingEngine) {
  ExpectRejected(Ledger::Open(nullptr).status(), "engine");
}

TEST(LedgerOpen, RejectsAttemptsMaxBelowOne) {
  ExpectRejected(OpenWith({.attempts_max = 0}), "LedgerOptions.attempts_max");
  ExpectRejected(OpenWith({.attempts_max = -3}), "LedgerOptions.attempts_max");
}

TEST(LedgerOpen, RejectsAttemptsMaxAboveItsLimit) {
  ExpectRejected(OpenWith({.attempts_max = kAttemptsMaxLimit + 1}), "LedgerOptions.attempts_max");
}

TEST(LedgerOpen, AcceptsAttemptsMaxAtBothBounds) {
  EXPECT_TRUE(OpenWith({.attempts_max = 1}).ok());
  EXPECT_TRUE(OpenWith({.attempts_max = kAttemptsMaxLimit}).ok());
}

TEST(LedgerOpen, RejectsAVelocityWindowThatIsNotPositive) {
  ExpectRejected(OpenWith(WithVelocityLimit({.window = absl::ZeroDuration(), .debit_count_max = 1})),
                 "LedgerOptions.velocity_limits[1].window");
  ExpectRejected(OpenWith(WithVelocityLimit({.window = -absl::Hours(1), .debit_count_max = 1})),
                 "LedgerOptions.velocity_limits[1].window");
}

TEST(LedgerOpen, RejectsAnInfiniteVelocityWindow) {
  ExpectRejected(
      OpenWith(WithVelocityLimit({.window = absl::InfiniteDuration(), .debit_count_max = 1})),
      "LedgerOptions.velocity_limits[1].window");
}

TEST(LedgerOpen, RejectsNegativeVelocityCaps) {
  ExpectRejected(OpenWith(WithVelocityLimit({.debit_count_max = -1})),
                 "LedgerOptions.velocity_limits[1].debit_count_max");
  ExpectRejected(OpenWith(WithVelocityLimit({.debit_amount_max = -100})),
                 "LedgerOptions.velocity_limits[1].debit_amount_max");
}

TEST(LedgerOpen, RejectsAVelocityLimitWithoutAnyCap) {
  ExpectRejected(OpenWith(WithVelocityLimit({})), "LedgerOptions.velocity_limits[1]");
}

TEST(LedgerOpen, AcceptsVelocityLimitsWithOneCapEach) {
  LedgerOptions options;
  options.velocity_limits = {VelocityLimit{.window = absl::Minutes(1), .debit_count_max = 3},
                             VelocityLimit{.window = absl::Hours(24), .debit_amount_max = 1000}};
  EXPECT_TRUE(OpenWith(options).ok());
}

class SubmitClaimOptions : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<Ledger> opened = Ledger::Open(OpenMemoryEngine());
    ASSERT_TRUE(opened.ok()) << opened.status();
    ledger_ = std::make_unique<Ledger>(*std::move(opened));
    ASSERT_TRUE(ledger_->DefineAsset({"USD", 2}).ok());
    ASSERT_TRUE(ledger_->OpenAccount({.id = "bank", .asset = "USD", .allow_negative = true}).ok());
    ASSERT_TRUE(ledger_->OpenAccount({.id = "alice", .asset = "USD"}).ok());
  }

  // A top-up under `claim`; InvalidArgument must leave the key unused, so the same key
  // with the default claim options commits afterwards.
  void ExpectRejectedAndNothingWritten(ClaimOptions claim, const std::string& field) {
    SubmitRequest request{.key = "top-up-1",
                          .operation = Operation::TopUp("bank", "alice", "USD", 500),
                          .claim = claim};
    ExpectRejected(ledger_->Submit(request).status(), field);
    EXPECT_EQ(ledger_->GetAccount("alice")->balance, 0);
    request.claim = {};
    absl::StatusOr<Outcome> committed = ledger_->Submit(request);
    ASSERT_TRUE(committed.ok()) << committed.status();
    EXPECT_EQ(committed->kind, OutcomeKind::kCommitted);
  }

  std::unique_ptr<Ledger> ledger_;
};

TEST_F(SubmitClaimOptions, RejectsATtlThatIsNotPositive) {
  ExpectRejectedAndNothingWritten({.ttl = absl::ZeroDuration()}, "ClaimOptions.ttl");
}

TEST_F(SubmitClaimOptions, RejectsATtlAboveItsLimit) {
  ExpectRejectedAndNothingWritten({.ttl = kKeyTtlMax + absl::Seconds(1)}, "ClaimOptions.ttl");
}

TEST_F(SubmitClaimOptions, RejectsANegativeWait) {
  ExpectRejectedAndNothingWritten({.wait = WaitPolicy{-absl::Seconds(1)}},
                                  "ClaimOptions.wait.wait_max");
}

}  // namespace
}  // namespace ledger
