// The pipeline's array parameters in PostgreSQL's binary format
// (engines/postgres/postgres_binary_arrays.h): the bytes pinned by hand (no server), and
// compared with what the server's own array_send produces for the same values (a server
// of its own: LEDGER_TEST_POSTGRES_DSN).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "engines/postgres/postgres_binary_arrays.h"
#include "gtest/gtest.h"
#include "tests/conformance/conformance_context.h"
#include "tests/engines/postgres/postgres_test_database.h"

namespace ledger::postgres_internal {
namespace {

std::string Hex(const BinaryArray& array) { return absl::BytesToHexString(array.bytes); }

TEST(PostgresBinaryArrays, AnEmptyArrayHasNoDimensionOnlyItsElementType) {
  const BinaryArray empty = TextArray({});
  EXPECT_EQ(empty.element, ArrayElement::kText);
  EXPECT_EQ(empty.length, 0u);
  EXPECT_EQ(Hex(empty),
            "00000000"    // no dimension
            "00000000"    // no NULL
            "00000019");  // text (OID 25)
  EXPECT_EQ(Hex(BigintArray({})), "000000000000000000000014");  // int8 (OID 20)
}

TEST(PostgresBinaryArrays, TextElementsAreTheirBytesAfterTheirLength) {
  const BinaryArray array = TextArray({"ab", "", "\"{,}\\"});
  EXPECT_EQ(array.length, 3u);
  EXPECT_EQ(Hex(array),
            "00000001" "00000000" "00000019"  // one dimension, no NULL, text
            "00000003" "00000001"             // 3 elements from index 1
            "00000002" "6162"                 // "ab"
            "00000000"                        // ""
            "00000005" "227b2c7d5c");         // "{,}\ unquoted, unescaped
}

TEST(PostgresBinaryArrays, NullElementsHaveLengthMinusOneAndSetTheFlag) {
  EXPECT_EQ(Hex(NullableTextArray({std::nullopt, "q"})),
            "00000001" "00000001" "00000019" "00000002" "00000001"
            "ffffffff"
            "00000001" "71");
  EXPECT_EQ(Hex(NullableBigintArray({std::nullopt})),
            "00000001" "00000001" "00000014" "00000001" "00000001" "ffffffff");
  // No NULL among nullable values: the flag stays clear, as array_send leaves it.
  EXPECT_EQ(Hex(NullableBigintArray({7})), Hex(BigintArray({7})));
}

TEST(PostgresBinaryArrays, IntegersAreBigEndianInTheirElementTypesWidth) {
  EXPECT_EQ(Hex(BigintArray({1, -1, INT64_MIN})),
            "00000001" "00000000" "00000014" "00000003" "00000001"
            "00000008" "0000000000000001"
            "00000008" "ffffffffffffffff"
            "00000008" "8000000000000000");
  EXPECT_EQ(Hex(IntegerArray({258, -2})),
            "00000001" "00000000" "00000017" "00000002" "00000001"  // int4 (OID 23)
            "00000004" "00000102"
            "00000004" "fffffffe");
}

TEST(PostgresBinaryArraysDeathTest, AnIntegerElementOutsideInt4IsAProgrammingError) {
  EXPECT_DEATH((void)IntegerArray({int64_t{1} << 31}), "does not fit an integer");
}

// The server's array_send of the same values, as hex.
std::string ServerBytes(const std::string& array_sql) {
  absl::StatusOr<std::string> hex =
      testing::QueryPostgresValue("SELECT encode(array_send(" + array_sql + "), 'hex')");
  return hex.ok() ? *hex : hex.status().ToString();
}

// What the pipeline sends is byte for byte what array_send returns: array_recv, its
// inverse, reads it as these values (and refuses any other element type).
TEST(PostgresBinaryArrays, TheBytesAreWhatTheServersArraySendReturns) {
  if (std::string reason = testing::PostgresUnavailableReason(); !reason.empty()) {
    if (testing::RunningInCi()) GTEST_FAIL() << "postgres is required under CI=true: " << reason;
    GTEST_SKIP() << "postgres skipped: " << reason;
  }
  EXPECT_EQ(Hex(TextArray({})), ServerBytes("'{}'::text[]"));
  EXPECT_EQ(Hex(TextArray({"ab", "", "\"{,}\\", "é€"})),
            ServerBytes(R"(ARRAY['ab', '', E'"{,}\\', 'é€']::text[])"));
  EXPECT_EQ(Hex(NullableTextArray({std::nullopt, "q", std::nullopt})),
            ServerBytes("ARRAY[NULL, 'q', NULL]::text[]"));
  EXPECT_EQ(Hex(BigintArray({})), ServerBytes("'{}'::bigint[]"));
  EXPECT_EQ(Hex(BigintArray({0, 1, -1, INT64_MAX, INT64_MIN})),
            ServerBytes("ARRAY[0, 1, -1, 9223372036854775807, -9223372036854775808]::bigint[]"));
  EXPECT_EQ(Hex(NullableBigintArray({std::nullopt, 42})),
            ServerBytes("ARRAY[NULL, 42]::bigint[]"));
  EXPECT_EQ(Hex(IntegerArray({0, 258, -2, INT32_MAX})),
            ServerBytes("ARRAY[0, 258, -2, 2147483647]::integer[]"));
}

}  // namespace
}  // namespace ledger::postgres_internal
