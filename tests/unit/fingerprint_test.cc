#include "idempotency/fingerprint.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace ledger {
namespace {

using Json = nlohmann::json;

// Canonical text of `value`, or the error message prefixed with "ERROR: " so a
// failing expectation shows what went wrong.
std::string Canon(const Json& value) {
  absl::StatusOr<std::string> canonical = CanonicalJson(value);
  return canonical.ok() ? *canonical : "ERROR: " + canonical.status().ToString();
}

std::string CanonText(std::string_view text) {
  absl::StatusOr<std::string> canonical = CanonicalizeJsonText(text);
  return canonical.ok() ? *canonical : "ERROR: " + canonical.status().ToString();
}

bool IsInvalidArgument(const absl::StatusOr<std::string>& result) {
  return result.status().code() == absl::StatusCode::kInvalidArgument;
}

// --- Numbers: RFC 8785 Appendix B -------------------------------------------

struct NumberSample {
  std::uint64_t bits;
  std::string_view expected;
};

TEST(CanonicalJson, FormatsRfc8785AppendixBNumbersLikeEcmaScript) {
  const NumberSample kSamples[] = {
      {0x0000000000000000, "0"},
      {0x8000000000000000, "0"},
      {0x0000000000000001, "5e-324"},
      {0x8000000000000001, "-5e-324"},
      {0x7fefffffffffffff, "1.7976931348623157e+308"},
      {0xffefffffffffffff, "-1.7976931348623157e+308"},
      {0x4340000000000000, "9007199254740992"},
      {0xc340000000000000, "-9007199254740992"},
      {0x4430000000000000, "295147905179352830000"},
      {0x44b52d02c7e14af5, "9.999999999999997e+22"},
      {0x44b52d02c7e14af6, "1e+23"},
      {0x44b52d02c7e14af7, "1.0000000000000001e+23"},
      {0x444b1ae4d6e2ef4e, "999999999999999700000"},
      {0x444b1ae4d6e2ef4f, "999999999999999900000"},
      {0x444b1ae4d6e2ef50, "1e+21"},
      {0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
      {0x3eb0c6f7a0b5ed8d, "0.000001"},
      {0x41b3de4355555553, "333333333.3333332"},
      {0x41b3de4355555554, "333333333.33333325"},
      {0x41b3de4355555555, "333333333.3333333"},
      {0x41b3de4355555556, "333333333.3333334"},
      {0x41b3de4355555557, "333333333.33333343"},
      {0xbecbf647612f3696, "-0.0000033333333333333333"},
      {0x43143ff3c1cb0959, "1424953923781206.2"},
  };
  for (const NumberSample& sample : kSamples) {
    SCOPED_TRACE(testing::Message() << std::hex << "0x" << sample.bits);
    EXPECT_EQ(Canon(Json(std::bit_cast<double>(sample.bits))), sample.expected);
  }
}

TEST(CanonicalJson, RejectsNaNAndInfinity) {
  EXPECT_TRUE(IsInvalidArgument(CanonicalJson(Json(std::bit_cast<double>(0x7ff0000000000000ULL)))));
  EXPECT_TRUE(IsInvalidArgument(CanonicalJson(Json(std::bit_cast<double>(0x7fffffffffffffffULL)))));
  EXPECT_TRUE(IsInvalidArgument(CanonicalJson(Json(-std::numeric_limits<double>::infinity()))));
  EXPECT_TRUE(IsInvalidArgument(CanonicalJson(Json::array({1, Json{{"x", NAN}}}))));
}

TEST(CanonicalJson, SwitchesToExponentFormOutsideOneEMinus7ToOneE21) {
  EXPECT_EQ(Canon(Json(1e20)), "100000000000000000000");
  EXPECT_EQ(Canon(Json(1e21)), "1e+21");
  EXPECT_EQ(Canon(Json(1.5e21)), "1.5e+21");
  EXPECT_EQ(Canon(Json(1e-6)), "0.000001");
  EXPECT_EQ(Canon(Json(1.25e-6)), "0.00000125");
  EXPECT_EQ(Canon(Json(1e-7)), "1e-7");
  EXPECT_EQ(Canon(Json(1.23e-7)), "1.23e-7");
  EXPECT_EQ(Canon(Json(0.5)), "0.5");
  EXPECT_EQ(Canon(Json(123.456)), "123.456");
  EXPECT_EQ(Canon(Json(-2.0)), "-2");
}

TEST(CanonicalJson, TreatsIntegersAsDoubles) {
  EXPECT_EQ(Canon(Json(0)), "0");
  EXPECT_EQ(Canon(Json(-1)), "-1");
  EXPECT_EQ(Canon(Json(100u)), "100");
  // 2^53 + 1 is not a double; it rounds to 2^53 as it would in JavaScript.
  EXPECT_EQ(Canon(Json(std::int64_t{9007199254740993})), "9007199254740992");
  EXPECT_EQ(Canon(Json(std::numeric_limits<std::uint64_t>::max())), "18446744073709552000");
  EXPECT_EQ(Canon(Json(std::numeric_limits<std::int64_t>::min())), "-9223372036854776000");
}

// --- Strings: RFC 8785 section 3.2.2.2 --------------------------------------

TEST(CanonicalJson, EscapesOnlyQuoteBackslashAndControlCharacters) {
  EXPECT_EQ(Canon(Json("\x0f")), R"("\u000f")");
  EXPECT_EQ(Canon(Json("\n")), R"("\n")");
  EXPECT_EQ(Canon(Json("\b\t\n\f\r")), R"("\b\t\n\f\r")");
  EXPECT_EQ(Canon(Json(std::string("\0\x1f", 2))), R"("\u0000\u001f")");
  EXPECT_EQ(Canon(Json("\"\\")), R"("\"\\")");
  // Not escaped: '/', DEL, non-ASCII (emitted as raw UTF-8).
  EXPECT_EQ(Canon(Json("/\x7f")), "\"/\x7f\"");
  EXPECT_EQ(Canon(Json("\u20ac")), "\"\u20ac\"");
  EXPECT_EQ(Canon(Json("\U0001F600")), "\"\U0001F600\"");
}

TEST(CanonicalJson, RejectsInvalidUtf8InValuesAndNames) {
  const std::vector<std::string> kInvalid = {
      "\xff",              // never a UTF-8 byte
      "\x80",              // stray continuation byte
      "\xc3",              // truncated two-byte sequence
      "\xe2\x82",          // truncated three-byte sequence
      "\xc0\xaf",          // overlong '/'
      "\xe0\x80\xaf",      // overlong '/'
      "\xed\xa0\x80",      // UTF-16 surrogate U+D800
      "\xf4\x90\x80\x80",  // above U+10FFFF
  };
  for (const std::string& bad : kInvalid) {
    SCOPED_TRACE(testing::Message() << "bytes of length " << bad.size());
    EXPECT_TRUE(IsInvalidArgument(CanonicalJson(Json("ok" + bad))));
    EXPECT_TRUE(IsInvalidArgument(CanonicalJson(Json{{"ok" + bad, 1}})));
  }
}

// --- Sorting: RFC 8785 section 3.2.3 -----------------------------------------

TEST(CanonicalJson, SortsMembersByUtf16CodeUnits) {
  const std::string input = R"({
    "\u20ac": "Euro Sign",
    "\r": "Carriage Return",
    "\ufb33": "Hebrew Letter Dalet With Dagesh",
    "1": "One",
    "\ud83d\ude00": "Emoji: Grinning Face",
    "\u0080": "Control",
    "\u00f6": "Latin Small Letter O With Diaeresis"
  })";
  const std::string expected =
      "{\"\\r\":\"Carriage Return\","
      "\"1\":\"One\","
      "\"\u0080\":\"Control\","
      "\"\u00f6\":\"Latin Small Letter O With Diaeresis\","
      "\"\u20ac\":\"Euro Sign\","
      "\"\U0001F600\":\"Emoji: Grinning Face\","
      "\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}";
  EXPECT_EQ(CanonText(input), expected);
  EXPECT_EQ(Canon(Json::parse(input)), expected);
}

