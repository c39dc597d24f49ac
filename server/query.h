// Reading query parameters and JSON bodies the same strict way on every route: a bad
// value is an InvalidArgument naming the parameter, never a silent default.
//
// Thread-safe: pure functions.
#ifndef LEDGER_SERVER_QUERY_H_
#define LEDGER_SERVER_QUERY_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "ledger/ledger.h"
#include "server/http_message.h"
#include "nlohmann/json.hpp"

namespace ledger::server {

inline constexpr int64_t kPageLimitDefault = 100;
inline constexpr int64_t kPageLimitMax = 1000;

// ?limit=: 1..kPageLimitMax, default kPageLimitDefault.
absl::StatusOr<int64_t> PageLimit(const HttpRequest& request);
// An integer parameter >= 0, or `absent` when not given.
absl::StatusOr<int64_t> NonNegativeParameter(const HttpRequest& request, const char* name,
                                             int64_t absent);
// The request header that asks for the primary (docs/http.md "Reads off the primary").
inline constexpr char kConsistencyHeader[] = "Consistency";
// `Consistency: primary` (read-your-writes) or `replica` (the default: the read engine of
// --read-db when the server has one, else the primary); absent: replica. Any other value,
// or the header twice: InvalidArgument naming it.
absl::StatusOr<ReadConsistency> RequestedConsistency(const HttpRequest& request);
// The body parsed strictly (duplicate members, trailing text: errors); must be an object.
absl::StatusOr<nlohmann::json> JsonObjectBody(const HttpRequest& request);

}  // namespace ledger::server

#endif  // LEDGER_SERVER_QUERY_H_
