// Unit tests of IdempotentRunner and WebhookGuard over an in-test fake store, for the
// paths an engine cannot be made to take on demand: lost compare-and-set races, store
// errors, and claims in states that Reserve itself never writes.
#include "idempotency/run_idempotently.h"

#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "base/clock.h"
#include "base/status.h"
#include "idempotency/fingerprint.h"
#include "idempotency/stores.h"
#include "idempotency/webhook_guard.h"

namespace ledger {
namespace {

using IdentityTuple = std::tuple<std::string, std::string, std::string>;

IdentityTuple TupleOf(const KeyIdentity& identity) {
  return {identity.key_namespace, identity.scope.Encoded(), identity.key};
}

// The single-row semantics of stores.h over maps, plus injected errors and a hook that
// runs just before a compare-and-set, where a real race would change the row.
class FakeStore final : public WorkClaimStore, public WebhookStore {
 public:
  absl::StatusOr<WorkClaim> InsertWorkClaimIfAbsent(const WorkClaim& fresh) override {
    absl::MutexLock lock(&mutex_);
    if (!insert_error.ok()) return insert_error;
    return claims_.try_emplace(TupleOf(fresh.identity), fresh).first->second;
  }

  absl::StatusOr<bool> ReplaceWorkClaim(const KeyIdentity& identity,
                                        const std::string& expected_owner, int64_t expected_attempt,
                                        const WorkClaim& replacement) override {
    if (before_replace) before_replace();
    absl::MutexLock lock(&mutex_);
    ++replace_calls;
    if (!replace_error.ok()) return replace_error;
    auto it = claims_.find(TupleOf(identity));
    if (it == claims_.end() || it->second.owner != expected_owner ||
        it->second.attempt != expected_attempt) {
      return false;
    }
    it->second = replacement;
    return true;
  }

  absl::StatusOr<bool> DeleteWorkClaim(const KeyIdentity& identity,
                                       const std::string& owner) override {
    absl::MutexLock lock(&mutex_);
    if (!delete_error.ok()) return delete_error;
    auto it = claims_.find(TupleOf(identity));
    if (it == claims_.end() || it->second.owner != owner ||
        it->second.state != WorkState::kPending) {
      return false;
    }
    claims_.erase(it);
    return true;
  }

  absl::StatusOr<int64_t> MarkAbandonedWorkClaims(absl::Time now) override {
    absl::MutexLock lock(&mutex_);
    int64_t marked = 0;
    for (auto& [id, claim] : claims_) {
      if (claim.state == WorkState::kPending && claim.lease_expires_at <= now) {
        claim.state = WorkState::kAbandoned;
        ++marked;
      }
    }
    return marked;
  }

  absl::StatusOr<int64_t> PruneWorkClaims(absl::Time now) override {
    absl::MutexLock lock(&mutex_);
    return static_cast<int64_t>(
        std::erase_if(claims_, [&](const auto& entry) { return entry.second.expires_at <= now; }));
  }

  absl::StatusOr<bool> InsertWebhookEventIfAbsent(const std::string& provider,
                                                  const std::string& event_id,
                                                  absl::Time received_at) override {
    absl::MutexLock lock(&mutex_);
    return events_.try_emplace({provider, event_id}, received_at).second;
  }

  absl::StatusOr<bool> DeleteWebhookEvent(const std::string& provider,
                                          const std::string& event_id) override {
    absl::MutexLock lock(&mutex_);
    if (!delete_error.ok()) return delete_error;
    return events_.erase({provider, event_id}) > 0;
  }

  absl::StatusOr<int64_t> PruneWebhookEvents(absl::Time before) override {
    absl::MutexLock lock(&mutex_);
    return static_cast<int64_t>(
        std::erase_if(events_, [&](const auto& entry) { return entry.second < before; }));
  }

  // Direct access for arranging and checking rows.
  void Put(const WorkClaim& claim) {
    absl::MutexLock lock(&mutex_);
    claims_[TupleOf(claim.identity)] = claim;
  }
  std::optional<WorkClaim> Get(const KeyIdentity& identity) {
    absl::MutexLock lock(&mutex_);
    auto it = claims_.find(TupleOf(identity));
    if (it == claims_.end()) return std::nullopt;
    return it->second;
  }
  void Erase(const KeyIdentity& identity) {
    absl::MutexLock lock(&mutex_);
    claims_.erase(TupleOf(identity));
  }

