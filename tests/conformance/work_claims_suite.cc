// Conformance: run-idempotently work claims (idempotency/run_idempotently.h) over every
// engine's WorkClaimStore. Time moves only through the fixture's ManualClock.
#include <atomic>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/barrier.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "base/status.h"
#include "idempotency/key.h"
#include "idempotency/run_idempotently.h"
#include "nlohmann/json.hpp"
#include "tests/conformance/conformance_fixture.h"

namespace ledger::testing {
namespace {

constexpr int kRacingWorkers = 16;

KeyIdentity ChargeIdentity(std::string key = "order-1001") {
  return KeyIdentity{"gateway.charge", Scope{"acme", "user-42"}, std::move(key)};
}

nlohmann::json ChargePayload(std::string amount = "1500") {
  return {{"amount", std::move(amount)}, {"currency", "USD"}, {"card", "tok_visa"}};
}

// A unit of work that counts its invocations and returns a fixed result.
struct CountingWork {
  std::string result;
  std::atomic<int> invocations{0};

  std::function<absl::StatusOr<std::string>()> Fn() {
    return [this]() -> absl::StatusOr<std::string> {
      invocations.fetch_add(1);
      return result;
    };
  }
};

std::function<absl::StatusOr<std::string>()> FailingWork(std::atomic<int>& invocations) {
  return [&invocations]() -> absl::StatusOr<std::string> {
    invocations.fetch_add(1);
    return absl::UnavailableError("gateway unreachable");
  };
}

// The value, or the error as text, so a failed run shows up in the comparison.
std::string ValueOrError(const absl::StatusOr<std::string>& result) {
  return result.ok() ? *result : "error: " + result.status().ToString();
}

WorkOptions LeaseOf(absl::Duration lease) {
  WorkOptions options;
  options.lease = lease;
  return options;
}

TEST_P(ConformanceTest, WorkFirstRunRunsWorkAndRetryReplaysStoredResult) {
  IdempotentRunner runner(engine().work_claims(), clock());
  CountingWork first{"receipt-1"};
  CountingWork retry{"receipt-2"};

  absl::StatusOr<std::string> ran = runner.Run(ChargeIdentity(), ChargePayload(), {}, first.Fn());
  ASSERT_TRUE(ran.ok()) << ran.status();
  EXPECT_EQ(*ran, "receipt-1");

  clock().Advance(absl::Minutes(1));
  absl::StatusOr<std::string> replayed =
      runner.Run(ChargeIdentity(), ChargePayload(), {}, retry.Fn());
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  EXPECT_EQ(*replayed, "receipt-1");
  EXPECT_EQ(first.invocations.load(), 1);
  EXPECT_EQ(retry.invocations.load(), 0);
}

TEST_P(ConformanceTest, WorkThatThrowsIsAFailureAndReleasesTheClaim) {
  IdempotentRunner runner(engine().work_claims(), clock());
  auto throwing = []() -> absl::StatusOr<std::string> { throw std::runtime_error("gateway bug"); };
  CountingWork retry{"receipt-after-throw"};

  absl::StatusOr<std::string> failed = runner.Run(ChargeIdentity(), ChargePayload(), {}, throwing);
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInternal) << failed.status();
  EXPECT_NE(failed.status().message().find("gateway bug"), std::string::npos) << failed.status();

