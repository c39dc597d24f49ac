// Conformance: the inbound webhook dedup guard (idempotency/webhook_guard.h) over every
// engine's WebhookStore, and its independence from the submit keys and work claims.
#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "idempotency/key.h"
#include "idempotency/run_idempotently.h"
#include "idempotency/webhook_guard.h"
#include "ledger/engine.h"
#include "ledger/operation.h"
#include "ledger/outcome.h"
#include "ledger/transaction.h"
#include "tests/conformance/conformance_fixture.h"

namespace ledger::testing {
namespace {

// The delivery, or the error as text, so a failure shows up in the comparison.
std::string DeliveryOf(const absl::StatusOr<WebhookDelivery>& delivery) {
  if (!delivery.ok()) return "error: " + delivery.status().ToString();
  return *delivery == WebhookDelivery::kFirst ? "first" : "duplicate";
}

TEST_P(ConformanceTest, WebhookFirstDeliveryIsFirstAndRedeliveryIsDuplicate) {
  WebhookGuard guard(engine().webhooks(), clock());
  EXPECT_EQ(DeliveryOf(guard.Accept("stripe", "evt_1")), "first");
  EXPECT_EQ(DeliveryOf(guard.Accept("stripe", "evt_1")), "duplicate");
  clock().Advance(absl::Hours(30));  // no expiry of its own: only Prune forgets
  EXPECT_EQ(DeliveryOf(guard.Accept("stripe", "evt_1")), "duplicate");

  // Another event of the provider, and the same event id from another provider.
  EXPECT_EQ(DeliveryOf(guard.Accept("stripe", "evt_2")), "first");
  EXPECT_EQ(DeliveryOf(guard.Accept("adyen", "evt_1")), "first");
  EXPECT_EQ(DeliveryOf(guard.Accept("adyen", "evt_1")), "duplicate");
}

TEST_P(ConformanceTest, WebhookEventIdsAreCaseSensitiveAndStoredExactly) {
  WebhookGuard guard(engine().webhooks(), clock());
  const std::string longest_event_id(kWebhookEventIdBytesMax, 'e');
  const std::string longest_provider(kWebhookProviderBytesMax, 'p');
  EXPECT_EQ(DeliveryOf(guard.Accept("stripe", "evt_ABC")), "first");
  EXPECT_EQ(DeliveryOf(guard.Accept("stripe", "evt_abc")), "first");
  EXPECT_EQ(DeliveryOf(guard.Accept("Stripe", "evt_ABC")), "first");
  EXPECT_EQ(DeliveryOf(guard.Accept("stripe", "evt_abc ")), "first");  // trailing space
  EXPECT_EQ(DeliveryOf(guard.Accept(longest_provider, longest_event_id)), "first");
  EXPECT_EQ(DeliveryOf(guard.Accept(longest_provider, longest_event_id)), "duplicate");
  EXPECT_EQ(DeliveryOf(guard.Accept("stripe", "it's \"quoted\" \\ %_")), "first");
  EXPECT_EQ(DeliveryOf(guard.Accept("stripe", "it's \"quoted\" \\ %_")), "duplicate");
}

TEST_P(ConformanceTest, WebhookForgetLetsRedeliveryThrough) {
  WebhookGuard guard(engine().webhooks(), clock());
  ASSERT_EQ(DeliveryOf(guard.Accept("stripe", "evt_1")), "first");
  ASSERT_EQ(DeliveryOf(guard.Accept("stripe", "evt_2")), "first");

  ASSERT_TRUE(guard.Forget("stripe", "evt_1").ok());
  EXPECT_EQ(DeliveryOf(guard.Accept("stripe", "evt_1")), "first");
  EXPECT_EQ(DeliveryOf(guard.Accept("stripe", "evt_2")), "duplicate");  // untouched

  EXPECT_TRUE(guard.Forget("stripe", "never-delivered").ok());
}

TEST_P(ConformanceTest, WebhookHandleForgetsEventWhenHandlerFails) {
  WebhookGuard guard(engine().webhooks(), clock());
  int handled = 0;
  auto failing = [&]() -> absl::Status {
    ++handled;
    return absl::UnavailableError("ledger unreachable");
  };
  auto succeeding = [&]() -> absl::Status {
    ++handled;
    return absl::OkStatus();
  };

  absl::StatusOr<WebhookDelivery> failed = guard.Handle("stripe", "evt_1", failing);
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kUnavailable) << failed.status();
  EXPECT_EQ(handled, 1);

