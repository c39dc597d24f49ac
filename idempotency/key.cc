#include "idempotency/key.h"

#include "absl/strings/str_cat.h"

namespace ledger {
namespace {

bool IsPrintableAscii(char c) { return c >= 0x20 && c <= 0x7e; }

absl::Status ValidatePart(absl::string_view what, std::string_view value, size_t bytes_max,
                          bool allow_separators) {
  if (value.empty()) return absl::InvalidArgumentError(absl::StrCat(what, " is empty"));
  if (value.size() > bytes_max) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " is ", value.size(), " bytes; the limit is ", bytes_max));
  }
  for (char c : value) {
    if (!IsPrintableAscii(c)) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " contains a non-printable byte (printable ASCII only)"));
    }
    if (!allow_separators && (c == '|' || c == '/')) {
      return absl::InvalidArgumentError(absl::StrCat(what, " may not contain '|' or '/'"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string Scope::Encoded() const { return absl::StrCat(tenant, "/", actor); }

std::string KeyIdentity::Encoded() const {
  return absl::StrCat(key_namespace, "|", scope.Encoded(), "|", key);
}

absl::Status ValidateKey(std::string_view key) {
  return ValidatePart("idempotency key", key, kKeyBytesMax, /*allow_separators=*/true);
}

absl::Status ValidateScope(const Scope& scope) {
  if (absl::Status s = ValidatePart("scope tenant", scope.tenant, kScopePartBytesMax, false);
      !s.ok()) {
    return s;
  }
  return ValidatePart("scope actor", scope.actor, kScopePartBytesMax, false);
}

absl::Status ValidateNamespace(std::string_view key_namespace) {
  return ValidatePart("key namespace", key_namespace, kNamespaceBytesMax, false);
}

absl::Status ValidateIdentity(const KeyIdentity& identity) {
  if (absl::Status s = ValidateNamespace(identity.key_namespace); !s.ok()) return s;
  if (absl::Status s = ValidateScope(identity.scope); !s.ok()) return s;
  return ValidateKey(identity.key);
}

absl::Status ValidateClaimOptions(const ClaimOptions& options) {
  if (options.ttl <= absl::ZeroDuration() || options.ttl > kKeyTtlMax) {
    return absl::InvalidArgumentError(
        absl::StrCat("ClaimOptions.ttl must be positive and at most ",
                     absl::FormatDuration(kKeyTtlMax), ", not ", absl::FormatDuration(options.ttl)));
  }
  if (options.wait.wait_max < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat("ClaimOptions.wait.wait_max must not be negative, not ",
                                                   absl::FormatDuration(options.wait.wait_max)));
  }
  return absl::OkStatus();
}

}  // namespace ledger
