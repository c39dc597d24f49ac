// Issue 29: the write statement built from the parts a batch has rows for
// (engines/postgres/postgres_statements.h, WritePart). Each kind of submit, through the
// ledger's own pipeline, sends its own shape: it commits, and the server's count check
// refuses it when an account row is not updated (a trigger skips bob's update: the
// short write a version changed under the lock would make), so nothing of it is
// written. One pooled session, so the statements prepared are read back from it. Both
// claim modes.
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "base/status.h"
#include "engines/postgres/postgres_engine.h"
#include "engines/postgres/postgres_statements.h"
#include "ledger/json.h"
#include "ledger/ledger.h"
#include "tests/engines/postgres/postgres_ledger_test.h"
#include "tests/engines/postgres/postgres_test_database.h"
#include "tests/support/open_ledger.h"

namespace ledger {
namespace testing {
namespace {

using postgres_internal::WritePart;
using postgres_internal::WriteParts;

// Skips every update of bob's account row: the write's accounts part then updates one
// account of two.
constexpr char kSkipBobsUpdate[] = R"sql(
  CREATE OR REPLACE FUNCTION skip_row() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN RETURN NULL; END $$;
  CREATE TRIGGER skip_bobs_update BEFORE UPDATE ON accounts FOR EACH ROW
    WHEN (OLD.id = 'bob') EXECUTE FUNCTION skip_row())sql";
constexpr char kUpdateBobAgain[] = "DROP TRIGGER skip_bobs_update ON accounts";

class PostgresWritePartsTest : public PostgresLedgerTest {
 protected:
  Engine& engine() override { return *engine_; }

  // A fresh database on one pooled session, alice (funded with 1000) and bob.
  void OpenLedger() {
    absl::StatusOr<std::unique_ptr<Engine>> fresh =
        OpenFreshPostgresEngine(GetParam(), /*pool_size=*/1);
    ASSERT_TRUE(fresh.ok()) << fresh.status();
    engine_ = std::move(*fresh);
    OpenFundedLedger(engine_);
  }

  // `submit` refused by the count check while bob's row is not updated, nothing of it
  // written; then, updated again, committed.
  void ExpectRefusedWhenShortThenCommitted(
      const std::function<absl::StatusOr<Outcome>()>& submit) {
    ASSERT_TRUE(QueryPostgresValue(kSkipBobsUpdate).ok());
    const Written before = TakeWritten();
    absl::StatusOr<Outcome> refused = submit();
    ASSERT_TRUE(refused.ok()) << refused.status();
    EXPECT_EQ(refused->kind, OutcomeKind::kFaulted) << OutcomeToJson(*refused).dump();
    EXPECT_EQ(refused->fault.code(), absl::StatusCode::kInternal) << refused->fault;
    EXPECT_NE(refused->fault.message().find("1/2 updated_accounts"), std::string::npos)
        << refused->fault;
    EXPECT_FALSE(refused->in_doubt);
    EXPECT_EQ(TakeWritten(), before);
    ASSERT_TRUE(QueryPostgresValue(kUpdateBobAgain).ok());
    ExpectCommitted(submit());
  }

  // The write statements the pool's one session prepared: name and text.
  std::map<std::string, std::string> PreparedWrites() {
    absl::StatusOr<std::unique_ptr<StorageTransaction>> storage = engine_->Begin({});
    EXPECT_TRUE(storage.ok()) << storage.status();
    if (!storage.ok()) return {};
    absl::StatusOr<SqlRows> rows = (*storage)->RunCallerSql(
        "SELECT name, statement FROM pg_prepared_statements WHERE name LIKE 'write\\_batch\\_%'",
        {});
    EXPECT_TRUE(rows.ok()) << rows.status();
    (*storage)->Rollback();
    std::map<std::string, std::string> prepared;
    if (!rows.ok()) return prepared;
    for (const std::vector<std::optional<std::string>>& row : rows->rows) {
      prepared[row[0].value_or("")] = row[1].value_or("");
    }
    return prepared;
  }

  // The parts of a transfer's statement: the advisory mode records the key with the
  // write, the row mode at the claim.
  WriteParts TransferParts() const {
    WriteParts parts = WriteParts()
                           .With(WritePart::kTransactions)
                           .With(WritePart::kEntries)
                           .With(WritePart::kAccounts)
                           .With(WritePart::kEvents);
    return GetParam() == PostgresClaimMode::kRow ? parts : parts.With(WritePart::kNewKeys);
  }

  std::shared_ptr<Engine> engine_;
};

INSTANTIATE_TEST_SUITE_P(ClaimModes, PostgresWritePartsTest,
                         ::testing::Values(PostgresClaimMode::kAdvisoryLock, PostgresClaimMode::kRow),
                         [](const ::testing::TestParamInfo<PostgresClaimMode>& info) {
                           return info.param == PostgresClaimMode::kRow ? "row" : "advisory";
                         });

// A transfer, one with metadata, a hold placed, captured, voided and expired, a key
// reused after its record expired, a batch with a rejected item: each commits through
// the statement of its own parts and is refused whole when one account row of two is
// not updated.
TEST_P(PostgresWritePartsTest, EachShapeCommitsAndItsCountCheckRefusesAShortWrite) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger());
  ExpectRefusedWhenShortThenCommitted(
      [&] { return Submit("transfer", Operation::Transfer("alice", "bob", kAsset, 1)); });
  Operation tagged = Operation::Transfer("alice", "bob", kAsset, 2);
  tagged.metadata = {{"order", "o-1"}};
  ExpectRefusedWhenShortThenCommitted([&] { return Submit("tagged", tagged); });

