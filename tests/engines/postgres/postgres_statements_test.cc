// The write statement's parameter positions are named once (postgres_statements.h): each
// shape's SQL uses exactly the positions of its parts' parameters, and WriteParameters
// fills them by name in position order. Needs no server.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "engines/postgres/postgres_binary_arrays.h"
#include "engines/postgres/postgres_rows.h"
#include "engines/postgres/postgres_statements.h"
#include "engines/postgres/postgres_write_batch.h"
#include "gtest/gtest.h"

namespace ledger::postgres_internal {
namespace {

// An array of `length` elements of `parameter`'s element type.
BinaryArray ArrayOfLength(WriteParameter parameter, int length) {
  switch (WriteParameterElement(parameter)) {
    case ArrayElement::kText:
      return TextArray(std::vector<std::string>(length));
    case ArrayElement::kBigint:
      return BigintArray(std::vector<int64_t>(length));
    case ArrayElement::kInteger:
      return IntegerArray(std::vector<int64_t>(length));
  }
  return {};
}

// Every valid set of parts: not empty, pending amounts only with the accounts, and
// settlements only with the transactions that carry their hold_id.
std::vector<WriteParts> EveryShape() {
  std::vector<WriteParts> shapes;
  for (uint32_t bits = 1; bits < (uint32_t{1} << kWritePartCount); ++bits) {
    WriteParts parts;
    for (int i = 0; i < kWritePartCount; ++i) {
      if ((bits >> i) & 1) parts = parts.With(static_cast<WritePart>(i));
    }
    if (parts.Has(WritePart::kPendingAmounts) && !parts.Has(WritePart::kAccounts)) continue;
    if (parts.Has(WritePart::kSettledHolds) && !parts.Has(WritePart::kTransactions)) continue;
    shapes.push_back(parts);
  }
  return shapes;
}

// Each shape's statement uses exactly the positions of its parts' parameters and the
// expected counts last, holds the CTE of each counted part present and of no other, and
// hands exactly those counts to the schema's check.
TEST(PostgresStatements, EachShapeOfTheWriteHoldsItsPartsAndUsesExactlyTheirPositions) {
  for (const WriteParts parts : EveryShape()) {
    const WriteStatement& statement = WriteStatementOf(parts);
    SCOPED_TRACE(statement.name);
    EXPECT_EQ(statement.name, absl::StrCat("write_batch_", absl::Hex(parts.bits())));
    int parameters = 0;
    for (int i = 0; i < kWriteParameterCount; ++i) {
      if (parts.Has(WritePartOf(static_cast<WriteParameter>(i)))) ++parameters;
    }
    EXPECT_EQ(statement.parameter_count, parameters + 1);
    const ParameterUse use = ParameterUseOf(statement.sql);
    EXPECT_EQ(use.highest, parameters + 1);
    EXPECT_TRUE(use.contiguous);
    EXPECT_NE(statement.sql.find(absl::StrCat(kCheckWriteCountsFunction, "(ARRAY[")),
              std::string::npos);
    EXPECT_NE(statement.sql.find(absl::StrCat("$", parameters + 1, "::bigint[])")),
              std::string::npos);
    for (int i = 0; i < kCountedWritePartCount; ++i) {
      const auto part = static_cast<WritePart>(i);
      EXPECT_EQ(statement.sql.find(absl::StrCat(WritePartName(part), " AS (")) != std::string::npos,
                parts.Has(part))
          << WritePartName(part);
      EXPECT_EQ(statement.sql.find(absl::StrCat("count(*) FROM ", WritePartName(part), ")")) !=
                    std::string::npos,
                parts.Has(part))
          << WritePartName(part);
    }
    EXPECT_EQ(statement.sql.find("hold_id") != std::string::npos,
              parts.Has(WritePart::kSettledHolds));
    EXPECT_EQ(statement.sql.find("pending_debits") != std::string::npos,
              parts.Has(WritePart::kPendingAmounts));
    EXPECT_EQ(&WriteStatementOf(parts), &statement);  // built once
  }
}

// Each shape with its rows inline takes one scalar per parameter and row, numbered
// parameter by parameter (each parameter's rows together), and the expected counts one
// by one: its SQL uses exactly those positions, unnests nothing and lists each part's
// rows.
TEST(PostgresStatements, EachInlineShapeTakesOneValuePerParameterAndRow) {
  for (const WriteParts parts : EveryShape()) {
    if (!parts.Has(WritePart::kTransactions)) continue;
    WriteBatchCounts rows;
    int counted = 0;
    for (int i = 0; i < kCountedWritePartCount; ++i) {
      const auto part = static_cast<WritePart>(i);
      if (!parts.Has(part)) continue;
      rows[part] = part == WritePart::kTransactions ? 1 : 1 + i % 3;
      ++counted;
    }
    const WriteStatement& statement = WriteStatementOf({.parts = parts, .inline_rows = rows});
    SCOPED_TRACE(statement.name);
    EXPECT_TRUE(absl::StartsWith(statement.name,
                                 absl::StrCat("write_batch_", absl::Hex(parts.bits()), "_rows_1")));
    int values = 0;
    for (int i = 0; i < kWriteParameterCount; ++i) {
      const auto parameter = static_cast<WriteParameter>(i);
      if (parts.Has(WritePartOf(parameter))) values += WriteParameterRows(parameter, rows);
    }
    EXPECT_EQ(statement.parameter_count, values + counted);
    const ParameterUse use = ParameterUseOf(statement.sql);
    EXPECT_EQ(use.highest, values + counted);
    EXPECT_TRUE(use.contiguous);
    EXPECT_EQ(statement.sql.find("unnest"), std::string::npos);
    EXPECT_NE(statement.sql.find(absl::StrCat("$", values + counted, "::bigint])")),
              std::string::npos);
    EXPECT_EQ(&WriteStatementOf({.parts = parts, .inline_rows = rows}), &statement);
    EXPECT_NE(&WriteStatementOf(parts), &statement);  // the arrays' shape is another
  }
}

// A transfer's write, inline: the transaction's 6 values, then each entry column's two
// rows together, so the first entry's row takes every other position.
TEST(PostgresStatements, AnInlineTransfersRowsTakeTheirColumnsPositions) {
  const WriteParts parts = WriteParts()
                               .With(WritePart::kTransactions)
                               .With(WritePart::kEntries)
                               .With(WritePart::kAccounts)
                               .With(WritePart::kNewKeys)
                               .With(WritePart::kEvents);
  WriteBatchCounts rows;
  rows[WritePart::kTransactions] = 1;
  rows[WritePart::kEntries] = 2;
  rows[WritePart::kAccounts] = 2;
  rows[WritePart::kNewKeys] = 1;
  rows[WritePart::kEvents] = 1;
  const WriteStatement& statement = WriteStatementOf({.parts = parts, .inline_rows = rows});
  EXPECT_EQ(statement.name, "write_batch_5d_rows_1_2_2_1_1");
  EXPECT_NE(statement.sql.find("VALUES ($1::text, $2::text, $3::bigint, $4::text, $5::text, "
                               "$6::text)"),
            std::string::npos)
      << statement.sql;
  EXPECT_NE(statement.sql.find("VALUES ($7::text, $9::bigint, $11::text, $13::integer, "
                               "$15::text, $17::bigint, $19::bigint, $21::bigint, $23::bigint), "
                               "($8::text, $10::bigint, $12::text, $14::integer, $16::text, "
                               "$18::bigint, $20::bigint, $22::bigint, $24::bigint)"),
            std::string::npos)
      << statement.sql;
  // 6 + 18 + 10 + 7 + 4 values, then the five expected counts.
  EXPECT_NE(statement.sql.find("ARRAY[$46::bigint, $47::bigint, $48::bigint, $49::bigint, "
                               "$50::bigint])"),
            std::string::npos)
      << statement.sql;
  EXPECT_EQ(statement.parameter_count, 50);
}

TEST(PostgresStatementsDeathTest, InlineRowsMustMatchTheParts) {
  WriteBatchCounts rows;
  rows[WritePart::kTransactions] = 1;
  rows[WritePart::kEntries] = 2;  // a part not in the shape
  EXPECT_DEATH((void)WriteStatementOf({.parts = WriteParts().With(WritePart::kTransactions),
                                       .inline_rows = rows}),
               "inline rows of new_entries: 2 for a part not in the shape");
  rows[WritePart::kEntries] = 0;
  rows[WritePart::kTransactions] = 0;  // a part in the shape without rows
  EXPECT_DEATH((void)WriteStatementOf({.parts = WriteParts().With(WritePart::kTransactions),
                                       .inline_rows = rows}),
               "inline rows of new_transactions: 0 for a part in the shape");
}

TEST(PostgresStatementsDeathTest, AShapeWithoutThePartsItsColumnsBelongToIsAProgrammingError) {
  EXPECT_DEATH((void)WriteStatementOf(WriteParts().With(WritePart::kPendingAmounts)),
               "pending amounts without the accounts");
  EXPECT_DEATH((void)WriteStatementOf(WriteParts().With(WritePart::kSettledHolds)),
               "settlements without the transactions");
  EXPECT_DEATH((void)WriteStatementOf(WriteParts()), "a write statement of no part");
}

// The server reports a short write's counts, one per part of the statement; they map as
// the client-side check does.
TEST(PostgresStatements, AShortWriteReportedByTheServerMapsAsTheClientCheck) {
  PostgresWriteBatch batch;
  batch.AddEvent({.transaction_id = "t", .type = "transaction.committed", .payload = "{}"});
  batch.AddKeyRecord({.identity = {.key_namespace = "operations", .scope = Scope{}, .key = "k"},
                      .fingerprint = "f",
                      .transaction_id = "t"},
                     /*claim_found_row=*/false);
  EXPECT_EQ(batch.Parts(),
            WriteParts().With(WritePart::kNewKeys).With(WritePart::kEvents));
  // The new key's 7 arrays, the event's 4, and the expected counts: 1 key, 1 event.
  const std::vector<BinaryArray> parameters = batch.Parameters();
  EXPECT_EQ(parameters.back().bytes, BigintArray({1, 1}).bytes);
  EXPECT_EQ(parameters.size(), 12u);
  // One row a part: sent inline, the 11 arrays' one element each and the two counts.
  ASSERT_TRUE(batch.Shape().inline_rows.has_value());
  EXPECT_EQ(batch.Statement().parameter_count, 11 + 2);
  EXPECT_TRUE(IsRetryable(batch.CheckAppliedText("{0,1}")));
  const absl::Status events = batch.CheckAppliedText("{1,0}");
  EXPECT_EQ(events.code(), absl::StatusCode::kInternal) << events;
  EXPECT_NE(events.message().find("0/1 new_events"), std::string::npos) << events;
  const absl::Status unreadable = batch.CheckAppliedText("{0,0,0}");
  EXPECT_EQ(unreadable.code(), absl::StatusCode::kInternal) << unreadable;
  EXPECT_NE(unreadable.message().find("not 2 counts"), std::string::npos) << unreadable;
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
  const WriteParts parts = WriteParts()
                               .With(WritePart::kTransactions)
                               .With(WritePart::kEntries)
                               .With(WritePart::kAccounts)
                               .With(WritePart::kEvents);
  WriteParameters parameters(parts);
  int present = 0;
  for (int i = kWriteParameterCount - 1; i >= 0; --i) {
    const auto parameter = static_cast<WriteParameter>(i);
    if (!parts.Has(WritePartOf(parameter))) {
      parameters.Set(parameter, ArrayOfLength(parameter, 0));  // an absent part: dropped
      continue;
    }
    ++present;
    // Each array as long as its position, to find it again.
    parameters.Set(parameter, ArrayOfLength(parameter, WriteParameterIndex(parameter, parts) + 1));
  }
  const std::vector<BinaryArray> values = std::move(parameters).Take();
  ASSERT_EQ(values.size(), static_cast<size_t>(present));
  EXPECT_EQ(present, 6 + 9 + 5 + 4);
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(values[i].length, i + 1);
  // After the transactions' 6 and before its own: the metadata's 4 are not in this shape.
  EXPECT_EQ(WriteParameterSql(WriteParameter::kEntryAmounts, parts), "$12");
  EXPECT_EQ(WriteParameterSql(WriteParameter::kEntryAmounts,
                              parts.With(WritePart::kMetadata)),
            "$16");
}

TEST(PostgresStatementsDeathTest, AParameterLeftUnsetIsAProgrammingError) {
  EXPECT_DEATH(
      {
        WriteParameters parameters(WriteParts().With(WritePart::kTransactions));
        parameters.Set(WriteParameter::kTransactionIds, TextArray({}));
        (void)std::move(parameters).Take();
      },
      "write parameter 1 was not set");
}

// A part left out of the statement must have no rows: they would be lost.
TEST(PostgresStatementsDeathTest, RowsForAPartNotInTheStatementAreAProgrammingError) {
  EXPECT_DEATH(
      {
        WriteParameters parameters(WriteParts().With(WritePart::kTransactions));
        parameters.Set(WriteParameter::kMetadataNames, TextArray({"currency"}));
      },
      "its part new_metadata is not in the statement");
}

// The server refuses an array of another element type than the parameter's cast: the
// batch cannot send one.
TEST(PostgresStatementsDeathTest, AnArrayOfAnotherElementTypeThanItsSqlIsAProgrammingError) {
  EXPECT_DEATH(
      {
        WriteParameters parameters(WriteParts().With(WritePart::kEntries));
        parameters.Set(WriteParameter::kEntryIndexes, BigintArray({0}));
      },
      "is a bigint\\[\\], not the integer\\[\\] of its SQL");
}

// libpqxx's text[] parameters are array literals: every element double-quoted, only a
// double quote and a backslash escaped (wherever they fall).
TEST(PostgresStatements, ArrayLiteralsQuoteEveryTextAndEscapeOnlyQuoteAndBackslash) {
  EXPECT_EQ(TextArrayLiteral({}), "{}");
  EXPECT_EQ(TextArrayLiteral({"", "a b", "NULL", "{x,y}"}), R"({"","a b","NULL","{x,y}"})");
  EXPECT_EQ(TextArrayLiteral({"\"", "a\\b", "\"x\\\\y\"", R"({"k":"v"})"}),
            R"({"\"","a\\b","\"x\\\\y\"","{\"k\":\"v\"}"})");
}

}  // namespace
}  // namespace ledger::postgres_internal
