#include "server/idempotency_key_header.h"

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "idempotency/key.h"

namespace ledger::server {
namespace {

// RFC 9110 tchar, plus ':' and '/' as RFC 8941 allows inside a token.
bool IsTokenCharacter(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+':
    case '-': case '.': case '^': case '_': case '`': case '|': case '~': case ':': case '/':
      return true;
    default:
      return false;
  }
}

// RFC 8941 section 4.2.5: DQUOTE *( unescaped / "\" ( DQUOTE / "\" ) ) DQUOTE, where
// unescaped is %x20-21 / %x23-5B / %x5D-7E. Nothing may follow the closing quote.
absl::StatusOr<std::string> ParseStructuredString(std::string_view value) {
  std::string key;
  for (size_t i = 1; i < value.size(); ++i) {
    char c = value[i];
    if (c == '\\') {
      if (i + 1 == value.size() || (value[i + 1] != '"' && value[i + 1] != '\\')) {
        return absl::InvalidArgumentError(
            "Idempotency-Key: a backslash may only escape '\"' or '\\'");
      }
      key.push_back(value[++i]);
    } else if (c == '"') {
      if (i + 1 != value.size()) {
        return absl::InvalidArgumentError(
            "Idempotency-Key: nothing may follow the closing quote (no parameters)");
      }
      return key;
    } else if (c < 0x20 || c > 0x7e) {
      return absl::InvalidArgumentError(
          "Idempotency-Key: only printable ASCII may appear inside the quotes");
    } else {
      key.push_back(c);
    }
  }
  return absl::InvalidArgumentError("Idempotency-Key: the string has no closing quote");
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// RFC 8941 section 4.2.4: an Integer is -?DIGIT{1,15}, a Decimal -?DIGIT{1,12}.DIGIT{1,3}.
// Any all-digit value is refused, whatever its length: it reads as a number either way.
bool IsStructuredNumber(std::string_view value) {
  if (!value.empty() && value.front() == '-') value.remove_prefix(1);
  size_t dot = value.find('.');
  std::string_view whole = value.substr(0, dot);
  std::string_view fraction = dot == std::string_view::npos ? "" : value.substr(dot + 1);
  auto all_digits = [](std::string_view part) {
    if (part.empty()) return false;
    for (char c : part) {
      if (!IsDigit(c)) return false;
    }
    return true;
  };
  return all_digits(whole) && (dot == std::string_view::npos || all_digits(fraction));
}

absl::StatusOr<std::string> ParseBareValue(std::string_view value) {
  for (char c : value) {
    if (!IsTokenCharacter(c)) {
      return absl::InvalidArgumentError(
          "Idempotency-Key must be a Structured Field string (\"...\") or a bare value "
          "(letters, digits, and !#$%&'*+-.^_`|~:/)");
    }
  }
  if (IsStructuredNumber(value)) {
    return absl::InvalidArgumentError(
        "Idempotency-Key is a number (a Structured Field Integer or Decimal), not a key; "
        "send it as a string: \"12345\"");
  }
  if (value.front() == ':') {
    return absl::InvalidArgumentError(
        "Idempotency-Key begins with ':' (a Structured Field Byte Sequence), not a key; "
        "send it as a string: \":...\"");
  }
  return std::string(value);
}

}  // namespace

absl::StatusOr<std::string> ParseIdempotencyKeyHeader(std::string_view value) {
  if (value.empty()) return absl::InvalidArgumentError("Idempotency-Key is empty");
  std::string key;
  if (value.front() == '"') {
    LEDGER_ASSIGN_OR_RETURN(key, ParseStructuredString(value));
  } else {
    LEDGER_ASSIGN_OR_RETURN(key, ParseBareValue(value));
  }
  absl::Status valid = ValidateKey(key);
  if (!valid.ok()) return Annotate(valid, "Idempotency-Key");
  return key;
}

}  // namespace ledger::server
