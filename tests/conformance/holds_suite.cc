// Holds (two-phase transfers: hold, capture, void, expiry), checked identically on every
// engine: a hold lowers the available balance at once and posts nothing; exactly one
// capture, void or expiry settles it; the same settlement resent under its key replays.
#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "base/status.h"
#include "ledger/json.h"
#include "ledger/verify.h"
#include "tests/conformance/conformance_fixture.h"

namespace ledger::testing {
namespace {

Operation HoldOp(const std::string& from, const std::string& to, Amount amount) {
  return Operation::Hold(from, to, "CREDITS", amount);
}

Operation HoldOpFor(const std::string& from, const std::string& to, Amount amount,
                    absl::Duration timeout) {
  Operation op = HoldOp(from, to, amount);
  op.timeout = timeout;
  return op;
}

std::string Show(const absl::StatusOr<Outcome>& outcome) {
  return outcome.ok() ? OutcomeToJson(*outcome).dump() : outcome.status().ToString();
}

bool IsCommitted(const absl::StatusOr<Outcome>& outcome) {
  return outcome.ok() && outcome->kind == OutcomeKind::kCommitted;
}

bool IsRejected(const absl::StatusOr<Outcome>& outcome, RejectionReason reason) {
  return outcome.ok() && outcome->kind == OutcomeKind::kRejected && outcome->reason == reason;
}

void ExpectVerified(Engine& engine) {
  absl::StatusOr<VerifyReport> report = VerifyLedger(engine);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << report->ToText();
}

std::string HoldIdOf(const absl::StatusOr<Outcome>& placed) {
  EXPECT_TRUE(IsCommitted(placed)) << Show(placed);
  return placed.ok() ? placed->transaction.id : "";
}

HoldStatus StatusOf(Ledger& ledger, const std::string& hold_id) {
  absl::StatusOr<Hold> hold = ledger.GetHold(hold_id);
  EXPECT_TRUE(hold.ok()) << hold.status();
  return hold.ok() ? hold->status : HoldStatus::kPending;
}

// ---- placing a hold -----------------------------------------------------------------

TEST_P(ConformanceTest, HoldReservesTheAvailableBalanceAndPostsNothing) {
  Fund("alice", 100);
  absl::StatusOr<Outcome> placed = Submit("h-1", HoldOp("alice", "bob", 70));
  ASSERT_TRUE(IsCommitted(placed)) << Show(placed);
  const Transaction& hold = placed->transaction;
  EXPECT_EQ(hold.kind, OperationKind::kHold);
  EXPECT_TRUE(hold.entries.empty());
  ASSERT_TRUE(hold.hold.has_value());
  EXPECT_EQ(*hold.hold, (HoldTerms{"alice", "bob", "CREDITS", 70, std::nullopt}));

  absl::StatusOr<Account> alice = ledger().GetAccount("alice");
  ASSERT_TRUE(alice.ok());
  EXPECT_EQ(alice->balance, 100);
  EXPECT_EQ(alice->pending_debits, 70);
  EXPECT_EQ(alice->Available(), 30);
  absl::StatusOr<Account> bob = ledger().GetAccount("bob");
  ASSERT_TRUE(bob.ok());
  EXPECT_EQ(bob->balance, 0);
  EXPECT_EQ(bob->pending_credits, 70);
  EXPECT_EQ(bob->Available(), 0) << "pending credits are not spendable";

  // Every solvency check uses the available balance.
  EXPECT_TRUE(IsRejected(Submit("t-1", Operation::Transfer("alice", "carol", "CREDITS", 31)),
                         RejectionReason::kInsufficientFunds));
  EXPECT_TRUE(IsRejected(Submit("t-2", Operation::Transfer("bob", "carol", "CREDITS", 1)),
                         RejectionReason::kInsufficientFunds));
  EXPECT_TRUE(IsCommitted(Submit("t-3", Operation::Transfer("alice", "carol", "CREDITS", 30))));

  absl::StatusOr<Hold> stored = ledger().GetHold(hold.id);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->status, HoldStatus::kPending);
  EXPECT_EQ(stored->terms, *hold.hold);
  EXPECT_EQ(stored->settled_by, std::nullopt);
  absl::StatusOr<Transaction> read = ledger().GetTransaction(hold.id);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, hold) << "the hold transaction reads back with its terms";
  ExpectVerified(engine());
}