  absl::StatusOr<std::string> retried = runner.Run(ChargeIdentity(), ChargePayload(), {}, retry.Fn());
  ASSERT_TRUE(retried.ok()) << retried.status();  // released at once: no lease to wait out
  EXPECT_EQ(*retried, "receipt-after-throw");
  EXPECT_EQ(retry.invocations.load(), 1);
}

TEST_P(ConformanceTest, WorkReserveOfCompletedWorkReplaysTheStoredClaim) {
  IdempotentRunner runner(engine().work_claims(), clock());
  absl::StatusOr<Reservation> reserved = runner.Reserve(ChargeIdentity(), ChargePayload(), {});
  ASSERT_TRUE(reserved.ok()) << reserved.status();
  ASSERT_TRUE(reserved->reserved());
  EXPECT_EQ(reserved->claim.attempt, 1);
  EXPECT_FALSE(reserved->taken_over);
  ASSERT_TRUE(runner.Complete(*reserved, R"({"charge":"ch_1"})").ok());

  absl::StatusOr<Reservation> replayed = runner.Reserve(ChargeIdentity(), ChargePayload(), {});
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  EXPECT_FALSE(replayed->reserved());
  EXPECT_EQ(replayed->result(), R"({"charge":"ch_1"})");
  EXPECT_EQ(replayed->claim.state, WorkState::kCompleted);
  EXPECT_EQ(replayed->claim.identity, ChargeIdentity());
  EXPECT_EQ(replayed->claim.created_at, reserved->claim.created_at);
  EXPECT_EQ(runner.Complete(*replayed, "other").code(), absl::StatusCode::kFailedPrecondition);
}

TEST_P(ConformanceTest, WorkRetryUnderReplayPolicyErrorIsDuplicate) {
  IdempotentRunner runner(engine().work_claims(), clock());
  CountingWork work{"receipt-1"};
  ASSERT_TRUE(runner.Run(ChargeIdentity(), ChargePayload(), {}, work.Fn()).ok());

  WorkOptions refuse_replay;
  refuse_replay.replay = ReplayPolicy::kError;
  absl::StatusOr<std::string> retried =
      runner.Run(ChargeIdentity(), ChargePayload(), refuse_replay, work.Fn());
  EXPECT_TRUE(IsDuplicate(retried.status())) << retried.status();
  EXPECT_EQ(retried.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(work.invocations.load(), 1);
}

TEST_P(ConformanceTest, WorkRetryWithDifferentPayloadIsConflictAndChangesNothing) {
  IdempotentRunner runner(engine().work_claims(), clock());
  CountingWork work{"receipt-1"};
  ASSERT_TRUE(runner.Run(ChargeIdentity(), ChargePayload("1500"), {}, work.Fn()).ok());

  absl::StatusOr<std::string> conflicting =
      runner.Run(ChargeIdentity(), ChargePayload("9900"), {}, work.Fn());
  EXPECT_TRUE(IsConflict(conflicting.status())) << conflicting.status();
  EXPECT_EQ(work.invocations.load(), 1);

  absl::StatusOr<std::string> replayed =
      runner.Run(ChargeIdentity(), ChargePayload("1500"), {}, work.Fn());
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  EXPECT_EQ(*replayed, "receipt-1");
}

TEST_P(ConformanceTest, WorkDifferentPayloadWhileReservedIsConflict) {
  IdempotentRunner runner(engine().work_claims(), clock());
  absl::StatusOr<Reservation> held = runner.Reserve(ChargeIdentity(), ChargePayload("1500"), {});
  ASSERT_TRUE(held.ok()) << held.status();

  absl::StatusOr<Reservation> other = runner.Reserve(ChargeIdentity(), ChargePayload("9900"), {});
  EXPECT_TRUE(IsConflict(other.status())) << other.status();
}

TEST_P(ConformanceTest, WorkPendingClaimIsInProgressForSecondCaller) {
  IdempotentRunner runner(engine().work_claims(), clock());
  absl::StatusOr<Reservation> first = runner.Reserve(ChargeIdentity(), ChargePayload(), {});
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(first->reserved());

  clock().Advance(absl::Minutes(4));  // the default lease (5 min) still runs
  absl::StatusOr<Reservation> second = runner.Reserve(ChargeIdentity(), ChargePayload(), {});
  EXPECT_TRUE(IsInProgress(second.status())) << second.status();

  CountingWork work{"receipt-2"};
  absl::StatusOr<std::string> run = runner.Run(ChargeIdentity(), ChargePayload(), {}, work.Fn());
  EXPECT_TRUE(IsInProgress(run.status())) << run.status();
  EXPECT_EQ(work.invocations.load(), 0);

  ASSERT_TRUE(runner.Complete(*first, "receipt-1").ok());
  absl::StatusOr<std::string> replayed =
      runner.Run(ChargeIdentity(), ChargePayload(), {}, work.Fn());
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  EXPECT_EQ(*replayed, "receipt-1");
}

TEST_P(ConformanceTest, WorkCrashedWorkersClaimIsTakenOverAndOldOwnerCannotComplete) {
  IdempotentRunner runner(engine().work_claims(), clock());
  const WorkOptions options = LeaseOf(absl::Minutes(1));
  absl::StatusOr<Reservation> crashed = runner.Reserve(ChargeIdentity(), ChargePayload(), options);
  ASSERT_TRUE(crashed.ok()) << crashed.status();

  clock().Advance(absl::Minutes(1));  // the lease ends exactly now
  absl::StatusOr<Reservation> successor =
      runner.Reserve(ChargeIdentity(), ChargePayload(), options);
  ASSERT_TRUE(successor.ok()) << successor.status();
  ASSERT_TRUE(successor->reserved());
  EXPECT_TRUE(successor->taken_over);
  EXPECT_EQ(successor->claim.attempt, 2);
  EXPECT_NE(successor->claim.owner, crashed->claim.owner);
  EXPECT_EQ(successor->claim.lease_expires_at, clock().Now() + absl::Minutes(1));

  absl::Status late_complete = runner.Complete(*crashed, "receipt-from-crashed-worker");
  EXPECT_EQ(late_complete.code(), absl::StatusCode::kFailedPrecondition) << late_complete;
  EXPECT_EQ(runner.Fail(*crashed).code(), absl::StatusCode::kFailedPrecondition);

  ASSERT_TRUE(runner.Complete(*successor, "receipt-attempt-2").ok());
  CountingWork retry{"receipt-3"};
  absl::StatusOr<std::string> replayed =
      runner.Run(ChargeIdentity(), ChargePayload(), options, retry.Fn());
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  EXPECT_EQ(*replayed, "receipt-attempt-2");
  EXPECT_EQ(retry.invocations.load(), 0);
}

TEST_P(ConformanceTest, WorkOwnerPastItsLeaseStillCompletesWhenNobodyTookOver) {
  IdempotentRunner runner(engine().work_claims(), clock());
  const WorkOptions options = LeaseOf(absl::Minutes(1));
  absl::StatusOr<Reservation> slow = runner.Reserve(ChargeIdentity(), ChargePayload(), options);
  ASSERT_TRUE(slow.ok()) << slow.status();

  clock().Advance(absl::Minutes(3));
  ASSERT_TRUE(runner.Complete(*slow, "receipt-late").ok());

  absl::StatusOr<Reservation> replayed = runner.Reserve(ChargeIdentity(), ChargePayload(), options);
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  EXPECT_FALSE(replayed->reserved());
  EXPECT_EQ(replayed->result(), "receipt-late");
}

TEST_P(ConformanceTest, WorkFailReleasesClaimAndRetryRunsAgain) {
  IdempotentRunner runner(engine().work_claims(), clock());
  std::atomic<int> failing_invocations{0};
  absl::StatusOr<std::string> failed =
      runner.Run(ChargeIdentity(), ChargePayload(), {}, FailingWork(failing_invocations));
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kUnavailable) << failed.status();
  EXPECT_EQ(failing_invocations.load(), 1);

  // No clock advance: the release, not a lease running out, lets the retry in.
  CountingWork retry{"receipt-retry"};
  absl::StatusOr<std::string> retried =
      runner.Run(ChargeIdentity(), ChargePayload(), {}, retry.Fn());
  ASSERT_TRUE(retried.ok()) << retried.status();
  EXPECT_EQ(*retried, "receipt-retry");
  EXPECT_EQ(retry.invocations.load(), 1);
}

TEST_P(ConformanceTest, WorkExplicitFailLetsAnotherPayloadReserve) {
  IdempotentRunner runner(engine().work_claims(), clock());
  absl::StatusOr<Reservation> held = runner.Reserve(ChargeIdentity(), ChargePayload("1500"), {});
  ASSERT_TRUE(held.ok()) << held.status();
  ASSERT_TRUE(runner.Fail(*held).ok());
  EXPECT_EQ(runner.Fail(*held).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(runner.Complete(*held, "too late").code(), absl::StatusCode::kFailedPrecondition);

  absl::StatusOr<Reservation> next = runner.Reserve(ChargeIdentity(), ChargePayload("9900"), {});
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_TRUE(next->reserved());
  EXPECT_FALSE(next->taken_over);
  EXPECT_EQ(next->claim.attempt, 1);
}

TEST_P(ConformanceTest, WorkSweeperMarksExpiredLeasesAbandonedAndAbandonedClaimIsTakenOver) {
  IdempotentRunner runner(engine().work_claims(), clock());
  absl::StatusOr<Reservation> short_lease =
      runner.Reserve(ChargeIdentity("short"), ChargePayload(), LeaseOf(absl::Minutes(1)));
  absl::StatusOr<Reservation> long_lease =
      runner.Reserve(ChargeIdentity("long"), ChargePayload(), LeaseOf(absl::Minutes(10)));
  CountingWork done{"receipt-done"};
  ASSERT_TRUE(short_lease.ok() && long_lease.ok());
  ASSERT_TRUE(runner.Run(ChargeIdentity("done"), ChargePayload(), {}, done.Fn()).ok());

  clock().Advance(absl::Minutes(2));
  absl::StatusOr<int64_t> swept = runner.SweepAbandoned();
  ASSERT_TRUE(swept.ok()) << swept.status();
  EXPECT_EQ(*swept, 1);  // only the short lease: the long one runs, the done one completed
  absl::StatusOr<int64_t> swept_again = runner.SweepAbandoned();
  ASSERT_TRUE(swept_again.ok()) << swept_again.status();
  EXPECT_EQ(*swept_again, 0);

  absl::StatusOr<Reservation> successor =
      runner.Reserve(ChargeIdentity("short"), ChargePayload(), LeaseOf(absl::Minutes(1)));
  ASSERT_TRUE(successor.ok()) << successor.status();
  EXPECT_TRUE(successor->reserved());
  EXPECT_TRUE(successor->taken_over);
  EXPECT_EQ(successor->claim.attempt, 2);
  EXPECT_EQ(successor->claim.state, WorkState::kPending);
  EXPECT_EQ(runner.Complete(*short_lease, "stale").code(), absl::StatusCode::kFailedPrecondition);

  absl::StatusOr<Reservation> still_running =
      runner.Reserve(ChargeIdentity("long"), ChargePayload(), LeaseOf(absl::Minutes(10)));
  EXPECT_TRUE(IsInProgress(still_running.status())) << still_running.status();
}

TEST_P(ConformanceTest, WorkAbandonedClaimWithAnotherPayloadIsConflict) {
  IdempotentRunner runner(engine().work_claims(), clock());
  const WorkOptions options = LeaseOf(absl::Minutes(1));
  ASSERT_TRUE(runner.Reserve(ChargeIdentity(), ChargePayload("1500"), options).ok());
  clock().Advance(absl::Minutes(2));
  ASSERT_TRUE(runner.SweepAbandoned().ok());

  absl::StatusOr<Reservation> other =
      runner.Reserve(ChargeIdentity(), ChargePayload("9900"), options);
  EXPECT_TRUE(IsConflict(other.status())) << other.status();
}

TEST_P(ConformanceTest, WorkExpiredClaimIsReusableWithAnotherPayload) {
  IdempotentRunner runner(engine().work_claims(), clock());
  WorkOptions hour;
  hour.ttl = absl::Hours(1);
  CountingWork first{"receipt-1"};
  ASSERT_TRUE(runner.Run(ChargeIdentity(), ChargePayload("1500"), hour, first.Fn()).ok());

  clock().Advance(absl::Minutes(59));
  CountingWork other{"receipt-other"};
  EXPECT_TRUE(
      IsConflict(runner.Run(ChargeIdentity(), ChargePayload("9900"), hour, other.Fn()).status()));

  clock().Advance(absl::Minutes(1));  // expires_at <= now: expired
  absl::StatusOr<Reservation> reused =
      runner.Reserve(ChargeIdentity(), ChargePayload("9900"), hour);
  ASSERT_TRUE(reused.ok()) << reused.status();
  EXPECT_TRUE(reused->reserved());
  EXPECT_FALSE(reused->taken_over);
  EXPECT_EQ(reused->claim.attempt, 1);
  EXPECT_EQ(reused->claim.created_at, clock().Now());
  ASSERT_TRUE(runner.Complete(*reused, "receipt-other").ok());

  absl::StatusOr<std::string> replayed =
      runner.Run(ChargeIdentity(), ChargePayload("9900"), hour, other.Fn());
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  EXPECT_EQ(*replayed, "receipt-other");
  EXPECT_EQ(other.invocations.load(), 0);
}

TEST_P(ConformanceTest, WorkPruneDeletesOnlyExpiredClaims) {
  IdempotentRunner runner(engine().work_claims(), clock());
  WorkOptions hour;
  hour.ttl = absl::Hours(1);
  WorkOptions day;  // the default ttl, 24 h
  CountingWork work{"receipt"};
  ASSERT_TRUE(runner.Run(ChargeIdentity("short-lived"), ChargePayload(), hour, work.Fn()).ok());
  ASSERT_TRUE(runner.Run(ChargeIdentity("long-lived"), ChargePayload(), day, work.Fn()).ok());

  clock().Advance(absl::Hours(2));
  absl::StatusOr<int64_t> pruned = runner.Prune();
  ASSERT_TRUE(pruned.ok()) << pruned.status();
  EXPECT_EQ(*pruned, 1);

  absl::StatusOr<Reservation> kept =
      runner.Reserve(ChargeIdentity("long-lived"), ChargePayload(), day);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_FALSE(kept->reserved());
  absl::StatusOr<Reservation> gone =
      runner.Reserve(ChargeIdentity("short-lived"), ChargePayload(), hour);
  ASSERT_TRUE(gone.ok()) << gone.status();
  EXPECT_TRUE(gone->reserved());
}

TEST_P(ConformanceTest, WorkRacingRunsOnOneIdentityRunTheWorkExactlyOnce) {
  IdempotentRunner runner(engine().work_claims(), clock());
  CountingWork work{"receipt-race"};
  absl::Barrier start(kRacingWorkers);
  std::vector<absl::StatusOr<std::string>> results(kRacingWorkers,
                                                   absl::UnknownError("did not run"));
  std::vector<std::thread> workers;
  for (int i = 0; i < kRacingWorkers; ++i) {
    workers.emplace_back([&, i] {
      start.Block();
      results[i] = runner.Run(ChargeIdentity(), ChargePayload(), {}, work.Fn());
    });
  }
  for (std::thread& worker : workers) worker.join();

  EXPECT_EQ(work.invocations.load(), 1);
  int completed = 0;
  for (const absl::StatusOr<std::string>& result : results) {
    if (result.ok()) {
      EXPECT_EQ(*result, "receipt-race");
      ++completed;
    } else {
      EXPECT_TRUE(IsInProgress(result.status())) << result.status();
    }
  }
  EXPECT_GE(completed, 1);  // the winner's own Run returns the result

  absl::StatusOr<std::string> after = runner.Run(ChargeIdentity(), ChargePayload(), {}, work.Fn());
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(*after, "receipt-race");
  EXPECT_EQ(work.invocations.load(), 1);
}

TEST_P(ConformanceTest, WorkSameKeyInAnotherScopeOrNamespaceIsSeparateWork) {
  IdempotentRunner runner(engine().work_claims(), clock());
  KeyIdentity acme = ChargeIdentity("shared-key");
  KeyIdentity other_tenant = acme;
  other_tenant.scope.tenant = "globex";
  KeyIdentity other_actor = acme;
  other_actor.scope.actor = "user-43";
  KeyIdentity other_namespace = acme;
  other_namespace.key_namespace = "gateway.refund";

  CountingWork acme_work{"acme"}, tenant_work{"globex"}, actor_work{"user-43"},
      namespace_work{"refund"};
  // Different payloads too: another scope never conflicts, it is another operation.
  ASSERT_EQ(ValueOrError(runner.Run(acme, ChargePayload("1"), {}, acme_work.Fn())), "acme");
  ASSERT_EQ(ValueOrError(runner.Run(other_tenant, ChargePayload("2"), {}, tenant_work.Fn())),
            "globex");
  ASSERT_EQ(ValueOrError(runner.Run(other_actor, ChargePayload("3"), {}, actor_work.Fn())),
            "user-43");
  ASSERT_EQ(ValueOrError(runner.Run(other_namespace, ChargePayload("4"), {}, namespace_work.Fn())),
            "refund");

  CountingWork never{"never"};
  EXPECT_EQ(ValueOrError(runner.Run(acme, ChargePayload("1"), {}, never.Fn())), "acme");
  EXPECT_EQ(ValueOrError(runner.Run(other_tenant, ChargePayload("2"), {}, never.Fn())), "globex");
  EXPECT_EQ(ValueOrError(runner.Run(other_actor, ChargePayload("3"), {}, never.Fn())), "user-43");
  EXPECT_EQ(ValueOrError(runner.Run(other_namespace, ChargePayload("4"), {}, never.Fn())),
            "refund");
  EXPECT_EQ(never.invocations.load(), 0);
  EXPECT_EQ(acme_work.invocations.load() + tenant_work.invocations.load() +
                actor_work.invocations.load() + namespace_work.invocations.load(),
            4);
}

TEST_P(ConformanceTest, WorkResultIsStoredByteForByte) {
  IdempotentRunner runner(engine().work_claims(), clock());
  // Quotes, backslashes, multi-byte UTF-8 and the largest size every engine accepts.
  const std::string unusual = "{\"note\":\"caf\xC3\xA9 \\\\ 'quoted' \xE2\x82\xAC\"}\n\t";
  const std::string largest(kWorkResultBytesMax, 'x');
  CountingWork unusual_work{unusual};
  CountingWork largest_work{largest};
  ASSERT_TRUE(runner.Run(ChargeIdentity("unusual"), ChargePayload(), {}, unusual_work.Fn()).ok());
  ASSERT_TRUE(runner.Run(ChargeIdentity("largest"), ChargePayload(), {}, largest_work.Fn()).ok());

  absl::StatusOr<Reservation> unusual_replay =
      runner.Reserve(ChargeIdentity("unusual"), ChargePayload(), {});
  absl::StatusOr<Reservation> largest_replay =
      runner.Reserve(ChargeIdentity("largest"), ChargePayload(), {});
  ASSERT_TRUE(unusual_replay.ok() && largest_replay.ok());
  EXPECT_EQ(unusual_replay->result(), unusual);
  EXPECT_EQ(largest_replay->result(), largest);
}

TEST_P(ConformanceTest, WorkBadInputIsInvalidArgumentAndWritesNothing) {
  IdempotentRunner runner(engine().work_claims(), clock());
  CountingWork work{"receipt"};
  std::vector<KeyIdentity> bad_identities = {
      ChargeIdentity(""),
      ChargeIdentity(std::string(kKeyBytesMax + 1, 'k')),
      ChargeIdentity("tab\there"),
      ChargeIdentity(std::string("nul\0byte", 8)),
      KeyIdentity{"", Scope{"acme", "user-42"}, "order-1"},
      KeyIdentity{"gateway|charge", Scope{"acme", "user-42"}, "order-1"},
      KeyIdentity{"gateway.charge", Scope{"acme/evil", "user-42"}, "order-1"},
      KeyIdentity{"gateway.charge", Scope{"acme", ""}, "order-1"}};
  for (const KeyIdentity& identity : bad_identities) {
    absl::StatusOr<std::string> run = runner.Run(identity, ChargePayload(), {}, work.Fn());
    EXPECT_EQ(run.status().code(), absl::StatusCode::kInvalidArgument)
        << identity.Encoded() << ": " << run.status();
  }

  WorkOptions zero_lease = LeaseOf(absl::ZeroDuration());
  WorkOptions lease_past_ttl = LeaseOf(absl::Hours(25));
  WorkOptions zero_ttl;
  zero_ttl.ttl = absl::ZeroDuration();
  WorkOptions ttl_past_max;
  ttl_past_max.ttl = kKeyTtlMax + absl::Hours(1);
  for (const WorkOptions& options : {zero_lease, lease_past_ttl, zero_ttl, ttl_past_max}) {
    EXPECT_EQ(runner.Run(ChargeIdentity(), ChargePayload(), options, work.Fn()).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
  const nlohmann::json not_finite = {{"amount", std::numeric_limits<double>::infinity()}};
  EXPECT_EQ(runner.Run(ChargeIdentity(), not_finite, {}, work.Fn()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(work.invocations.load(), 0);

  // Nothing was written: far in the future there is nothing to sweep or prune.
  clock().Advance(kKeyTtlMax + absl::Hours(2));
  absl::StatusOr<int64_t> swept = runner.SweepAbandoned();
  absl::StatusOr<int64_t> pruned = runner.Prune();
  ASSERT_TRUE(swept.ok() && pruned.ok());
  EXPECT_EQ(*swept, 0);
  EXPECT_EQ(*pruned, 0);
}

TEST_P(ConformanceTest, WorkUnstorableResultIsInvalidArgumentAndClaimStaysPending) {
  IdempotentRunner runner(engine().work_claims(), clock());
  absl::StatusOr<Reservation> held = runner.Reserve(ChargeIdentity(), ChargePayload(), {});
  ASSERT_TRUE(held.ok()) << held.status();

  EXPECT_EQ(runner.Complete(*held, std::string(kWorkResultBytesMax + 1, 'x')).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(runner.Complete(*held, std::string("a\0b", 3)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(runner.Complete(*held, "\xC3\x28").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(IsInProgress(runner.Reserve(ChargeIdentity(), ChargePayload(), {}).status()));

  ASSERT_TRUE(runner.Complete(*held, "receipt").ok());
  absl::StatusOr<Reservation> replayed = runner.Reserve(ChargeIdentity(), ChargePayload(), {});
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  EXPECT_EQ(replayed->result(), "receipt");
}

}  // namespace
}  // namespace ledger::testing
