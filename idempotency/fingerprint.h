// Fingerprints of business payloads: SHA-256 (OpenSSL) over the RFC 8785 (JSON
// Canonicalization Scheme) form of the payload, as 64 lowercase hex digits.
//
//   nlohmann::json payload = {{"amount", "100"}, {"to", "b"}, {"from", "a"}};
//   std::string fp = ledger::Fingerprint(payload);  // key order does not matter
//
// The caller omits the idempotency key and request metadata from the payload and
// writes amounts as decimal strings, so the fingerprint never depends on float
// formatting. Thread-safe: pure functions.
#ifndef LEDGER_IDEMPOTENCY_FINGERPRINT_H_
#define LEDGER_IDEMPOTENCY_FINGERPRINT_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace ledger {

// RFC 8785 canonical text of a parsed JSON value: object members sorted by their
// UTF-16 code units, no insignificant white space, strings escaped minimally, numbers
// in ECMAScript Number-to-String form. InvalidArgument for a non-finite number or a
// string that is not valid UTF-8.
absl::StatusOr<std::string> CanonicalJson(const nlohmann::json& value);

// Parses `text` strictly (I-JSON): malformed JSON, duplicate member names at any depth
// and invalid UTF-8 are InvalidArgument.
absl::StatusOr<nlohmann::json> ParseJsonStrict(std::string_view text);

// ParseJsonStrict, then CanonicalJson.
absl::StatusOr<std::string> CanonicalizeJsonText(std::string_view text);

// Appends `s` as a JSON string, escaped minimally as RFC 8785 says (the same bytes
// nlohmann's dump writes for valid UTF-8). InvalidArgument, with nothing appended, when
// `s` is not valid UTF-8.
absl::Status AppendCanonicalJsonString(std::string_view s, std::string& out);

// Lowercase hex SHA-256 of `bytes`.
std::string Sha256Hex(std::string_view bytes);

// Sha256Hex(CanonicalJson(payload)).
absl::StatusOr<std::string> Fingerprint(const nlohmann::json& payload);

}  // namespace ledger

#endif  // LEDGER_IDEMPOTENCY_FINGERPRINT_H_
