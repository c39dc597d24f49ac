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

}  // namespace

absl::StatusOr<std::string> ParseIdempotencyKeyHeader(std::string_view value) {
  if (value.empty()) return absl::InvalidArgumentError("Idempotency-Key is empty");
  std::string key;
  if (value.front() == '"') {
    LEDGER_ASSIGN_OR_RETURN(key, ParseStructuredString(value));
  } else {
    for (char c : value) {
      if (!IsTokenCharacter(c)) {
        return absl::InvalidArgumentError(
            "Idempotency-Key must be a Structured Field string (\"...\") or a bare token "
            "(letters, digits, and !#$%&'*+-.^_`|~:/)");
      }
    }
    key = std::string(value);
  }
  absl::Status valid = ValidateKey(key);
  if (!valid.ok()) return Annotate(valid, "Idempotency-Key");
  return key;
}

}  // namespace ledger::server
