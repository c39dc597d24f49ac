// The write statement's parameter positions are named once (postgres_statements.h): the
// SQL uses exactly the positions the enum counts, and WriteParameters fills them by name
// in position order. Needs no server.
#include <string>
#include <vector>

#include "engines/postgres/postgres_statements.h"
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

}  // namespace
}  // namespace ledger::postgres_internal