  absl::Status insert_error = absl::OkStatus();
  absl::Status replace_error = absl::OkStatus();
  absl::Status delete_error = absl::OkStatus();
  std::function<void()> before_replace;
  int replace_calls = 0;

 private:
  absl::Mutex mutex_;
  std::map<IdentityTuple, WorkClaim> claims_;
  std::map<std::pair<std::string, std::string>, absl::Time> events_;
};

KeyIdentity Identity(std::string key = "order-1") {
  return KeyIdentity{"gateway.charge", Scope{"acme", "user-42"}, std::move(key)};
}

const nlohmann::json kPayload = {{"amount", "1500"}, {"currency", "USD"}};

class RunIdempotentlyTest : public ::testing::Test {
 protected:
  // A claim reserved at clock time, whose one-minute lease has run out since.
  Reservation ReserveAndLetLeaseRunOut() {
    WorkOptions options;
    options.lease = absl::Minutes(1);
    absl::StatusOr<Reservation> reservation = runner_.Reserve(Identity(), kPayload, options);
    EXPECT_TRUE(reservation.ok()) << reservation.status();
    clock_.Advance(absl::Minutes(2));
    return *reservation;
  }

  FakeStore store_;
  ManualClock clock_;
  IdempotentRunner runner_{store_, clock_};
};

TEST_F(RunIdempotentlyTest, LostTakeoverRaceReadsAgainAndReportsInProgress) {
  const Reservation crashed = ReserveAndLetLeaseRunOut();
  store_.before_replace = [&] {
    store_.before_replace = nullptr;
    WorkClaim rival = crashed.claim;  // another worker took it over first
    rival.owner = "rival";
    rival.attempt = 2;
    rival.lease_expires_at = clock_.Now() + absl::Minutes(5);
    store_.Put(rival);
  };

  absl::StatusOr<Reservation> lost = runner_.Reserve(Identity(), kPayload, {});
  EXPECT_TRUE(IsInProgress(lost.status())) << lost.status();
  EXPECT_EQ(store_.Get(Identity())->owner, "rival");
}

TEST_F(RunIdempotentlyTest, LostTakeoverRaceReplaysWhenTheWinnerCompleted) {
  const Reservation crashed = ReserveAndLetLeaseRunOut();
  store_.before_replace = [&] {
    store_.before_replace = nullptr;
    WorkClaim completed = crashed.claim;  // the old owner finished after all
    completed.state = WorkState::kCompleted;
    completed.result = "late-receipt";
    completed.attempt = 1;
    completed.owner = "someone-else";
    store_.Put(completed);
  };

  absl::StatusOr<Reservation> replayed = runner_.Reserve(Identity(), kPayload, {});
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  EXPECT_FALSE(replayed->reserved());
  EXPECT_EQ(replayed->result(), "late-receipt");
}

TEST_F(RunIdempotentlyTest, ClaimReleasedDuringRaceIsReservedFresh) {
  ReserveAndLetLeaseRunOut();
  store_.before_replace = [&] {
    store_.before_replace = nullptr;
    store_.Erase(Identity());
  };

  absl::StatusOr<Reservation> fresh = runner_.Reserve(Identity(), kPayload, {});
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_TRUE(fresh->reserved());
  EXPECT_FALSE(fresh->taken_over);
  EXPECT_EQ(fresh->claim.attempt, 1);
  EXPECT_EQ(store_.Get(Identity())->owner, fresh->claim.owner);
}

TEST_F(RunIdempotentlyTest, ReserveGivesUpAfterBoundedRoundsWhenClaimKeepsChangingHands) {
  ReserveAndLetLeaseRunOut();
  store_.before_replace = [&] {
    WorkClaim churned = *store_.Get(Identity());  // stays takeable, but never ours
    churned.attempt += 1;
    store_.Put(churned);
  };

  absl::StatusOr<Reservation> gave_up = runner_.Reserve(Identity(), kPayload, {});
  EXPECT_TRUE(IsInProgress(gave_up.status())) << gave_up.status();
  EXPECT_EQ(store_.replace_calls, kReserveRoundsMax);
}

TEST_F(RunIdempotentlyTest, TakeoverMovesExpiryToCoverTheNewAttempt) {
  WorkOptions options;
  options.lease = absl::Minutes(5);
  options.ttl = absl::Minutes(10);
  absl::StatusOr<Reservation> first = runner_.Reserve(Identity(), kPayload, options);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->claim.expires_at, clock_.Now() + absl::Minutes(10));

