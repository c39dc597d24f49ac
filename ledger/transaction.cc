#include "ledger/transaction.h"

#include <openssl/rand.h>

#include <array>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "absl/strings/str_format.h"

namespace ledger {
namespace {

constexpr std::array<std::string_view, 6> kKindNames = {"top_up", "spend",   "transfer",
                                                         "payout", "reverse", "post"};

}  // namespace

std::string_view OperationKindName(OperationKind kind) {
  return kKindNames[static_cast<size_t>(kind)];
}

absl::StatusOr<OperationKind> ParseOperationKind(std::string_view name) {
  for (size_t i = 0; i < kKindNames.size(); ++i) {
    if (kKindNames[i] == name) return static_cast<OperationKind>(i);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown operation kind \"", View(name),
      "\" (expected top_up, spend, transfer, payout, reverse or post)"));
}

std::string FormatTimestamp(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone());
}

std::string NewTransactionId(absl::Time now) {
  std::array<unsigned char, 16> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    std::abort();  // the CSPRNG failing is not a state to continue from
  }
  uint64_t millis = static_cast<uint64_t>(absl::ToUnixMillis(now));
  for (int i = 0; i < 6; ++i) bytes[i] = static_cast<unsigned char>(millis >> (40 - 8 * i));
  bytes[6] = static_cast<unsigned char>(0x70 | (bytes[6] & 0x0f));  // version 7
  bytes[8] = static_cast<unsigned char>(0x80 | (bytes[8] & 0x3f));  // RFC 4122 variant
  std::string hex;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) hex.push_back('-');
    absl::StrAppendFormat(&hex, "%02x", bytes[i]);
  }
  return hex;
}

}  // namespace ledger