TEST(CanonicalJson, SortsSupplementaryCharactersBeforeHighBmpUnlikeByteOrder) {
  // UTF-8 bytes order U+FFFD (EF..) before U+10000 (F0..); UTF-16 puts the surrogate
  // pair (D800..) first.
  const Json object = {{"\ufffd", 1}, {"\U00010000", 2}};
  EXPECT_EQ(Canon(object), "{\"\U00010000\":2,\"\ufffd\":1}");
}

TEST(CanonicalJson, SortsNestedObjectsAndKeepsArrayOrder) {
  const Json value = {{"b", {{"y", 1}, {"x", 2}}}, {"a", Json::array({3, 1, 2})}};
  EXPECT_EQ(Canon(value), R"({"a":[3,1,2],"b":{"x":2,"y":1}})");
}

TEST(CanonicalJson, WritesLiteralsAndEmptyContainersWithoutWhitespace) {
  EXPECT_EQ(Canon(Json(nullptr)), "null");
  EXPECT_EQ(Canon(Json(true)), "true");
  EXPECT_EQ(Canon(Json(false)), "false");
  EXPECT_EQ(Canon(Json::object()), "{}");
  EXPECT_EQ(Canon(Json::array()), "[]");
  EXPECT_EQ(Canon(Json::array({nullptr, Json::object(), Json::array()})), "[null,{},[]]");
}