  clock_.Advance(absl::Minutes(8));
  absl::StatusOr<Reservation> successor = runner_.Reserve(Identity(), kPayload, options);
  ASSERT_TRUE(successor.ok()) << successor.status();
  ASSERT_TRUE(successor->taken_over);
  EXPECT_EQ(successor->claim.expires_at, clock_.Now() + absl::Minutes(10));
  EXPECT_EQ(successor->claim.lease_expires_at, clock_.Now() + absl::Minutes(5));
  EXPECT_EQ(successor->claim.created_at, first->claim.created_at);
  EXPECT_EQ(store_.Get(Identity()), successor->claim);
}

TEST_F(RunIdempotentlyTest, PendingClaimWithRunningLeaseIsNeverReusedEvenPastExpiry) {
  WorkClaim odd;  // not written by Reserve, which keeps expires_at >= lease_expires_at
  odd.identity = Identity();
  odd.fingerprint = *Fingerprint(kPayload);
  odd.owner = "worker-a";
  odd.lease_expires_at = clock_.Now() + absl::Minutes(5);
  odd.expires_at = clock_.Now() - absl::Minutes(1);
  store_.Put(odd);

  EXPECT_TRUE(IsInProgress(runner_.Reserve(Identity(), kPayload, {}).status()));
  EXPECT_TRUE(IsConflict(runner_.Reserve(Identity(), {{"other", "payload"}}, {}).status()));
  EXPECT_EQ(store_.Get(Identity()), odd);
}

TEST_F(RunIdempotentlyTest, CompleteStoresResultAndKeepsIdentityTimes) {
  absl::StatusOr<Reservation> reserved = runner_.Reserve(Identity(), kPayload, {});
  ASSERT_TRUE(reserved.ok()) << reserved.status();
  clock_.Advance(absl::Seconds(3));
  ASSERT_TRUE(runner_.Complete(*reserved, "receipt").ok());

  WorkClaim stored = *store_.Get(Identity());
  EXPECT_EQ(stored.state, WorkState::kCompleted);
  EXPECT_EQ(stored.result, "receipt");
  EXPECT_EQ(stored.owner, reserved->claim.owner);
  EXPECT_EQ(stored.attempt, 1);
  EXPECT_EQ(stored.created_at, reserved->claim.created_at);
  EXPECT_EQ(stored.expires_at, reserved->claim.expires_at);
  EXPECT_EQ(stored.updated_at, clock_.Now());
}

TEST_F(RunIdempotentlyTest, OwnerTokensAre128BitHexAndDistinct) {
  std::set<std::string> owners;
  for (int i = 0; i < 100; ++i) {
    absl::StatusOr<Reservation> reserved =
        runner_.Reserve(Identity("order-" + std::to_string(i)), kPayload, {});
    ASSERT_TRUE(reserved.ok()) << reserved.status();
    const std::string& owner = reserved->claim.owner;
    EXPECT_EQ(owner.size(), 32u);
    EXPECT_EQ(owner.find_first_not_of("0123456789abcdef"), std::string::npos) << owner;
    owners.insert(owner);
  }
  EXPECT_EQ(owners.size(), 100u);
}

TEST_F(RunIdempotentlyTest, StoreErrorOnReserveIsReturnedAndWorkDoesNotRun) {
  store_.insert_error = absl::UnavailableError("connection lost");
  bool ran = false;
  absl::StatusOr<std::string> result = runner_.Run(Identity(), kPayload, {}, [&] {
    ran = true;
    return absl::StatusOr<std::string>("receipt");
  });
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(ran);
}

TEST_F(RunIdempotentlyTest, RunReturnsTheWorksErrorEvenWhenReleaseFails) {
  store_.delete_error = absl::UnavailableError("connection lost");
  absl::StatusOr<std::string> result = runner_.Run(Identity(), kPayload, {}, [] {
    return absl::StatusOr<std::string>(absl::PermissionDeniedError("card declined"));
  });
  EXPECT_EQ(result.status().code(), absl::StatusCode::kPermissionDenied) << result.status();
  EXPECT_EQ(store_.Get(Identity())->state, WorkState::kPending);  // until its lease ends
}

TEST_F(RunIdempotentlyTest, RunReportsAFailedCompleteAndLeavesTheClaimPending) {
  store_.replace_error = absl::UnavailableError("connection lost");
  absl::StatusOr<std::string> result =
      runner_.Run(Identity(), kPayload, {}, [] { return absl::StatusOr<std::string>("receipt"); });
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable) << result.status();
  EXPECT_EQ(store_.Get(Identity())->state, WorkState::kPending);
}

