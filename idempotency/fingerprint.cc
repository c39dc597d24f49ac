#include "idempotency/fingerprint.h"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status.h"

namespace ledger {
namespace {

using Json = nlohmann::json;

// The writer recurses once per nesting level; the limit keeps hostile input from
// exhausting the stack (nlohmann's parser and destructor are not recursive, so this
// is the only place that needs one). Business payloads are nowhere near this deep.
constexpr int kMaxDepth = 512;

// ---------------------------------------------------------------------------
// UTF-8

// Decodes the scalar value starting at s[pos] and advances pos past it. Rejects
// what RFC 3629 forbids: stray continuation bytes, truncated sequences, overlong
// forms, UTF-16 surrogates and values above U+10FFFF.
std::optional<char32_t> DecodeUtf8(std::string_view s, size_t& pos) {
  const auto lead = static_cast<unsigned char>(s[pos]);
  size_t extra = 0;
  char32_t cp = 0;
  char32_t min = 0;
  if (lead < 0x80) {
    ++pos;
    return lead;
  } else if ((lead & 0xE0) == 0xC0) {
    extra = 1, cp = lead & 0x1F, min = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    extra = 2, cp = lead & 0x0F, min = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    extra = 3, cp = lead & 0x07, min = 0x10000;
  } else {
    return std::nullopt;
  }
  if (s.size() - pos <= extra) return std::nullopt;
  for (size_t i = 1; i <= extra; ++i) {
    const auto byte = static_cast<unsigned char>(s[pos + i]);
    if ((byte & 0xC0) != 0x80) return std::nullopt;
    cp = (cp << 6) | (byte & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return std::nullopt;
  pos += extra + 1;
  return cp;
}

absl::Status InvalidUtf8Error() {
  return absl::InvalidArgumentError("string is not valid UTF-8");
}

absl::Status ValidateUtf8(std::string_view s) {
  for (size_t pos = 0; pos < s.size();) {
    if (!DecodeUtf8(s, pos).has_value()) return InvalidUtf8Error();
  }
  return absl::OkStatus();
}

// RFC 8785 section 3.2.3 orders member names by UTF-16 code units, which is neither
// byte nor code point order: a supplementary character (a surrogate pair, 0xD800..)
// sorts before U+E000..U+FFFF although its UTF-8 form sorts after them.
absl::StatusOr<std::u16string> ToUtf16(std::string_view s) {
  std::u16string out;
  out.reserve(s.size());
  for (size_t pos = 0; pos < s.size();) {
    const std::optional<char32_t> cp = DecodeUtf8(s, pos);
    if (!cp.has_value()) return InvalidUtf8Error();
    if (*cp < 0x10000) {
      out.push_back(static_cast<char16_t>(*cp));
    } else {
      const char32_t offset = *cp - 0x10000;
      out.push_back(static_cast<char16_t>(0xD800 + (offset >> 10)));
      out.push_back(static_cast<char16_t>(0xDC00 + (offset & 0x3FF)));
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// Strings (RFC 8785 section 3.2.2.2)

void AppendEscapedByte(char c, std::string& out) {
  switch (c) {
    case '"': out += "\\\""; return;
    case '\\': out += "\\\\"; return;
    case '\b': out += "\\b"; return;
    case '\t': out += "\\t"; return;
    case '\n': out += "\\n"; return;
    case '\f': out += "\\f"; return;
    case '\r': out += "\\r"; return;
    default: break;
  }
  const auto byte = static_cast<unsigned char>(c);
  if (byte < 0x20) {
    static constexpr char kHex[] = "0123456789abcdef";
    out += "\\u00";
    out.push_back(kHex[byte >> 4]);
    out.push_back(kHex[byte & 0x0F]);
    return;
  }
  out.push_back(c);
}

// Once the string is known to be valid UTF-8, escaping byte by byte is exact: every
// byte of a multi-byte sequence is >= 0x80 and is copied through unchanged.
absl::Status AppendString(std::string_view s, std::string& out) {
  LEDGER_RETURN_IF_ERROR(ValidateUtf8(s));
  out.push_back('"');
  for (char c : s) AppendEscapedByte(c, out);
  out.push_back('"');
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Numbers (RFC 8785 section 3.2.2.3: ECMAScript Number.prototype.toString)

// A positive finite double as value = 0.d1d2...dk * 10^point, with d1..dk the
// shortest digit string that round-trips (ECMAScript's s, k and n).
struct Decimal {
  std::string digits;
  int point = 0;
};

Decimal ShortestDecimal(double positive) {
  // Shortest scientific form is at most "d.dddddddddddddddde-308" (23 chars).
  std::array<char, 32> buf{};
  const std::to_chars_result result =
      std::to_chars(buf.data(), buf.data() + buf.size(), positive, std::chars_format::scientific);
  const std::string_view text(buf.data(), static_cast<size_t>(result.ptr - buf.data()));
  const size_t e = text.find('e');
  Decimal decimal;
  for (char c : text.substr(0, e)) {
    if (c != '.') decimal.digits.push_back(c);
  }
  // from_chars takes a leading '-' but not '+'.
  std::string_view exponent = text.substr(e + 1);
  if (exponent.front() == '+') exponent.remove_prefix(1);
  int exp10 = 0;
  std::from_chars(exponent.data(), exponent.data() + exponent.size(), exp10);
  decimal.point = exp10 + 1;
  return decimal;
}

// "d.ddde+NN" / "de-NN": used when the decimal point is outside 1e-7 .. 1e21.
void AppendExponentForm(const Decimal& d, std::string& out) {
  out += d.digits[0];
  if (d.digits.size() > 1) {
    out += '.';
    out.append(d.digits, 1);
  }
  const int exponent = d.point - 1;
  out += exponent < 0 ? "e-" : "e+";
  out += std::to_string(std::abs(exponent));
}

void AppendDecimal(const Decimal& d, std::string& out) {
  const int k = static_cast<int>(d.digits.size());
  const int n = d.point;
  if (k <= n && n <= 21) {  // Integer: digits padded with zeros.
    out += d.digits;
    out.append(static_cast<size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {  // Point inside the digits.
    out.append(d.digits, 0, static_cast<size_t>(n));
    out += '.';
    out.append(d.digits, static_cast<size_t>(n));
  } else if (-6 < n && n <= 0) {  // Small: "0.000ddd".
    out += "0.";
    out.append(static_cast<size_t>(-n), '0');
    out += d.digits;
  } else {
    AppendExponentForm(d, out);
  }
}

absl::Status AppendNumber(double value, std::string& out) {
  if (!std::isfinite(value)) {
    return absl::InvalidArgumentError("JSON has no form for NaN or Infinity");
  }
  if (value == 0) {  // Both +0 and -0: ECMAScript prints "0".
    out += '0';
    return absl::OkStatus();
  }
  if (value < 0) out += '-';
  AppendDecimal(ShortestDecimal(std::fabs(value)), out);
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Values

absl::Status AppendValue(const Json& value, int depth, std::string& out);

absl::Status AppendArray(const Json::array_t& array, int depth, std::string& out) {
  out.push_back('[');
  for (size_t i = 0; i < array.size(); ++i) {
    if (i > 0) out.push_back(',');
    LEDGER_RETURN_IF_ERROR(AppendValue(array[i], depth + 1, out));
  }
  out.push_back(']');
  return absl::OkStatus();
}

absl::Status AppendObject(const Json::object_t& object, int depth, std::string& out) {
  // nlohmann keeps members in byte order; re-sort by UTF-16 code units.
  std::vector<std::pair<std::u16string, const Json::object_t::value_type*>> members;
  members.reserve(object.size());
  for (const auto& member : object) {
    LEDGER_ASSIGN_OR_RETURN(std::u16string key, ToUtf16(member.first));
    members.emplace_back(std::move(key), &member);
  }
  std::sort(members.begin(), members.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  out.push_back('{');
  for (size_t i = 0; i < members.size(); ++i) {
    if (i > 0) out.push_back(',');
    LEDGER_RETURN_IF_ERROR(AppendString(members[i].second->first, out));
    out.push_back(':');
    LEDGER_RETURN_IF_ERROR(AppendValue(members[i].second->second, depth + 1, out));
  }
  out.push_back('}');
  return absl::OkStatus();
}

// get_ptr never throws, so no nlohmann exception can start here.
absl::Status AppendValue(const Json& value, int depth, std::string& out) {
  if (depth > kMaxDepth) {
    return absl::InvalidArgumentError(absl::StrCat("JSON nested deeper than ", kMaxDepth));
  }
  using Type = Json::value_t;
  switch (value.type()) {
    case Type::null:
      out += "null";
      return absl::OkStatus();
    case Type::boolean:
      out += *value.get_ptr<const Json::boolean_t*>() ? "true" : "false";
      return absl::OkStatus();
    case Type::string:
      return AppendString(*value.get_ptr<const Json::string_t*>(), out);
    // I-JSON / RFC 8785: every number is an IEEE-754 double, integers included, so
    // integers beyond 2^53 are rounded exactly as a JavaScript peer would see them.
    case Type::number_integer:
      return AppendNumber(static_cast<double>(*value.get_ptr<const Json::number_integer_t*>()),
                          out);
    case Type::number_unsigned:
      return AppendNumber(static_cast<double>(*value.get_ptr<const Json::number_unsigned_t*>()),
                          out);
    case Type::number_float:
      return AppendNumber(*value.get_ptr<const Json::number_float_t*>(), out);
    case Type::array:
      return AppendArray(*value.get_ptr<const Json::array_t*>(), depth, out);
    case Type::object:
      return AppendObject(*value.get_ptr<const Json::object_t*>(), depth, out);
    case Type::binary:
    case Type::discarded:
      break;
  }
  return absl::InvalidArgumentError("value has no JSON text form (binary or discarded)");
}

// ---------------------------------------------------------------------------
// Strict parsing

// nlohmann silently keeps the last of repeated member names; I-JSON forbids them, and
// accepting them would let two different texts share one fingerprint. Tracks the
// names of every open object so a repeat is caught at any depth.
struct DuplicateNameState {
  std::vector<std::set<std::string, std::less<>>> open_objects;
  std::optional<std::string> first_duplicate;
};

bool TrackMemberNames(DuplicateNameState& state, Json::parse_event_t event, const Json& parsed) {
  switch (event) {
    case Json::parse_event_t::object_start:
      state.open_objects.emplace_back();
      break;
    case Json::parse_event_t::object_end:
      state.open_objects.pop_back();
      break;
    case Json::parse_event_t::key: {
      const std::string& name = *parsed.get_ptr<const Json::string_t*>();
      if (!state.open_objects.back().insert(name).second && !state.first_duplicate) {
        state.first_duplicate = name;
      }
      break;
    }
    default:
      break;
  }
  return true;  // Keep every value; the caller rejects the document afterwards.
}

absl::Status DuplicateNameError(const std::string& name) {
  std::string quoted;
  // Quote through the canonical escaper so control characters in the name stay visible.
  if (!AppendString(name, quoted).ok()) quoted = "(invalid UTF-8)";
  return absl::InvalidArgumentError(absl::StrCat("duplicate member name ", quoted));
}

std::string HexLower(const unsigned char* bytes, size_t size) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (size_t i = 0; i < size; ++i) {
    out.push_back(kHex[bytes[i] >> 4]);
    out.push_back(kHex[bytes[i] & 0x0F]);
  }
  return out;
}

}  // namespace

absl::Status AppendCanonicalJsonString(std::string_view s, std::string& out) {
  return AppendString(s, out);
}

absl::StatusOr<std::string> CanonicalJson(const nlohmann::json& value) {
  std::string out;
  LEDGER_RETURN_IF_ERROR(AppendValue(value, 0, out));
  return out;
}

absl::StatusOr<nlohmann::json> ParseJsonStrict(std::string_view text) {
  DuplicateNameState state;
  Json::parser_callback_t callback = [&state](int /*depth*/, Json::parse_event_t event,
                                              Json& parsed) {
    return TrackMemberNames(state, event, parsed);
  };
  Json value;
  try {
    // The parser itself rejects invalid UTF-8, unpaired \u surrogates, comments,
    // trailing content and numbers that overflow a double.
    value = Json::parse(text.begin(), text.end(), callback, /*allow_exceptions=*/true,
                        /*ignore_comments=*/false);
  } catch (const Json::exception& e) {
    // nlohmann's what() starts with its internal id ("[json.exception.parse_error.101] "):
    // the reader needs the position and the reason after it.
    std::string_view reason = e.what();
    if (size_t id_end = reason.find("] "); reason.rfind("[json.exception.", 0) == 0 &&
                                           id_end != std::string_view::npos) {
      reason.remove_prefix(id_end + 2);
    }
    return absl::InvalidArgumentError(absl::StrCat("malformed JSON: ", View(reason)));
  }
  if (state.first_duplicate.has_value()) return DuplicateNameError(*state.first_duplicate);
  return value;
}

absl::StatusOr<std::string> CanonicalizeJsonText(std::string_view text) {
  LEDGER_ASSIGN_OR_RETURN(Json value, ParseJsonStrict(text));
  return CanonicalJson(value);
}

std::string Sha256Hex(std::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  // Fetched once: EVP_sha256() alone makes EVP_Digest look the algorithm up in the
  // provider on every call. Kept for the process (a null fetch fails below).
  static EVP_MD* const sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  if (sha256 == nullptr ||
      EVP_Digest(bytes.data(), bytes.size(), digest.data(), &size, sha256, nullptr) != 1 ||
      size != 32) {
    // Only possible if OpenSSL is broken (no default provider, out of memory). Any
    // string returned here would make unrelated payloads share a fingerprint and turn
    // conflicts into replays, so stop instead.
    std::fputs("ledger: OpenSSL SHA-256 failed\n", stderr);
    std::abort();
  }
  return HexLower(digest.data(), size);
}

absl::StatusOr<std::string> Fingerprint(const nlohmann::json& payload) {
  LEDGER_ASSIGN_OR_RETURN(std::string canonical, CanonicalJson(payload));
  return Sha256Hex(canonical);
}

}  // namespace ledger
