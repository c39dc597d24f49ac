// The Idempotency-Key request header (draft-ietf-httpapi-idempotency-key-header), and
// the same value in a batch item's "idempotency_key".
//
// Exactly two forms are accepted, and both forms of the same characters are the same
// key, so a client that switches form on a retry still replays:
//
// 1. The draft's form, a Structured Field String (RFC 8941 section 3.3.3):
//      Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"
//    DQUOTE, printable ASCII (0x20-0x7E) where '"' and '\' are written \" and \\,
//    DQUOTE; nothing after the closing quote (no parameters).
// 2. A Stripe-style bare value, what most clients send:
//      Idempotency-Key: 8e03978e-40d5-43e8-bc93-6894a57f9324
//    letters, digits and ! # $ % & ' * + - . ^ _ ` | ~ : / (RFC 9110 tchar, plus ':'
//    and '/'), and NOT a number: a value RFC 8941 reads as an Integer or a Decimal
//    (12345, -7, 3.14) is a number, not a key, and a bare value that begins with ':'
//    is a Byte Sequence; both are refused (quote them: "12345").
//
// The key (the string's content, or the bare value) is 1 to 255 bytes
// (ledger::ValidateKey). Everything else is InvalidArgument, which the routes answer
// as 400 idempotency_key_invalid with the message as the detail: empty, an unclosed
// string, a bad escape, characters outside the form's set (spaces, ',', ';', '"',
// non-ASCII), parameters, a number, a byte sequence, over 255 bytes.
//
// Thread-safe: a pure function.
#ifndef LEDGER_SERVER_IDEMPOTENCY_KEY_HEADER_H_
#define LEDGER_SERVER_IDEMPOTENCY_KEY_HEADER_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace ledger::server {

inline constexpr char kIdempotencyKeyHeader[] = "Idempotency-Key";

// The key the header names, or InvalidArgument saying what is wrong with it. The key
// then also passes ledger::ValidateKey (1..255 printable ASCII bytes).
absl::StatusOr<std::string> ParseIdempotencyKeyHeader(std::string_view value);

}  // namespace ledger::server

#endif  // LEDGER_SERVER_IDEMPOTENCY_KEY_HEADER_H_