  std::vector<std::string> holds;
  for (const char* key : {"hold-1", "hold-2", "hold-3"}) {
    ExpectRefusedWhenShortThenCommitted([&]() -> absl::StatusOr<Outcome> {
      absl::StatusOr<Outcome> placed = Submit(
          key, Operation::Hold("alice", "bob", kAsset, 10, clock_.Now() + absl::Hours(1)));
      if (placed.ok() && placed->kind == OutcomeKind::kCommitted) {
        holds.push_back(placed->transaction.id);
      }
      return placed;
    });
  }
  ASSERT_EQ(holds.size(), 3u);
  ExpectRefusedWhenShortThenCommitted(
      [&] { return Submit("capture", Operation::Capture(holds[0], 4)); });
  ExpectRefusedWhenShortThenCommitted([&] { return Submit("void", Operation::Void(holds[1])); });

  // The third hold lapses; the sweep's expiry is refused, then recorded.
  clock_.Advance(absl::Hours(2));
  ASSERT_TRUE(QueryPostgresValue(kSkipBobsUpdate).ok());
  const Written before_expiry = TakeWritten();
  absl::StatusOr<int64_t> expired = ledger_->ExpireHolds();
  EXPECT_TRUE(!expired.ok() || *expired == 0) << *expired;
  EXPECT_EQ(TakeWritten(), before_expiry);
  ASSERT_TRUE(QueryPostgresValue(kUpdateBobAgain).ok());
  expired = ledger_->ExpireHolds();
  ASSERT_TRUE(expired.ok()) << expired.status();
  EXPECT_EQ(*expired, 1);

  // The transfer's key, past its record's 24 h: reused, its record replaced.
  clock_.Advance(absl::Hours(25));
  ExpectRefusedWhenShortThenCommitted(
      [&] { return Submit("transfer", Operation::Transfer("alice", "bob", kAsset, 3)); });

  // A batch whose second item is rejected (row mode: its claimed row is dropped).
  ExpectRefusedWhenShortThenCommitted([&]() -> absl::StatusOr<Outcome> {
    absl::StatusOr<std::vector<SubmitResult>> results = ledger_->SubmitBatch(
        {.items = {{.key = "batch-1", .operation = Operation::Transfer("alice", "bob", kAsset, 5)},
                   {.key = "batch-2",
                    .operation = Operation::Transfer("alice", "bob", kAsset, 1'000'000)}}});
    if (!results.ok()) return results.status();
    EXPECT_TRUE((*results)[1].ok()) << (*results)[1].status();
    if ((*results)[0].ok() && (*results)[0]->kind == OutcomeKind::kCommitted) {
      EXPECT_EQ((*results)[1]->kind, OutcomeKind::kRejected);
    } else {  // the batch's write was refused: every item faulted
      EXPECT_EQ((*results)[1]->kind, OutcomeKind::kFaulted);
    }
    return (*results)[0];
  });
  ExpectVerifiedClean();

  // The session prepared one statement per shape, each holding only its parts.
  const std::map<std::string, std::string> prepared = PreparedWrites();
  // A single submit's rows go inline (postgres_internal::WriteShape).
  postgres_internal::WriteBatchCounts rows;
  rows[WritePart::kTransactions] = 1;
  rows[WritePart::kEntries] = 2;
  rows[WritePart::kAccounts] = 2;
  rows[WritePart::kEvents] = 1;
  if (TransferParts().Has(WritePart::kNewKeys)) rows[WritePart::kNewKeys] = 1;
  const std::string transfer =
      postgres_internal::WriteStatementOf({.parts = TransferParts(), .inline_rows = rows}).name;
  rows[WritePart::kMetadata] = 1;
  const std::string with_metadata =
      postgres_internal::WriteStatementOf(
          {.parts = TransferParts().With(WritePart::kMetadata), .inline_rows = rows})
          .name;
  ASSERT_TRUE(prepared.contains(transfer)) << transfer;
  ASSERT_TRUE(prepared.contains(with_metadata)) << with_metadata;
  EXPECT_EQ(prepared.at(transfer).find("new_metadata"), std::string::npos);
  EXPECT_NE(prepared.at(with_metadata).find("new_metadata"), std::string::npos);
  std::set<std::string> parts_seen;
  for (const auto& [name, sql] : prepared) {
    for (const char* part : {"new_metadata", "replaced_keys", "dropped_claims", "new_holds",
                             "settled_holds"}) {
      if (absl::StrContains(sql, absl::StrCat(part, " AS ("))) parts_seen.insert(part);
    }
  }
  std::set<std::string> parts_expected = {"new_metadata", "replaced_keys", "new_holds",
                                          "settled_holds"};
  if (GetParam() == PostgresClaimMode::kRow) parts_expected.insert("dropped_claims");
  EXPECT_EQ(parts_seen, parts_expected);
  EXPECT_GE(prepared.size(), 6u);
}

}  // namespace
}  // namespace testing
}  // namespace ledger
