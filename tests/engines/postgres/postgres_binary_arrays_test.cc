// The pipeline's array parameters in PostgreSQL's binary format
// (engines/postgres/postgres_binary_arrays.h): the bytes pinned by hand (no server), and
// compared with what the server's own array_send produces for the same values (a server
// of its own: LEDGER_TEST_POSTGRES_DSN).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
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

// The write's arrays are written element by element from its rows: the same bytes as
// the vector forms (pinned above), NULLs, emptiness and int4 width included.
TEST(PostgresBinaryArrays, AWriterBuildsTheBytesOfTheVectorForms) {
  BinaryArrayWriter texts(ArrayElement::kText);
  texts.AddText("ab");
  texts.AddNullableText(std::nullopt);
  texts.AddNullableText(std::string("\"{,}\\"));
  const BinaryArray written = std::move(texts).Finish();
  EXPECT_EQ(written.length, 3u);
  EXPECT_EQ(Hex(written), Hex(NullableTextArray({"ab", std::nullopt, "\"{,}\\"})));

  BinaryArrayWriter bigints(ArrayElement::kBigint);
  for (int64_t value : {int64_t{1}, int64_t{-1}, INT64_MIN}) bigints.AddInteger(value);
  EXPECT_EQ(Hex(std::move(bigints).Finish()), Hex(BigintArray({1, -1, INT64_MIN})));

  BinaryArrayWriter integers(ArrayElement::kInteger);
  integers.AddInteger(258);
  integers.AddNullableInteger(-2);
  EXPECT_EQ(Hex(std::move(integers).Finish()), Hex(IntegerArray({258, -2})));

  // Longer than the writer reserves: the header is still completed in place.
  const std::string long_text(1000, 'x');
  BinaryArrayWriter grown(ArrayElement::kText);
  for (int i = 0; i < 3; ++i) grown.AddText(long_text);
  EXPECT_EQ(Hex(std::move(grown).Finish()), Hex(TextArray({long_text, long_text, long_text})));

  BinaryArrayWriter nothing(ArrayElement::kBigint);
  const BinaryArray empty = std::move(nothing).Finish();
  EXPECT_EQ(empty.length, 0u);
  EXPECT_EQ(Hex(empty), Hex(BigintArray({})));
  BinaryArrayWriter only_nulls(ArrayElement::kBigint);
  only_nulls.AddNull();
  EXPECT_EQ(Hex(std::move(only_nulls).Finish()), Hex(NullableBigintArray({std::nullopt})));
}

// Each element read back is its binary form, a view into the array's bytes: what an
// inline write shape sends as a parameter of its own.
TEST(PostgresBinaryArrays, ElementsReadBackAreEachValuesBinaryForm) {
  std::vector<std::optional<std::string>> read;
  const auto collect = [&](const BinaryArray& array) {
    read.clear();
    ForEachElement(array, [&](std::optional<std::string_view> element) {
      if (element.has_value()) {
        EXPECT_GE(element->data(), array.bytes.data());  // a view, not a copy
        EXPECT_LE(element->data() + element->size(), array.bytes.data() + array.bytes.size());
        read.emplace_back(*element);
      } else {
        read.emplace_back(std::nullopt);
      }
    });
    return read;
  };
  EXPECT_EQ(collect(NullableTextArray({"ab", std::nullopt, "", "\"{,}\\"})),
            (std::vector<std::optional<std::string>>{"ab", std::nullopt, "", "\"{,}\\"}));
  EXPECT_EQ(collect(BigintArray({1, -2})),
            (std::vector<std::optional<std::string>>{std::string("\0\0\0\0\0\0\0\1", 8),
                                                     std::string(8, '\xff').replace(7, 1, "\xfe")}));
  EXPECT_EQ(collect(IntegerArray({258})),
            (std::vector<std::optional<std::string>>{std::string("\0\0\1\2", 4)}));
  EXPECT_TRUE(collect(TextArray({})).empty());
}

TEST(PostgresBinaryArraysDeathTest, ElementsAreNotReadFromBytesOfAnotherShape) {
  BinaryArray cut = TextArray({"abc"});
  cut.bytes.pop_back();
  EXPECT_DEATH(ForEachElement(cut, [](std::optional<std::string_view>) {}), "overruns");
  BinaryArray longer = TextArray({"abc"});
  longer.length = 2;
  EXPECT_DEATH(ForEachElement(longer, [](std::optional<std::string_view>) {}),
               "whose bytes say otherwise");
  BinaryArray retyped = BigintArray({1});
  retyped.element = ArrayElement::kText;
  EXPECT_DEATH(ForEachElement(retyped, [](std::optional<std::string_view>) {}), "name type");
}

TEST(PostgresBinaryArraysDeathTest, AWriterRefusesAnElementOfAnotherType) {
  EXPECT_DEATH(
      {
        BinaryArrayWriter bigints(ArrayElement::kBigint);
        bigints.AddText("7");
      },
      "a text element in an array of bigint");
  EXPECT_DEATH(
      {
        BinaryArrayWriter texts(ArrayElement::kText);
        texts.AddInteger(7);
      },
      "an integer element in an array of text");
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
