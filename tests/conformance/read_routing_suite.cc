// Reads off the primary (LedgerOptions::read_engine, docs/scaling.md), on every engine as
// the primary: a read that allows a replica is answered by the read engine, a read that
// asks for the primary and every write by the primary. The read engine here is a memory
// database holding a different ledger, so each answer shows where it came from.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "engines/memory/memory_engine.h"
#include "ledger/ledger.h"
#include "tests/conformance/conformance_fixture.h"
#include "tests/support/open_ledger.h"

namespace ledger::testing {
namespace {

constexpr ReadConsistency kPrimary = ReadConsistency::kPrimary;

// A "replica" that lags: CREDITS, issuance and alice only, alice topped up by 7.
std::shared_ptr<Engine> LaggingReplica(Clock* clock) {
  std::shared_ptr<Engine> replica = OpenMemoryEngine();
  Ledger writer = OpenTestLedger(replica, LedgerOptions{.clock = clock});
  EXPECT_TRUE(writer.DefineAsset({"CREDITS", 0}).ok());
  EXPECT_TRUE(writer.OpenAccount({.id = "issuance", .asset = "CREDITS", .allow_negative = true}).ok());
  EXPECT_TRUE(writer.OpenAccount({.id = "alice", .asset = "CREDITS"}).ok());
  absl::StatusOr<Outcome> topped_up = writer.Submit(
      {.key = "replica-1", .operation = Operation::TopUp("issuance", "alice", "CREDITS", 7)});
  EXPECT_TRUE(topped_up.ok() && topped_up->kind == OutcomeKind::kCommitted);
  return replica;
}

Amount BalanceIn(Ledger& ledger, const std::string& id, ReadConsistency consistency) {
  absl::StatusOr<Account> account = ledger.GetAccount(id, consistency);
  EXPECT_TRUE(account.ok()) << account.status();
  return account.ok() ? account->balance : -1;
}

TEST_P(ConformanceTest, ReadsAllowingAReplicaGoToTheReadEngineAndPrimaryReadsAndWritesDoNot) {
  Fund("alice", 100);
  std::shared_ptr<Engine> replica = LaggingReplica(&clock());
  std::unique_ptr<Ledger> book = LedgerWith({.read_engine = replica});
  ASSERT_TRUE(book->has_read_engine());
  const ReadConsistency kReplica = ReadConsistency::kReplicaAllowed;

  EXPECT_EQ(BalanceIn(*book, "alice", kReplica), 7);
  EXPECT_EQ(BalanceIn(*book, "alice", kPrimary), 100);
  EXPECT_EQ(book->GetAccount("alice")->balance, 7) << "the default allows the replica";
  EXPECT_TRUE(absl::IsNotFound(book->GetAccount("bob").status())) << "bob is on the primary only";
  EXPECT_EQ(book->ListAssets()->size(), 1u);
  EXPECT_EQ(book->ListAssets(kPrimary)->size(), 2u);
  EXPECT_TRUE(absl::IsNotFound(book->GetAsset("USD").status()));
  EXPECT_TRUE(book->GetAsset("USD", kPrimary).ok());
  EXPECT_EQ(book->ListAccounts("", 100)->size(), 2u);
  EXPECT_EQ(book->ListAccounts("", 100, kPrimary)->size(), 7u);
  ASSERT_EQ(book->ListHistory("alice", 0, 10)->size(), 1u);
  EXPECT_EQ(book->ListHistory("alice", 0, 10)->front().entry.amount, 7);
  EXPECT_EQ(book->ListHistory("alice", 0, 10, kPrimary)->front().entry.amount, 100);
  EXPECT_EQ(*book->BalanceAsOf("alice", clock().Now()), 7);
  EXPECT_EQ(*book->BalanceAsOf("alice", clock().Now(), kPrimary), 100);

  // A submit with a read engine set commits on the primary; the replica never sees it.
  absl::StatusOr<Outcome> moved = book->Submit(
      {.key = "routed-1", .operation = Operation::Transfer("alice", "bob", "CREDITS", 30)});
  ASSERT_TRUE(moved.ok()) << moved.status();
  ASSERT_EQ(moved->kind, OutcomeKind::kCommitted);
  EXPECT_EQ(BalanceIn(*book, "alice", kPrimary), 70);
  EXPECT_EQ(BalanceOf("alice"), 70) << "the fixture's ledger has no read engine: the primary";
  EXPECT_EQ(BalanceIn(*book, "alice", kReplica), 7);
  EXPECT_EQ(replica->ListEvents(0, 100)->size(), 1u);
  const std::string transaction_id = moved->transaction.id;
  EXPECT_TRUE(absl::IsNotFound(book->GetTransaction(transaction_id).status()));
  EXPECT_TRUE(book->GetTransaction(transaction_id, kPrimary).ok());
  EXPECT_EQ(book->ListEvents(0, 100)->size(), 1u);
  EXPECT_EQ(book->ListEvents(0, 100, kPrimary)->back().transaction_id, transaction_id);
  // The listing and the key lookup too.
  const TransactionQuery bobs{.filter = {.account_id = "bob"}, .limit = 10};
  EXPECT_TRUE(absl::IsNotFound(book->ListTransactions(bobs).status())) << "no bob on the replica";
  ASSERT_TRUE(book->ListTransactions(bobs, kPrimary).ok());
  EXPECT_EQ(book->ListTransactions(bobs, kPrimary)->transactions.back().id, transaction_id);
  absl::StatusOr<Outcome> replayed = book->Submit(
      {.key = "routed-1", .operation = Operation::Transfer("alice", "bob", "CREDITS", 30)});
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  const KeyIdentity routed_key = KeyIdentityOf(SubmitRequest{
      .key = "routed-1", .operation = Operation::Transfer("alice", "bob", "CREDITS", 30)});
  EXPECT_TRUE(absl::IsNotFound(book->LookUpKey(routed_key).status()));
  ASSERT_TRUE(book->LookUpKey(routed_key, kPrimary).ok());
  EXPECT_EQ(book->LookUpKey(routed_key, kPrimary)->transaction.id, transaction_id);

  // Holds: placed on the primary, read where asked.
  absl::StatusOr<Outcome> held = book->Submit(
      {.key = "routed-hold", .operation = Operation::Hold("alice", "bob", "CREDITS", 10)});
  ASSERT_TRUE(held.ok()) << held.status();
  ASSERT_EQ(held->kind, OutcomeKind::kCommitted);
  const std::string hold_id = held->transaction.id;
  EXPECT_TRUE(absl::IsNotFound(book->GetHold(hold_id).status()));
  EXPECT_TRUE(book->GetHold(hold_id, kPrimary).ok());
  EXPECT_TRUE(book->ListHolds("alice", "", 10)->empty());
  EXPECT_EQ(book->ListHolds("alice", "", 10, std::nullopt, kPrimary)->size(), 1u);
  EXPECT_EQ(book->GetAccount("alice", kPrimary)->pending_debits, 10);

  absl::StatusOr<VerifyReport> report = book->Verify();  // the primary's audit
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << report->ToText();
}

}  // namespace
}  // namespace ledger::testing
