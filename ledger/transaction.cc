#include "ledger/transaction.h"

#include <openssl/rand.h>

#include <array>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "base/status.h"

namespace ledger {

std::string_view OperationKindName(OperationKind kind) {
  switch (kind) {  // no default: -Wswitch reports a kind without a name
    case OperationKind::kTopUp: return "top_up";
    case OperationKind::kSpend: return "spend";
    case OperationKind::kTransfer: return "transfer";
    case OperationKind::kPayout: return "payout";
    case OperationKind::kReverse: return "reverse";
    case OperationKind::kPost: return "post";
    case OperationKind::kHold: return "hold";
    case OperationKind::kCapture: return "capture";
    case OperationKind::kVoid: return "void";
    case OperationKind::kExpire: return "expire";
  }
  return "unknown";  // only for a value cast from outside the enumeration
}

absl::StatusOr<OperationKind> ParseOperationKind(std::string_view name) {
  // Enumerators run from 0 without gaps; the switch above names each, so this walks
  // every kind without a second list to keep complete.
  for (int value = 0;; ++value) {
    auto kind = static_cast<OperationKind>(value);
    std::string_view known = OperationKindName(kind);
    if (known == "unknown") break;
    if (known == name) return kind;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown operation kind \"", View(name),
      "\" (expected top_up, spend, transfer, payout, reverse, post, hold, capture or void)"));
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
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(36);
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) hex.push_back('-');
    hex.push_back(kHex[bytes[i] >> 4]);
    hex.push_back(kHex[bytes[i] & 0x0f]);
  }
  return hex;
}

}  // namespace ledger