TEST_F(RunIdempotentlyTest, SweepAndPruneUseTheClocksTime) {
  WorkOptions options;
  options.lease = absl::Minutes(1);
  options.ttl = absl::Hours(1);
  ASSERT_TRUE(runner_.Reserve(Identity(), kPayload, options).ok());
  EXPECT_EQ(*runner_.SweepAbandoned(), 0);
  clock_.Advance(absl::Minutes(1));
  EXPECT_EQ(*runner_.SweepAbandoned(), 1);
  EXPECT_EQ(store_.Get(Identity())->state, WorkState::kAbandoned);
  EXPECT_EQ(*runner_.Prune(), 0);
  clock_.Advance(absl::Minutes(59));
  EXPECT_EQ(*runner_.Prune(), 1);
  EXPECT_FALSE(store_.Get(Identity()).has_value());
}

TEST(WorkOptionsTest, LeaseMustBePositiveAndAtMostTheTtl) {
  WorkOptions options;
  EXPECT_TRUE(ValidateWorkOptions(options).ok());
  options.lease = options.ttl;
  EXPECT_TRUE(ValidateWorkOptions(options).ok());
  options.lease = options.ttl + absl::Microseconds(1);
  EXPECT_EQ(ValidateWorkOptions(options).code(), absl::StatusCode::kInvalidArgument);
  options.lease = -absl::Seconds(1);
  EXPECT_EQ(ValidateWorkOptions(options).code(), absl::StatusCode::kInvalidArgument);
  options = WorkOptions{};
  options.ttl = kKeyTtlMax;
  EXPECT_TRUE(ValidateWorkOptions(options).ok());
  options.ttl = kKeyTtlMax + absl::Seconds(1);
  EXPECT_EQ(ValidateWorkOptions(options).code(), absl::StatusCode::kInvalidArgument);
}

TEST(WorkStateTest, NamesRoundTripAndUnknownNameIsInvalidArgument) {
  for (WorkState state : {WorkState::kPending, WorkState::kCompleted, WorkState::kAbandoned}) {
    absl::StatusOr<WorkState> parsed = ParseWorkState(WorkStateName(state));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, state);
  }
  EXPECT_EQ(WorkStateName(WorkState::kCompleted), "completed");
  EXPECT_EQ(ParseWorkState("Pending").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseWorkState("").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(WebhookGuardTest, LimitsAreInclusive) {
  EXPECT_TRUE(ValidateWebhookEvent(std::string(kWebhookProviderBytesMax, 'p'),
                                   std::string(kWebhookEventIdBytesMax, 'e'))
                  .ok());
  EXPECT_TRUE(ValidateWebhookEvent("p", "~ !").ok());
  EXPECT_EQ(ValidateWebhookEvent("p", "\x7f").code(), absl::StatusCode::kInvalidArgument);
}

TEST(WebhookGuardTest, HandleSaysWhenAFailedEventCouldNotBeForgotten) {
  FakeStore store;
  ManualClock clock;
  WebhookGuard guard(store, clock);
  store.delete_error = absl::UnavailableError("connection lost");

  absl::StatusOr<WebhookDelivery> handled =
      guard.Handle("stripe", "evt_1", [] { return absl::DataLossError("bad signature"); });
  EXPECT_EQ(handled.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(handled.status().message().find("forget failed"), absl::string_view::npos)
      << handled.status();
  EXPECT_EQ(*guard.Accept("stripe", "evt_1"), WebhookDelivery::kDuplicate);
}

TEST(WebhookGuardTest, AcceptRecordsTheClocksTimeForPrune) {
  FakeStore store;
  ManualClock clock;
  WebhookGuard guard(store, clock);
  ASSERT_EQ(*guard.Accept("stripe", "evt_1"), WebhookDelivery::kFirst);
  clock.Advance(absl::Hours(1));
  EXPECT_EQ(*guard.Prune(absl::Hours(1)), 0);  // exactly as old as the retention: kept
  clock.Advance(absl::Microseconds(1));
  EXPECT_EQ(*guard.Prune(absl::Hours(1)), 1);
}

}  // namespace
}  // namespace ledger
