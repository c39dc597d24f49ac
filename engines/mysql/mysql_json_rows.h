// The engine's stored procedures take their lists as JSON text, read there with
// JSON_TABLE: the write procedure (schema/mysql/0008_write_procedure.sql) an array of
// rows per table, each an array of values by position; the claim procedure
// (0009_claim_lock_procedure.sql) the accounts' ids as an array of strings.
//
//   std::string rows;
//   AppendJsonRow(rows, {std::string_view(id), int64_t{42}, JsonValue()});  // [["a",42,null]
//   rows.push_back(']');
//
// The engine escapes for itself rather than with the fingerprint's canonical escaper
// (idempotency/fingerprint.h): that one checks UTF-8 byte by byte, which cost 7% on
// batches of 100 (docs/benchmarks.md, the stop review of "the writes and COMMIT as one
// CALL"). The ledger has validated its strings already, and the server refuses bytes
// that are not UTF-8 (4035, InvalidArgument).
//
// Internal to engines/mysql. Thread-safe: pure functions.
#ifndef LEDGER_ENGINES_MYSQL_MYSQL_JSON_ROWS_H_
#define LEDGER_ENGINES_MYSQL_MYSQL_JSON_ROWS_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace ledger::mysql_internal {

// A value of a row: null, a number, or a string.
using JsonValue = std::variant<std::monostate, int64_t, std::string_view>;

// Appends `text` as a JSON string: quotes, backslashes and control characters escaped,
// every other byte as it is (the engine's strings are UTF-8, as the session's utf8mb4).
void AppendJsonString(std::string& out, std::string_view text);

// Appends one row to `array`: "[[" and the values when it is empty, ",[" and the values
// after an earlier row. The caller closes the array with ']'.
void AppendJsonRow(std::string& array, std::initializer_list<JsonValue> values);

// `texts` as one JSON array of strings.
std::string JsonStringArray(const std::vector<std::string>& texts);

}  // namespace ledger::mysql_internal

#endif  // LEDGER_ENGINES_MYSQL_MYSQL_JSON_ROWS_H_