  EXPECT_EQ(DeliveryOf(guard.Handle("stripe", "evt_1", succeeding)), "first");
  EXPECT_EQ(handled, 2);
  EXPECT_EQ(DeliveryOf(guard.Handle("stripe", "evt_1", succeeding)), "duplicate");
  EXPECT_EQ(DeliveryOf(guard.Handle("stripe", "evt_1", failing)), "duplicate");
  EXPECT_EQ(handled, 2);
}

TEST_P(ConformanceTest, WebhookHandlerThatThrowsIsAFailureAndTheEventIsForgotten) {
  WebhookGuard guard(engine().webhooks(), clock());
  auto throwing = []() -> absl::Status { throw std::runtime_error("handler bug"); };

  absl::StatusOr<WebhookDelivery> failed = guard.Handle("stripe", "evt_throw", throwing);

  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInternal) << failed.status();
  EXPECT_NE(failed.status().message().find("handler bug"), std::string::npos) << failed.status();
  EXPECT_EQ(DeliveryOf(guard.Accept("stripe", "evt_throw")), "first");  // redelivery runs
}

TEST_P(ConformanceTest, WebhookPruneRemovesEventsOlderThanRetention) {
  WebhookGuard guard(engine().webhooks(), clock());
  ASSERT_EQ(DeliveryOf(guard.Accept("stripe", "evt_old")), "first");
  clock().Advance(absl::Hours(24));
  ASSERT_EQ(DeliveryOf(guard.Accept("stripe", "evt_boundary")), "first");
  clock().Advance(absl::Hours(24));
  ASSERT_EQ(DeliveryOf(guard.Accept("stripe", "evt_new")), "first");

  // Older than 24 h: only evt_old. evt_boundary was received exactly 24 h ago: kept.
  absl::StatusOr<int64_t> pruned = guard.Prune(absl::Hours(24));
  ASSERT_TRUE(pruned.ok()) << pruned.status();
  EXPECT_EQ(*pruned, 1);
  EXPECT_EQ(DeliveryOf(guard.Accept("stripe", "evt_boundary")), "duplicate");
  EXPECT_EQ(DeliveryOf(guard.Accept("stripe", "evt_new")), "duplicate");
  EXPECT_EQ(DeliveryOf(guard.Accept("stripe", "evt_old")), "first");  // recorded again now

  EXPECT_EQ(guard.Prune(absl::ZeroDuration()).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(guard.Prune(-absl::Hours(1)).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(ConformanceTest, WebhookEventsSubmitKeysAndWorkClaimsDoNotCollide) {
  // One set of strings, used as a submit key, a work identity and a webhook event.
  const Scope scope{"acme", "user-42"};
  const std::string event_id = "evt_1";
  const Operation top_up = Operation::TopUp("issuance", "alice", "CREDITS", 100);
  // The identity the submit's key is recorded under.
  const KeyIdentity identity = KeyIdentityOf({.key = event_id, .scope = scope, .operation = top_up});
  const std::string provider = identity.key_namespace;  // "operations"

  absl::StatusOr<Outcome> committed = Submit(event_id, top_up, {}, scope);
  ASSERT_TRUE(committed.ok()) << committed.status();
  ASSERT_EQ(committed->kind, OutcomeKind::kCommitted);
  const Snapshot after_submit = TakeSnapshot();

  WebhookGuard guard(engine().webhooks(), clock());
  IdempotentRunner runner(engine().work_claims(), clock());
  EXPECT_EQ(DeliveryOf(guard.Accept(provider, event_id)), "first");
  int runs = 0;
  auto work = [&]() -> absl::StatusOr<std::string> {
    ++runs;
    return std::string("work-result");
  };
  const nlohmann::json payload = {{"event", event_id}};
  absl::StatusOr<std::string> ran = runner.Run(identity, payload, {}, work);
  ASSERT_TRUE(ran.ok()) << ran.status();
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(TakeSnapshot(), after_submit);  // neither layer touched the submit tables

  // Forgetting the event leaves the work claim; pruning each table leaves the others.
  ASSERT_TRUE(guard.Forget(provider, event_id).ok());
  absl::StatusOr<std::string> replayed = runner.Run(identity, payload, {}, work);
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  EXPECT_EQ(*replayed, "work-result");
  EXPECT_EQ(DeliveryOf(guard.Accept(provider, event_id)), "first");
  clock().Advance(absl::Hours(2));
  ASSERT_TRUE(runner.Prune().ok());
  ASSERT_TRUE(ledger().PruneExpiredKeys().ok());
  EXPECT_EQ(DeliveryOf(guard.Accept(provider, event_id)), "duplicate");
  ASSERT_TRUE(guard.Prune(absl::Hours(1)).ok());
  absl::StatusOr<std::string> still_replayed = runner.Run(identity, payload, {}, work);
  ASSERT_TRUE(still_replayed.ok()) << still_replayed.status();
  EXPECT_EQ(*still_replayed, "work-result");
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(TakeSnapshot(), after_submit);

  absl::StatusOr<Outcome> resubmitted = Submit(event_id, top_up, {}, scope);
  ASSERT_TRUE(resubmitted.ok()) << resubmitted.status();
  EXPECT_EQ(resubmitted->kind, OutcomeKind::kDuplicate);
  EXPECT_EQ(resubmitted->transaction, committed->transaction);
}

TEST_P(ConformanceTest, WebhookBadInputIsInvalidArgumentAndWritesNothing) {
  WebhookGuard guard(engine().webhooks(), clock());
  const std::vector<std::pair<std::string, std::string>> bad_events = {
      {"", "evt_1"},
      {std::string(kWebhookProviderBytesMax + 1, 'p'), "evt_1"},
      {"str\tipe", "evt_1"},
      {std::string("str\0ipe", 7), "evt_1"},
      {"stripe", ""},
      {"stripe", std::string(kWebhookEventIdBytesMax + 1, 'e')},
      {"stripe", "evt\n1"},
      {"stripe", "evt_\xC3\xA9"},  // UTF-8, but not printable ASCII
      {"stripe", std::string("evt\0001", 5)}};
  bool handler_ran = false;
  for (const auto& [provider, event_id] : bad_events) {
    EXPECT_EQ(guard.Accept(provider, event_id).status().code(), absl::StatusCode::kInvalidArgument)
        << provider << " / " << event_id;
    EXPECT_EQ(guard.Forget(provider, event_id).code(), absl::StatusCode::kInvalidArgument);
    absl::StatusOr<WebhookDelivery> handled = guard.Handle(provider, event_id, [&] {
      handler_ran = true;
      return absl::OkStatus();
    });
    EXPECT_EQ(handled.status().code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_FALSE(handler_ran);

  // Nothing was recorded: pruning everything older than a microsecond finds nothing.
  clock().Advance(absl::Hours(1));
  absl::StatusOr<int64_t> pruned = guard.Prune(absl::Microseconds(1));
  ASSERT_TRUE(pruned.ok()) << pruned.status();
  EXPECT_EQ(*pruned, 0);
}

}  // namespace
}  // namespace ledger::testing