TEST(CanonicalJson, RejectsValuesWithoutJsonText) {
  EXPECT_TRUE(IsInvalidArgument(CanonicalJson(Json::binary({1, 2, 3}))));
  EXPECT_TRUE(IsInvalidArgument(CanonicalJson(Json(Json::value_t::discarded))));
}

TEST(CanonicalJson, RejectsNestingBeyondLimitWithoutCrashing) {
  Json shallow = 1;
  for (int i = 0; i < 100; ++i) shallow = Json::array({shallow});
  EXPECT_TRUE(CanonicalJson(shallow).ok());

  const std::string deep_text = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_TRUE(IsInvalidArgument(CanonicalizeJsonText(deep_text)));
}

// --- Complete example: RFC 8785 section 3.2.4 ---------------------------------

TEST(CanonicalizeJsonText, ReproducesRfc8785Example) {
  const std::string_view input = R"({
    "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
    "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
    "literals": [null, true, false]
  })";
  EXPECT_EQ(CanonText(input),
            R"({"literals":[null,true,false],)"
            R"("numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],)"
            R"("string":"€$\u000f\nA'B\"\\\\\"/"})");
}

TEST(CanonicalizeJsonText, RejectsDuplicateMemberNamesAtAnyDepth) {
  const std::vector<std::string_view> kDuplicates = {
      R"({"a":1,"a":2})",
      R"({"a":1,"a":1})",
      R"({"a":1,"\u0061":2})",  // same name, different spelling
      R"({"x":{"a":1,"b":2,"a":3}})",
      R"([{"a":1},{"b":{"c":1,"c":2}}])",
  };
  for (std::string_view text : kDuplicates) {
    SCOPED_TRACE(text);
    absl::StatusOr<std::string> result = CanonicalizeJsonText(text);
    EXPECT_TRUE(IsInvalidArgument(result));
    EXPECT_NE(result.status().message().find("duplicate member name"), std::string_view::npos);
  }
}

TEST(CanonicalizeJsonText, AcceptsSameNameInDifferentObjects) {
  EXPECT_EQ(CanonText(R"({"b":{"a":1},"a":{"a":2},"c":[{"a":3},{"a":4}]})"),
            R"({"a":{"a":2},"b":{"a":1},"c":[{"a":3},{"a":4}]})");
}

TEST(CanonicalizeJsonText, RejectsMalformedJson) {
  const std::vector<std::string_view> kMalformed = {
      "",  "{",  R"({"a":1,})", "[1 2]", R"({"a":1} x)", "01", "NaN", "Infinity", "/*c*/1",
      "{'a':1}", "[1,]", R"("\x")",
      "1e400",     // overflows a double
      "\"a\tb\"",  // raw control character in a string
  };
  for (std::string_view text : kMalformed) {
    SCOPED_TRACE(text);
    EXPECT_TRUE(IsInvalidArgument(CanonicalizeJsonText(text)));
  }
}

