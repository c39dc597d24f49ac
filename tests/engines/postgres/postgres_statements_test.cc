// The write statement's parameter positions are named once (postgres_statements.h): the
// SQL uses exactly the positions the enum counts, and WriteParameters fills them by name
// in position order. Needs no server.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "engines/postgres/postgres_rows.h"
#include "engines/postgres/postgres_statements.h"
#include "engines/postgres/postgres_write_batch.h"
#include "gtest/gtest.h"

namespace ledger::postgres_internal {
namespace {

TEST(PostgresStatements, TheWriteStatementsUseExactlyTheNamedPositions) {
  const ParameterUse plain = ParameterUseOf(WriteBatchSql(/*with_holds=*/false));
  EXPECT_EQ(plain.highest, kWriteBatchParameterCount);
  EXPECT_TRUE(plain.contiguous);
  const ParameterUse holds = ParameterUseOf(WriteBatchSql(/*with_holds=*/true));
  EXPECT_EQ(holds.highest, kWriteBatchWithHoldsParameterCount);
  EXPECT_TRUE(holds.contiguous);
}

// The checked statements (pipelined with COMMIT) take the same positions and the
// expected counts last, and hand the counts to the session's check.
TEST(PostgresStatements, TheCheckedWriteStatementsTakeTheExpectedCountsLast) {
  for (const bool with_holds : {false, true}) {
    const std::string sql = CheckedWriteBatchSql(with_holds);
    const ParameterUse use = ParameterUseOf(sql);
    const int count = with_holds ? kWriteBatchWithHoldsParameterCount : kWriteBatchParameterCount;
    EXPECT_EQ(use.highest, count + 1);
    EXPECT_TRUE(use.contiguous);
    EXPECT_NE(sql.find(absl::StrCat(kCheckWriteCountsFunction, "(ARRAY[")), std::string::npos);
    EXPECT_NE(sql.find(absl::StrCat("$", count + 1, "::bigint[])")), std::string::npos);
  }
}

// The server reports a short write's counts; they map as the client-side check does.
TEST(PostgresStatements, AShortWriteReportedByTheServerMapsAsTheClientCheck) {
  PostgresWriteBatch batch;
  batch.AddEvent({.transaction_id = "t", .type = "transaction.committed", .payload = "{}"});
  batch.AddKeyRecord({.identity = {.key_namespace = "operations", .scope = Scope{}, .key = "k"},
                      .fingerprint = "f",
                      .transaction_id = "t"},
                     /*claim_found_row=*/false);
  // Expected: 0 transactions, 0 entries, 0 accounts, 1 key, 1 event, 0 placeholders.
  const std::vector<std::string> parameters = batch.CheckedParameters();
  EXPECT_EQ(parameters.back(), "{0,0,0,1,1,0}");
  EXPECT_EQ(parameters.size(), static_cast<size_t>(kWriteBatchParameterCount + 1));
  EXPECT_TRUE(IsRetryable(batch.CheckAppliedText("{0,0,0,0,1,0}")));
  const absl::Status events = batch.CheckAppliedText("{0,0,0,1,0,0}");
  EXPECT_EQ(events.code(), absl::StatusCode::kInternal) << events;
  EXPECT_NE(events.message().find("0/1 events"), std::string::npos) << events;
  const absl::Status unreadable = batch.CheckAppliedText("{0,0,0}");
  EXPECT_EQ(unreadable.code(), absl::StatusCode::kInternal) << unreadable;
  EXPECT_NE(unreadable.message().find("not 6 counts"), std::string::npos) << unreadable;
}

TEST(PostgresStatements, ParameterUseFindsGapsAndTheHighestPosition) {
  EXPECT_EQ(ParameterUseOf("SELECT 1").highest, 0);
  const ParameterUse gap = ParameterUseOf("SELECT $1, $3::text[], '$' || $12");
  EXPECT_EQ(gap.highest, 12);
  EXPECT_FALSE(gap.contiguous);
  const ParameterUse full = ParameterUseOf("SELECT $2, $1, $2");
  EXPECT_EQ(full.highest, 2);
  EXPECT_TRUE(full.contiguous);
}

TEST(PostgresStatements, WriteParametersComeOutInPositionOrderWhateverTheFillOrder) {
  WriteParameters parameters(/*with_holds=*/false);
  for (int i = kWriteBatchParameterCount - 1; i >= 0; --i) {
    const auto parameter = static_cast<WriteParameter>(i);
    parameters.Set(parameter, WriteParameterSql(parameter));
  }
  const std::vector<std::string> values = std::move(parameters).Take();
  ASSERT_EQ(values.size(), static_cast<size_t>(kWriteBatchParameterCount));
  EXPECT_EQ(values.front(), "$1");
  EXPECT_EQ(values.back(), "$39");
  EXPECT_EQ(WriteParameterSql(WriteParameter::kEntryAmounts), "$16");
}

TEST(PostgresStatementsDeathTest, AParameterLeftUnsetIsAProgrammingError) {
  EXPECT_DEATH(
      {
        WriteParameters parameters(/*with_holds=*/false);
        parameters.Set(WriteParameter::kTransactionIds, "{}");
        (void)std::move(parameters).Take();
      },
      "write parameter 2 was not set");
}

// The write's parameters are array literals: every text element double-quoted, only a
// double quote and a backslash escaped (wherever they fall), NULL bare.
TEST(PostgresStatements, ArrayLiteralsQuoteEveryTextAndEscapeOnlyQuoteAndBackslash) {
  EXPECT_EQ(TextArrayLiteral({}), "{}");
  EXPECT_EQ(TextArrayLiteral({"", "a b", "NULL", "{x,y}"}), R"({"","a b","NULL","{x,y}"})");
  EXPECT_EQ(TextArrayLiteral({"\"", "a\\b", "\"x\\\\y\"", R"({"k":"v"})"}),
            R"({"\"","a\\b","\"x\\\\y\"","{\"k\":\"v\"}"})");
  EXPECT_EQ(NullableTextArrayLiteral({std::nullopt, "q\"", std::nullopt}), R"({NULL,"q\"",NULL})");
  EXPECT_EQ(IntegerArrayLiteral({0, -1, 9223372036854775807}), "{0,-1,9223372036854775807}");
  EXPECT_EQ(NullableIntegerArrayLiteral({std::nullopt, -42}), "{NULL,-42}");
  EXPECT_EQ(BooleanArrayLiteral({true, false}), "{t,f}");
}

}  // namespace
}  // namespace ledger::postgres_internal
