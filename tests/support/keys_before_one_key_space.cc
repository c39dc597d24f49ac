#include "tests/support/keys_before_one_key_space.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "gtest/gtest.h"
#include "ledger/json.h"
#include "ledger/operation.h"
#include "ledger/transaction.h"
#include "ledger/verify.h"

namespace ledger::testing {
namespace {

std::string Show(const absl::StatusOr<Outcome>& outcome) {
  return outcome.ok() ? OutcomeToJson(*outcome).dump() : outcome.status().ToString();
}

SubmitRequest In(const char* key_namespace, const char* key, Operation operation,
                 absl::Duration ttl = kKeyTtlDefault) {
  SubmitRequest request{.key = key, .operation = std::move(operation), .key_namespace = key_namespace};
  request.claim.ttl = ttl;
  return request;
}

// The request in the default space: what every door sends after the upgrade.
SubmitRequest InDefaultSpace(const char* key, Operation operation) {
  return SubmitRequest{.key = key, .operation = std::move(operation)};
}

Operation TopUp(const char* to, Amount amount) {
  return Operation::TopUp("issuance", to, "CREDITS", amount);
}
Operation Transfer(Amount amount) { return Operation::Transfer("alice", "bob", "CREDITS", amount); }
Operation HoldOf(Amount amount) { return Operation::Hold("alice", "bob", "CREDITS", amount); }

// Commits `request` (asserted) and returns its transaction's id.
std::string Commit(Ledger& ledger, const SubmitRequest& request) {
  absl::StatusOr<Outcome> outcome = ledger.Submit(request);
  EXPECT_TRUE(outcome.ok() && outcome->kind == OutcomeKind::kCommitted)
      << request.key_namespace << "|" << request.key << ": " << Show(outcome);
  return outcome.ok() ? outcome->transaction.id : "";
}

Amount Balance(Ledger& ledger, const char* id) {
  absl::StatusOr<Account> account = ledger.GetAccount(id);
  EXPECT_TRUE(account.ok()) << account.status();
  return account.ok() ? account->balance : -1;
}

void ExpectReplays(Ledger& ledger, const SubmitRequest& request, const std::string& transaction_id) {
  absl::StatusOr<Outcome> outcome = ledger.Submit(request);
  ASSERT_TRUE(outcome.ok()) << request.key << ": " << outcome.status();
  EXPECT_EQ(outcome->kind, OutcomeKind::kDuplicate) << request.key << ": " << Show(outcome);
  EXPECT_EQ(outcome->transaction.id, transaction_id) << request.key;
}

void ExpectConflict(Ledger& ledger, const SubmitRequest& request) {
  absl::StatusOr<Outcome> outcome = ledger.Submit(request);
  EXPECT_TRUE(IsConflict(outcome.status())) << request.key << ": " << Show(outcome);
}

}  // namespace

KeysBeforeOneKeySpace WriteKeysOfPerKindSpaces(Ledger& ledger, ManualClock& clock) {
  KeysBeforeOneKeySpace written;
  EXPECT_TRUE(ledger.DefineAsset({"CREDITS", 0}).ok());
  for (const AccountSpec& spec :
       {AccountSpec{.id = "issuance", .asset = "CREDITS", .allow_negative = true},
        AccountSpec{.id = "alice", .asset = "CREDITS"}, AccountSpec{.id = "bob", .asset = "CREDITS"}}) {
    EXPECT_TRUE(ledger.OpenAccount(spec).ok()) << spec.id;
  }
  std::map<std::string, std::string>& replayed = written.replayed_transaction_of;
  replayed["pay-1"] = Commit(ledger, In("top_up", "pay-1", TopUp("alice", 500)));
  Commit(ledger, In("top_up", "shared", TopUp("alice", 100), absl::Hours(1)));
  clock.Advance(absl::Minutes(1));
  replayed["shared"] = Commit(ledger, In("transfer", "shared", Transfer(40), absl::Hours(48)));
  replayed["http-1"] = Commit(ledger, In("operations", "http-1", TopUp("bob", 7)));
  Commit(ledger, In("transfer", "http-1", Transfer(3)));
  replayed["hold-1"] = Commit(ledger, In("hold", "hold-1", HoldOf(10)));
  written.alice_balance = Balance(ledger, "alice");
  written.bob_balance = Balance(ledger, "bob");
  EXPECT_EQ(written.alice_balance, 500 + 100 - 40 - 3);
  EXPECT_EQ(written.bob_balance, 7 + 40 + 3);
  return written;
}

void ExpectOldKeysReplayInTheOneKeySpace(Ledger& ledger, const KeysBeforeOneKeySpace& before) {
  const std::map<std::string, std::string>& replayed = before.replayed_transaction_of;
  ASSERT_EQ(replayed.size(), 4u);
  // issue 30's example: the CLI's key, resent after the upgrade through any door.
  ExpectReplays(ledger, InDefaultSpace("pay-1", TopUp("alice", 500)), replayed.at("pay-1"));
  ExpectConflict(ledger, InDefaultSpace("pay-1", TopUp("alice", 501)));
  // Two kinds under one key: the one that expires last holds it, the other conflicts.
  ExpectReplays(ledger, InDefaultSpace("shared", Transfer(40)), replayed.at("shared"));
  ExpectConflict(ledger, InDefaultSpace("shared", TopUp("alice", 100)));
  // The key HTTP already had stays HTTP's.
  ExpectReplays(ledger, InDefaultSpace("http-1", TopUp("bob", 7)), replayed.at("http-1"));
  ExpectConflict(ledger, InDefaultSpace("http-1", Transfer(3)));
  ExpectReplays(ledger, InDefaultSpace("hold-1", HoldOf(10)), replayed.at("hold-1"));
  // The per-kind rows stay: naming the kind still reaches them.
  absl::StatusOr<Outcome> old_space = ledger.Submit(In("top_up", "pay-1", TopUp("alice", 500)));
  ASSERT_TRUE(old_space.ok()) << old_space.status();
  EXPECT_EQ(old_space->kind, OutcomeKind::kDuplicate) << Show(old_space);
  EXPECT_EQ(old_space->transaction.id, replayed.at("pay-1"));

  EXPECT_EQ(Balance(ledger, "alice"), before.alice_balance);
  EXPECT_EQ(Balance(ledger, "bob"), before.bob_balance);
  absl::StatusOr<VerifyReport> report = ledger.Verify();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << report->ToText();
}

void ExpectMigrationNamesEveryOldSpace(std::string_view sql) {
  auto quoted = [](std::string_view name) { return absl::StrCat("'", View(name), "'"); };
  EXPECT_NE(sql.find(quoted(kDefaultKeyNamespace)), std::string_view::npos);
  int kinds = 0;
  for (int value = 0;; ++value) {  // the enumerators run from 0 without gaps
    const auto kind = static_cast<OperationKind>(value);
    const std::string_view name = OperationKindName(kind);
    if (name == "unknown") break;
    if (kind == OperationKind::kExpire) continue;
    ++kinds;
    EXPECT_NE(sql.find(quoted(name)), std::string_view::npos) << name;
  }
  EXPECT_EQ(kinds, 9);
}

}  // namespace ledger::testing