TEST(CanonicalizeJsonText, RejectsInvalidUtf8AndLoneSurrogates) {
  const std::vector<std::string_view> kInvalid = {
      "\"\xff\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "{\"\xc3\":1}",
      R"("\ud800")", R"("\udc00x")", R"("\ud83d\u0041")",
  };
  for (std::string_view text : kInvalid) {
    SCOPED_TRACE(text);
    EXPECT_TRUE(IsInvalidArgument(CanonicalizeJsonText(text)));
  }
}

TEST(CanonicalizeJsonText, IgnoresInsignificantWhitespace) {
  EXPECT_EQ(CanonText(" \t\n{ \"b\" : [ 1 , 2 ] ,\r\n \"a\" : true } \n"),
            R"({"a":true,"b":[1,2]})");
}

// --- SHA-256 and fingerprints --------------------------------------------------

TEST(Sha256Hex, MatchesFips180TestVectors) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256Hex, HashesEmbeddedNulBytes) {
  EXPECT_NE(Sha256Hex(std::string_view("a\0b", 3)), Sha256Hex("a"));
}

TEST(Fingerprint, IsSha256OfCanonicalFormAsLowercaseHex) {
  const Json payload = {{"amount", "100"}, {"to", "b"}, {"from", "a"}};
  absl::StatusOr<std::string> fp = Fingerprint(payload);
  ASSERT_TRUE(fp.ok()) << fp.status();
  EXPECT_EQ(*fp, Sha256Hex(R"({"amount":"100","from":"a","to":"b"})"));
  ASSERT_EQ(fp->size(), 64u);
  for (char c : *fp) EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << c;
}

TEST(Fingerprint, DoesNotDependOnMemberOrderOrWhitespace) {
  Json built_one_way;
  built_one_way["amount"] = "100";
  built_one_way["meta"]["z"] = Json::array({1, 2});
  built_one_way["meta"]["a"] = nullptr;
  built_one_way["to"] = "b";

  Json built_other_way;
  built_other_way["to"] = "b";
  built_other_way["meta"] = {{"a", nullptr}, {"z", {1, 2}}};
  built_other_way["amount"] = "100";

  const Json parsed =
      Json::parse(R"({ "meta": {"z": [1, 2.0], "a": null}, "to": "b", "amount": "100" })");

  absl::StatusOr<std::string> a = Fingerprint(built_one_way);
  absl::StatusOr<std::string> b = Fingerprint(built_other_way);
  absl::StatusOr<std::string> c = Fingerprint(parsed);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(*a, *c);
}

TEST(Fingerprint, DiffersForDifferentPayloads) {
  const std::vector<Json> kPayloads = {
      {{"amount", "100"}, {"to", "b"}},
      {{"amount", "101"}, {"to", "b"}},
      {{"amount", "100"}, {"to", "c"}},
      {{"amount", "100"}},
      {{"amount", 100}, {"to", "b"}},  // number, not string
      {{"amount", "100"}, {"to", "b"}, {"memo", nullptr}},
      Json::array({1, 2}),
      Json::array({2, 1}),  // array order is significant
      Json::object(),
      Json::array(),
  };
  std::vector<std::string> fingerprints;
  for (const Json& payload : kPayloads) {
    absl::StatusOr<std::string> fp = Fingerprint(payload);
    ASSERT_TRUE(fp.ok()) << fp.status();
    fingerprints.push_back(*fp);
  }
  for (size_t i = 0; i < fingerprints.size(); ++i) {
    for (size_t j = i + 1; j < fingerprints.size(); ++j) {
      EXPECT_NE(fingerprints[i], fingerprints[j]) << kPayloads[i] << " vs " << kPayloads[j];
    }
  }
}

TEST(Fingerprint, PropagatesCanonicalizationErrors) {
  EXPECT_TRUE(IsInvalidArgument(Fingerprint(Json{{"amount", INFINITY}})));
  EXPECT_TRUE(IsInvalidArgument(Fingerprint(Json{{"to", "\xff"}})));
}

}  // namespace
}  // namespace ledger
