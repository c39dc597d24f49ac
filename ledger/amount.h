// Amounts are signed 64-bit integers of an asset's minor units (cents, credits).
// Every sum and difference goes through these checked helpers: an overflow is an
// error, never a wrap-around. Thread-safe: pure functions.
#ifndef LEDGER_LEDGER_AMOUNT_H_
#define LEDGER_LEDGER_AMOUNT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace ledger {

using Amount = int64_t;

inline std::optional<Amount> CheckedAdd(Amount a, Amount b) {
  Amount sum;
  if (__builtin_add_overflow(a, b, &sum)) return std::nullopt;
  return sum;
}

inline std::optional<Amount> CheckedSubtract(Amount a, Amount b) {
  Amount difference;
  if (__builtin_sub_overflow(a, b, &difference)) return std::nullopt;
  return difference;
}

// Parses an optionally signed decimal integer ("1500", "-20"); nothing else (no
// spaces, no '+', no fraction, no leading zeros). InvalidArgument on overflow.
absl::StatusOr<Amount> ParseAmount(std::string_view text);

// The decimal text ParseAmount reads back.
std::string FormatAmount(Amount amount);

// Human form with the asset's scale: FormatMajorUnits(-1234, 2) == "-12.34".
std::string FormatMajorUnits(Amount amount, int scale);

}  // namespace ledger

#endif  // LEDGER_LEDGER_AMOUNT_H_
