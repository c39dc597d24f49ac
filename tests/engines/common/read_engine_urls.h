// Reads off the primary through URLs (engines/open_engine.h OpenReadEngine,
// LedgerOptions::read_engine) on one server: the primary and the "replica" are two
// databases of the same engine (two SQLite files, two PostgreSQL schemas), the replica
// migrated beforehand and holding a different ledger, so each answer shows which one the
// read reached. Each engine's test calls it with its two URLs.
#ifndef LEDGER_TESTS_ENGINES_COMMON_READ_ENGINE_URLS_H_
#define LEDGER_TESTS_ENGINES_COMMON_READ_ENGINE_URLS_H_

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "engines/open_engine.h"
#include "ledger/ledger.h"
#include "tests/support/open_ledger.h"

namespace ledger::testing {

// Writes through its own Ledger: CREDITS, issuance and alice, alice topped up by `amount`.
inline void WriteSmallLedger(const std::string& url, Amount amount) {
  absl::StatusOr<std::unique_ptr<Engine>> engine = OpenEngine(url);
  ASSERT_TRUE(engine.ok()) << engine.status();
  Ledger writer = OpenTestLedger(std::shared_ptr<Engine>(*std::move(engine)));
  ASSERT_TRUE(writer.DefineAsset({"CREDITS", 0}).ok());
  ASSERT_TRUE(writer.OpenAccount({.id = "issuance", .asset = "CREDITS", .allow_negative = true}).ok());
  ASSERT_TRUE(writer.OpenAccount({.id = "alice", .asset = "CREDITS"}).ok());
  absl::StatusOr<Outcome> topped_up = writer.Submit(
      {.key = "top-up-1", .operation = Operation::TopUp("issuance", "alice", "CREDITS", amount)});
  ASSERT_TRUE(topped_up.ok()) << topped_up.status();
  ASSERT_EQ(topped_up->kind, OutcomeKind::kCommitted);
}

inline void ExpectReadsRoutedByUrl(const std::string& primary_url, const std::string& replica_url) {
  WriteSmallLedger(primary_url, 100);
  WriteSmallLedger(replica_url, 7);
  absl::StatusOr<std::unique_ptr<Engine>> primary = OpenEngine(primary_url);
  ASSERT_TRUE(primary.ok()) << primary.status();
  absl::StatusOr<std::unique_ptr<Engine>> replica = OpenReadEngine(replica_url);
  ASSERT_TRUE(replica.ok()) << replica.status();
  Ledger book = OpenTestLedger(std::shared_ptr<Engine>(*std::move(primary)),
                               {.read_engine = std::shared_ptr<Engine>(*std::move(replica))});
  EXPECT_EQ(book.GetAccount("alice")->balance, 7) << "a read that allows a replica";
  EXPECT_EQ(book.GetAccount("alice", ReadConsistency::kPrimary)->balance, 100);

  absl::StatusOr<Outcome> moved = book.Submit(
      {.key = "top-up-2", .operation = Operation::TopUp("issuance", "alice", "CREDITS", 5)});
  ASSERT_TRUE(moved.ok()) << moved.status();
  ASSERT_EQ(moved->kind, OutcomeKind::kCommitted);
  EXPECT_EQ(book.GetAccount("alice", ReadConsistency::kPrimary)->balance, 105);
  EXPECT_EQ(book.GetAccount("alice")->balance, 7) << "the submit went to the replica";
  EXPECT_EQ(book.ListEvents(0, 10)->size(), 1u);
  EXPECT_EQ(book.ListEvents(0, 10, ReadConsistency::kPrimary)->size(), 2u);
}

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_ENGINES_COMMON_READ_ENGINE_URLS_H_
