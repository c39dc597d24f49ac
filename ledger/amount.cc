#include "ledger/amount.h"

#include <charconv>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "base/status.h"

namespace ledger {

absl::StatusOr<Amount> ParseAmount(std::string_view text) {
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == '-') digits.remove_prefix(1);
  if (digits.empty() || (digits.size() > 1 && digits.front() == '0')) {
    return absl::InvalidArgumentError(
        absl::StrCat("amount \"", View(text), "\" is not a decimal integer of minor units"));
  }
  for (char c : digits) {
    if (c < '0' || c > '9') {
      return absl::InvalidArgumentError(
          absl::StrCat("amount \"", View(text), "\" is not a decimal integer of minor units"));
    }
  }
  Amount value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error == std::errc::result_out_of_range) {
    return absl::InvalidArgumentError(
        absl::StrCat("amount \"", View(text), "\" overflows a signed 64-bit integer"));
  }
  if (error != std::errc() || end != text.data() + text.size()) {
    return absl::InvalidArgumentError(absl::StrCat("amount \"", View(text), "\" is malformed"));
  }
  return value;
}

std::string FormatAmount(Amount amount) { return absl::StrCat(amount); }

std::string FormatMajorUnits(Amount amount, int scale) {
  std::string digits = absl::StrCat(amount);
  std::string sign;
  if (amount < 0) {
    sign = "-";
    digits = digits.substr(1);
  }
  if (scale <= 0) return sign + digits;
  size_t fraction_digits = static_cast<size_t>(scale);
  if (digits.size() <= fraction_digits) {
    digits = std::string(fraction_digits + 1 - digits.size(), '0') + digits;
  }
  size_t split = digits.size() - fraction_digits;
  return absl::StrCat(sign, digits.substr(0, split), ".", digits.substr(split));
}

}  // namespace ledger
