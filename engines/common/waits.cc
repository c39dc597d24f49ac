#include "engines/common/waits.h"

#include <algorithm>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/status.h"

namespace ledger::engine_common {

absl::StatusOr<absl::Duration> ParseWaitParameter(std::string_view engine, std::string_view name,
                                                  std::string_view value) {
  const absl::string_view text = View(value);
  absl::Duration wait;
  // absl accepts a bare "0" and "inf"; neither is a bound, and a bare number has no unit.
  const bool has_unit = !text.empty() && absl::ascii_isalpha(static_cast<unsigned char>(text.back()));
  if (!has_unit || !absl::ParseDuration(text, &wait)) {
    return absl::InvalidArgumentError(absl::StrCat(
        View(engine), " URL: parameter ", View(name), "=", text,
        " is not a duration with a unit (write 500ms, 2s or 1m)"));
  }
  LEDGER_RETURN_IF_ERROR(CheckWait(absl::StrCat(View(engine), " URL"), name, wait));
  return wait;
}

absl::Status CheckWait(std::string_view engine, std::string_view name, absl::Duration wait) {
  if (wait > absl::ZeroDuration() && wait != absl::InfiniteDuration()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(View(engine), ": ", View(name),
                                                 " must be positive and finite, not ",
                                                 absl::FormatDuration(wait)));
}

absl::Status CheckWaitExceeds(std::string_view engine, std::string_view outer_name,
                              absl::Duration outer, std::string_view inner_name,
                              absl::Duration inner) {
  if (outer > inner) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      View(engine), ": ", View(outer_name), " (", absl::FormatDuration(outer),
      ") must exceed ", View(inner_name), " (", absl::FormatDuration(inner),
      "): raise ", View(outer_name), " or lower ", View(inner_name)));
}

int64_t WholeSecondsRoundedUp(absl::Duration wait, int64_t minimum) {
  if (wait == absl::InfiniteDuration()) return std::numeric_limits<int32_t>::max();
  return std::clamp<int64_t>(absl::ToInt64Seconds(absl::Ceil(wait, absl::Seconds(1))), minimum,
                             std::numeric_limits<int32_t>::max());
}

int64_t WholeMillisecondsRoundedUp(absl::Duration wait) {
  if (wait == absl::InfiniteDuration()) return std::numeric_limits<int32_t>::max();
  return std::clamp<int64_t>(absl::ToInt64Milliseconds(absl::Ceil(wait, absl::Milliseconds(1))), 1,
                             std::numeric_limits<int32_t>::max());
}

}  // namespace ledger::engine_common