TEST_P(ConformanceTest, HoldBeyondTheAvailableBalanceIsRejectedAndItsKeyStaysUnused) {
  Fund("alice", 100);
  ASSERT_TRUE(IsCommitted(Submit("h-1", HoldOp("alice", "bob", 60))));
  Snapshot before = TakeSnapshot();
  absl::StatusOr<Outcome> short_of = Submit("h-2", HoldOp("alice", "bob", 41));
  EXPECT_TRUE(IsRejected(short_of, RejectionReason::kInsufficientFunds)) << Show(short_of);
  EXPECT_EQ(TakeSnapshot(), before) << "a rejected hold writes nothing";
  Fund("alice", 1);
  EXPECT_TRUE(IsCommitted(Submit("h-2", HoldOp("alice", "bob", 41)))) << "the key was left unused";
  EXPECT_EQ(ledger().GetAccount("alice")->Available(), 0);
}

TEST_P(ConformanceTest, HoldFromASystemAccountNeedsNoFunds) {
  // A card top-up is authorized (held from the outside world) before it settles.
  absl::StatusOr<Outcome> placed = Submit("auth-1", HoldOp("issuance", "alice", 500));
  ASSERT_TRUE(IsCommitted(placed)) << Show(placed);
  EXPECT_EQ(ledger().GetAccount("alice")->pending_credits, 500);
  absl::StatusOr<Outcome> captured =
      Submit("settle-1", Operation::Capture(placed->transaction.id));
  ASSERT_TRUE(IsCommitted(captured)) << Show(captured);
  EXPECT_EQ(BalanceOf("alice"), 500);
  EXPECT_EQ(BalanceOf("issuance"), -500);
  ExpectVerified(engine());
}

