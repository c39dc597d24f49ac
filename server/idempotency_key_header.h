// The Idempotency-Key request header (draft-ietf-httpapi-idempotency-key-header).
//
// The draft makes the value a Structured Field Item whose bare item is a String
// (RFC 8941): `Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"`. Clients that
// follow Stripe send the key unquoted; we accept that too, as a token of RFC 9110 tchar
// plus ':' and '/'. Both forms of the same characters are the same key, so a client
// that switches form on a retry still replays. Parameters are not accepted.
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