TEST_P(ConformanceTest, HoldBadInputGetsASpecificErrorAndWritesNothing) {
  Fund("alice", 100);
  Snapshot before = TakeSnapshot();
  Operation past = HoldOp("alice", "bob", 10);
  past.expires_at = clock().Now() - absl::Seconds(1);
  Operation both = HoldOp("alice", "bob", 10);
  both.expires_at = clock().Now() + absl::Hours(1);
  both.timeout = absl::Hours(1);
  Operation fractional = HoldOpFor("alice", "bob", 10, absl::Milliseconds(1500));
  Operation capture_zero = Operation::Capture("0190a0a0-0000-7000-8000-000000000000", 0);
  Operation expire = Operation::Void("x");
  expire.kind = OperationKind::kExpire;
  struct Case {
    std::string name;
    Operation op;
    std::string says;
  };
  std::vector<Case> cases = {
      {"expiry in the past", past, "not in the future"},
      {"expires_at and timeout", both, "not both"},
      {"fractional timeout", fractional, "whole number of seconds"},
      {"zero amount", HoldOp("alice", "bob", 0), "amount must be positive"},
      {"same account", HoldOp("alice", "alice", 10), "same account"},
      {"capture of zero", capture_zero, "must be positive"},
      {"empty hold id", Operation::Void(""), "hold_id"},
      {"expire submitted", expire, "expire is not submitted"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Outcome> outcome = Submit(absl::StrCat("bad-", c.name), c.op);
    ASSERT_FALSE(outcome.ok()) << c.name << ": " << Show(outcome);
    EXPECT_EQ(outcome.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_NE(outcome.status().message().find(c.says), std::string_view::npos)
        << c.name << ": " << outcome.status();
  }
  EXPECT_EQ(TakeSnapshot(), before);
}

// ---- capture and void ---------------------------------------------------------------

TEST_P(ConformanceTest, CaptureOfTheWholeHoldPostsItAndReleasesTheReservation) {
  Fund("alice", 100);
  std::string hold_id = HoldIdOf(Submit("h-1", HoldOp("alice", "bob", 70)));
  absl::StatusOr<Outcome> captured = Submit("c-1", Operation::Capture(hold_id));
  ASSERT_TRUE(IsCommitted(captured)) << Show(captured);
  const Transaction& capture = captured->transaction;
  EXPECT_EQ(capture.kind, OperationKind::kCapture);
  EXPECT_EQ(capture.hold_id, hold_id);
  ASSERT_EQ(capture.entries.size(), 2u);
  EXPECT_EQ(capture.entries[0], (Entry{"alice", "CREDITS", -70, 30, 2}));
  EXPECT_EQ(capture.entries[1], (Entry{"bob", "CREDITS", 70, 70, 1}));
  absl::StatusOr<Account> alice = ledger().GetAccount("alice");
  EXPECT_EQ(alice->balance, 30);
  EXPECT_EQ(alice->pending_debits, 0);
  EXPECT_EQ(ledger().GetAccount("bob")->pending_credits, 0);
  absl::StatusOr<Hold> hold = ledger().GetHold(hold_id);
  ASSERT_TRUE(hold.ok());
  EXPECT_EQ(hold->status, HoldStatus::kCaptured);
  EXPECT_EQ(hold->settled_by, capture.id);
  ExpectVerified(engine());
}

TEST_P(ConformanceTest, PartialCapturePostsPartAndReleasesTheRest) {
  Fund("alice", 100);
  std::string hold_id = HoldIdOf(Submit("h-1", HoldOp("alice", "bob", 70)));
  absl::StatusOr<Outcome> captured = Submit("c-1", Operation::Capture(hold_id, 50));
  ASSERT_TRUE(IsCommitted(captured)) << Show(captured);
  EXPECT_EQ(BalanceOf("alice"), 50);
  EXPECT_EQ(BalanceOf("bob"), 50);
  EXPECT_EQ(ledger().GetAccount("alice")->Available(), 50) << "the 20 not captured is released";
  EXPECT_EQ(ledger().GetAccount("bob")->pending_credits, 0);
  ExpectVerified(engine());
}

TEST_P(ConformanceTest, VoidReleasesTheHoldAndPostsNothing) {
  Fund("alice", 100);
  std::string hold_id = HoldIdOf(Submit("h-1", HoldOp("alice", "bob", 70)));
  absl::StatusOr<Outcome> voided = Submit("v-1", Operation::Void(hold_id));
  ASSERT_TRUE(IsCommitted(voided)) << Show(voided);
  EXPECT_EQ(voided->transaction.kind, OperationKind::kVoid);
  EXPECT_EQ(voided->transaction.hold_id, hold_id);
  EXPECT_TRUE(voided->transaction.entries.empty());
  absl::StatusOr<Account> alice = ledger().GetAccount("alice");
  EXPECT_EQ(alice->balance, 100);
  EXPECT_EQ(alice->Available(), 100);
  EXPECT_EQ(ledger().GetAccount("bob")->pending_credits, 0);
  EXPECT_EQ(StatusOf(ledger(), hold_id), HoldStatus::kVoided);
  ExpectVerified(engine());
}

TEST_P(ConformanceTest, ASettledHoldRejectsEverySettlementAfterwardWithItsOwnReason) {
  Fund("alice", 100);
  std::string captured_id = HoldIdOf(Submit("h-1", HoldOp("alice", "bob", 30)));
  std::string voided_id = HoldIdOf(Submit("h-2", HoldOp("alice", "bob", 30)));
  ASSERT_TRUE(IsCommitted(Submit("c-1", Operation::Capture(captured_id))));
  ASSERT_TRUE(IsCommitted(Submit("v-1", Operation::Void(voided_id))));
  Snapshot before = TakeSnapshot();
  EXPECT_TRUE(IsRejected(Submit("c-2", Operation::Capture(captured_id)), RejectionReason::kHoldCaptured));
  EXPECT_TRUE(IsRejected(Submit("v-2", Operation::Void(captured_id)), RejectionReason::kHoldCaptured));
  EXPECT_TRUE(IsRejected(Submit("c-3", Operation::Capture(voided_id)), RejectionReason::kHoldVoided));
  EXPECT_TRUE(IsRejected(Submit("v-3", Operation::Void(voided_id)), RejectionReason::kHoldVoided));
  EXPECT_EQ(TakeSnapshot(), before) << "rejections write nothing";
}

TEST_P(ConformanceTest, ACaptureResentUnderItsKeyReplaysAndNeverPostsTwice) {
  Fund("alice", 100);
  std::string hold_id = HoldIdOf(Submit("h-1", HoldOp("alice", "bob", 70)));
  absl::StatusOr<Outcome> first = Submit("c-1", Operation::Capture(hold_id, 40));
  ASSERT_TRUE(IsCommitted(first)) << Show(first);
  for (int resend = 0; resend < 3; ++resend) {
    absl::StatusOr<Outcome> again = Submit("c-1", Operation::Capture(hold_id, 40));
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->kind, OutcomeKind::kDuplicate);
    EXPECT_EQ(TransactionToJson(again->transaction).dump(),
              TransactionToJson(first->transaction).dump()) << "byte-identical replay";
  }
  absl::StatusOr<Outcome> hold_again = Submit("h-1", HoldOp("alice", "bob", 70));
  ASSERT_TRUE(hold_again.ok());
  EXPECT_EQ(hold_again->kind, OutcomeKind::kDuplicate);
  EXPECT_EQ(hold_again->transaction.id, hold_id);
  EXPECT_EQ(hold_again->transaction.hold,
            (HoldTerms{"alice", "bob", "CREDITS", 70, std::nullopt}));
  absl::StatusOr<Outcome> other = Submit("c-1", Operation::Capture(hold_id, 41));
  EXPECT_TRUE(IsConflict(other.status())) << Show(other);
  EXPECT_EQ(BalanceOf("alice"), 60);
  EXPECT_EQ(BalanceOf("bob"), 40);
  ExpectVerified(engine());
}

TEST_P(ConformanceTest, SettlingAMissingOrOverdrawnHoldIsRejectedAndWritesNothing) {
  Fund("alice", 100);
  std::string hold_id = HoldIdOf(Submit("h-1", HoldOp("alice", "bob", 70)));
  absl::StatusOr<Outcome> transfer = Submit("t-1", Operation::Transfer("alice", "bob", "CREDITS", 5));
  ASSERT_TRUE(IsCommitted(transfer));
  Snapshot before = TakeSnapshot();
  EXPECT_TRUE(IsRejected(Submit("c-1", Operation::Capture(hold_id, 71)),
                         RejectionReason::kCaptureExceedsHold));
  EXPECT_TRUE(IsRejected(Submit("c-2", Operation::Capture("no-such-hold")),
                         RejectionReason::kHoldNotFound));
  EXPECT_TRUE(IsRejected(Submit("v-1", Operation::Void(transfer->transaction.id)),
                         RejectionReason::kHoldNotFound))
      << "a transaction that is not a hold is no hold";
  EXPECT_TRUE(IsRejected(Submit("r-1", Operation::Reverse(hold_id)),
                         RejectionReason::kNotReversible))
      << "a hold posted nothing: void it instead";
  EXPECT_EQ(TakeSnapshot(), before);
  EXPECT_TRUE(IsCommitted(Submit("c-1", Operation::Capture(hold_id, 70)))) << "key left unused";
}

TEST_P(ConformanceTest, ACaptureCanBeReversedLikeAnyPosting) {
  Fund("alice", 100);
  std::string hold_id = HoldIdOf(Submit("h-1", HoldOp("alice", "bob", 70)));
  absl::StatusOr<Outcome> captured = Submit("c-1", Operation::Capture(hold_id));
  ASSERT_TRUE(IsCommitted(captured));
  ASSERT_TRUE(IsCommitted(Submit("r-1", Operation::Reverse(captured->transaction.id))));
  EXPECT_EQ(BalanceOf("alice"), 100);
  EXPECT_EQ(StatusOf(ledger(), hold_id), HoldStatus::kCaptured) << "a refund does not reopen it";
  ExpectVerified(engine());
}

// ---- expiry -------------------------------------------------------------------------

TEST_P(ConformanceTest, ALapsedHoldReleasesAtOnceAndTheSweeperRecordsIt) {
  Fund("alice", 100);
  std::string hold_id =
      HoldIdOf(Submit("h-1", HoldOpFor("alice", "bob", 70, absl::Seconds(60))));
  absl::StatusOr<Hold> placed = ledger().GetHold(hold_id);
  ASSERT_TRUE(placed.ok());
  EXPECT_EQ(placed->terms.expires_at, clock().Now() + absl::Seconds(60));

  clock().Advance(absl::Seconds(60));  // expires_at itself is past
  EXPECT_EQ(StatusOf(ledger(), hold_id), HoldStatus::kExpired) << "before any sweep";
  absl::StatusOr<Account> alice = ledger().GetAccount("alice");
  EXPECT_EQ(alice->pending_debits, 0);
  EXPECT_EQ(alice->Available(), 100);
  EXPECT_EQ(ledger().GetAccount("bob")->pending_credits, 0);
  Snapshot before = TakeSnapshot();
  EXPECT_TRUE(IsRejected(Submit("c-1", Operation::Capture(hold_id)), RejectionReason::kHoldExpired));
  EXPECT_TRUE(IsRejected(Submit("v-1", Operation::Void(hold_id)), RejectionReason::kHoldExpired));
  EXPECT_EQ(TakeSnapshot(), before);
  // The released amount is spendable before the sweep.
  ASSERT_TRUE(IsCommitted(Submit("t-1", Operation::Transfer("alice", "carol", "CREDITS", 100))));
  ExpectVerified(engine());

  absl::StatusOr<int64_t> expired = ledger().ExpireHolds();
  ASSERT_TRUE(expired.ok()) << expired.status();
  EXPECT_EQ(*expired, 1);
  absl::StatusOr<std::optional<Hold>> stored = engine().GetHold(hold_id);
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ((*stored)->status, HoldStatus::kExpired);
  ASSERT_TRUE((*stored)->settled_by.has_value());
  absl::StatusOr<Transaction> expiry = ledger().GetTransaction(*(*stored)->settled_by);
  ASSERT_TRUE(expiry.ok()) << expiry.status();
  EXPECT_EQ(expiry->kind, OperationKind::kExpire);
  EXPECT_EQ(expiry->hold_id, hold_id);
  EXPECT_TRUE(expiry->entries.empty());
  absl::StatusOr<std::optional<Account>> stored_alice = engine().GetAccount("alice");
  EXPECT_EQ((*stored_alice)->pending_debits, 0) << "the sweep released the stored amount";
  std::vector<OutboxEvent> events = engine().ListEvents(0, 1000).value();
  EXPECT_EQ(events.back().transaction_id, expiry->id) << "consumers learn of the expiry";
  EXPECT_EQ(*ledger().ExpireHolds(), 0) << "nothing left to expire";
  ExpectVerified(engine());
}

TEST_P(ConformanceTest, AHoldWithAnAbsoluteExpiryIsCapturableUntilThen) {
  Fund("alice", 100);
  Operation op = HoldOp("alice", "bob", 70);
  op.expires_at = clock().Now() + absl::Minutes(5);
  std::string late = HoldIdOf(Submit("h-1", op));
  std::string in_time = HoldIdOf(Submit("h-2", HoldOp("alice", "bob", 30)));
  clock().Advance(absl::Minutes(5) - absl::Microseconds(1));
  EXPECT_EQ(StatusOf(ledger(), late), HoldStatus::kPending);
  clock().Advance(absl::Microseconds(1));
  EXPECT_TRUE(IsRejected(Submit("c-1", Operation::Capture(late)), RejectionReason::kHoldExpired));
  EXPECT_TRUE(IsCommitted(Submit("c-2", Operation::Capture(in_time)))) << "no expiry: still pending";
  ExpectVerified(engine());
}

TEST_P(ConformanceTest, ClosingAnAccountWaitsForItsHolds) {
  ASSERT_TRUE(IsCommitted(Submit("h-0", HoldOp("issuance", "carol", 5))));
  std::string hold_id = engine().ListHolds("carol", "", 10).value().at(0).id;
  absl::Status refused = ledger().CloseAccount("carol");
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  EXPECT_NE(refused.message().find("pending"), std::string_view::npos) << refused;
  ASSERT_TRUE(IsCommitted(Submit("v-0", Operation::Void(hold_id))));
  EXPECT_TRUE(ledger().CloseAccount("carol").ok());

  Fund("alice", 10);
  ASSERT_TRUE(IsCommitted(Submit("h-1", HoldOpFor("alice", "bob", 10, absl::Seconds(1)))));
  EXPECT_TRUE(IsRejected(Submit("t-1", Operation::Transfer("bob", "platform", "CREDITS", 1)),
                         RejectionReason::kInsufficientFunds))
      << "bob has nothing posted: a pending credit is not spendable";
  clock().Advance(absl::Seconds(1));
  ASSERT_TRUE(IsCommitted(Submit("t-2", Operation::Transfer("alice", "platform", "CREDITS", 10))));
  EXPECT_TRUE(ledger().CloseAccount("alice").ok()) << "a lapsed hold is expired on the way";
  EXPECT_TRUE(ledger().CloseAccount("bob").ok());
  ExpectVerified(engine());
}

// ---- races --------------------------------------------------------------------------

TEST_P(ConformanceTest, ExactlyOneOfCaptureVoidAndExpiryWinsARace) {
  const int rounds = 12;
  Fund("alice", 10 * rounds);
  for (int round = 0; round < rounds; ++round) {
    std::string hold_id = HoldIdOf(
        Submit(absl::StrCat("h-", round), HoldOpFor("alice", "bob", 10, absl::Seconds(30))));
    // The clock passes the expiry while the three race, so any of them may win.
    std::atomic<bool> go{false};
    absl::StatusOr<Outcome> captured, voided;
    absl::StatusOr<int64_t> swept;
    std::vector<std::thread> racers;
    auto start = [&go] {
      while (!go) std::this_thread::yield();
    };
    racers.emplace_back([&] {
      start();
      captured = Submit(absl::StrCat("c-", round), Operation::Capture(hold_id));
    });
    racers.emplace_back([&] {
      start();
      voided = Submit(absl::StrCat("v-", round), Operation::Void(hold_id));
    });
    racers.emplace_back([&] {
      start();
      swept = ledger().ExpireHolds();
    });
    racers.emplace_back([&] {
      start();
      if (round % 2 == 1) clock().Advance(absl::Seconds(30));
    });
    go = true;
    for (std::thread& racer : racers) racer.join();
    ASSERT_TRUE(swept.ok()) << swept.status();
    // Past the expiry now in every round: a hold nobody settled is the sweep's to expire.
    if (round % 2 == 0) clock().Advance(absl::Seconds(30));
    absl::StatusOr<int64_t> swept_after = ledger().ExpireHolds();
    ASSERT_TRUE(swept_after.ok()) << swept_after.status();
    int64_t wins = (IsCommitted(captured) ? 1 : 0) + (IsCommitted(voided) ? 1 : 0) + *swept +
                   *swept_after;
    EXPECT_EQ(wins, 1) << "round " << round << ": capture " << Show(captured) << ", void "
                       << Show(voided) << ", swept " << *swept << " then " << *swept_after;
    EXPECT_NE(StatusOf(ledger(), hold_id), HoldStatus::kPending);
  }
  EXPECT_EQ(ledger().GetAccount("alice")->pending_debits, 0);
  ExpectVerified(engine());
}

// ---- velocity, batches, listing -----------------------------------------------------

TEST_P(ConformanceTest, VelocityCountsAPendingHoldOnceAndItsCaptureNotAgain) {
  std::unique_ptr<Ledger> limited = LedgerWith(
      {.velocity_limits = {{.window = absl::Hours(1), .debit_amount_max = 100}}});
  Fund("alice", 500);
  auto submit = [&](const std::string& key, Operation op) {
    return limited->Submit(SubmitRequest{.key = key, .operation = std::move(op)});
  };
  absl::StatusOr<Outcome> held = submit("h-1", HoldOp("alice", "bob", 80));
  ASSERT_TRUE(IsCommitted(held)) << Show(held);
  EXPECT_TRUE(IsRejected(submit("t-1", Operation::Transfer("alice", "carol", "CREDITS", 30)),
                         RejectionReason::kVelocityAmountExceeded));
  ASSERT_TRUE(IsCommitted(submit("c-1", Operation::Capture(held->transaction.id))));
  EXPECT_TRUE(IsCommitted(submit("t-2", Operation::Transfer("alice", "carol", "CREDITS", 20))))
      << "80 captured + 20: the capture did not count twice";
  EXPECT_TRUE(IsRejected(submit("t-3", Operation::Transfer("alice", "carol", "CREDITS", 1)),
                         RejectionReason::kVelocityAmountExceeded));
  absl::StatusOr<Outcome> second = submit("h-2", HoldOp("alice", "bob", 1));
  EXPECT_TRUE(IsRejected(second, RejectionReason::kVelocityAmountExceeded)) << Show(second);
}

TEST_P(ConformanceTest, ABatchPlacesSettlesAndSpendsInOrder) {
  Fund("alice", 100);
  std::string earlier = HoldIdOf(Submit("h-0", HoldOp("alice", "bob", 20)));
  absl::StatusOr<std::vector<SubmitResult>> results = ledger().SubmitBatch({.items = {
      {.key = "b-1", .operation = HoldOp("alice", "bob", 50)},
      {.key = "b-2", .operation = Operation::Transfer("alice", "carol", "CREDITS", 31)},
      {.key = "b-3", .operation = Operation::Void(earlier)},
      {.key = "b-4", .operation = Operation::Transfer("alice", "carol", "CREDITS", 31)},
      {.key = "b-5", .operation = Operation::Capture(earlier)},
  }});
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 5u);
  EXPECT_TRUE(IsCommitted((*results)[0])) << Show((*results)[0]);
  EXPECT_TRUE(IsRejected((*results)[1], RejectionReason::kInsufficientFunds)) << "30 available";
  EXPECT_TRUE(IsCommitted((*results)[2])) << Show((*results)[2]);
  EXPECT_TRUE(IsCommitted((*results)[3])) << "the void released 20";
  EXPECT_TRUE(IsRejected((*results)[4], RejectionReason::kHoldVoided)) << Show((*results)[4]);
  absl::StatusOr<Account> alice = ledger().GetAccount("alice");
  EXPECT_EQ(alice->balance, 69);
  EXPECT_EQ(alice->pending_debits, 50);
  ExpectVerified(engine());
}

TEST_P(ConformanceTest, AnAccountListsItsHoldsOnBothSidesInPagesAndTheLedgerListsEveryHold) {
  Fund("alice", 100);
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    ids.push_back(HoldIdOf(Submit(absl::StrCat("g-", i),
                                  i % 2 == 0 ? HoldOp("alice", "bob", 10) : HoldOp("issuance", "alice", 1))));
  }
  absl::StatusOr<std::vector<Hold>> first = ledger().ListHolds("alice", "", 3);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->size(), 3u);
  absl::StatusOr<std::vector<Hold>> rest = ledger().ListHolds("alice", first->back().id, 10);
  ASSERT_TRUE(rest.ok());
  std::vector<std::string> listed;
  for (const Hold& hold : *first) listed.push_back(hold.id);
  for (const Hold& hold : *rest) listed.push_back(hold.id);
  std::vector<std::string> expected = ids;
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(listed, expected);
  EXPECT_EQ(ledger().ListHolds("bob", "", 10)->size(), 3u);
  EXPECT_EQ(ledger().ListHolds("nobody", "", 10).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ledger().GetHold("nothing").status().code(), absl::StatusCode::kNotFound);

  // No account: every hold, alice's and those she is no side of.
  expected.push_back(HoldIdOf(Submit("g-carol", HoldOp("issuance", "carol", 1))));
  std::sort(expected.begin(), expected.end());
  absl::StatusOr<std::vector<Hold>> every = ledger().ListHolds("", "", 10);
  ASSERT_TRUE(every.ok()) << every.status();
  std::vector<std::string> every_id;
  for (const Hold& hold : *every) every_id.push_back(hold.id);
  EXPECT_EQ(every_id, expected);
}

}  // namespace
}  // namespace ledger::testing
