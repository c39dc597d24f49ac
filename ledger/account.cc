#include "ledger/account.h"

#include "absl/strings/str_cat.h"
#include "base/status.h"

namespace ledger {

absl::Status ValidateAssetCode(std::string_view code) {
  if (code.empty() || code.size() > kAssetCodeBytesMax) {
    return absl::InvalidArgumentError(
        absl::StrCat("asset code \"", View(code), "\" must be 1..", kAssetCodeBytesMax, " bytes"));
  }
  for (char c : code) {
    bool allowed = (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!allowed) {
      return absl::InvalidArgumentError(
          absl::StrCat("asset code \"", View(code), "\" may only contain A-Z, 0-9 and '_'"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateAsset(const Asset& asset) {
  if (absl::Status s = ValidateAssetCode(asset.code); !s.ok()) return s;
  if (asset.scale < 0 || asset.scale > kAssetScaleMax) {
    return absl::InvalidArgumentError(
        absl::StrCat("asset scale ", asset.scale, " is outside 0..", kAssetScaleMax));
  }
  return absl::OkStatus();
}

absl::Status ValidateAccountId(std::string_view id) {
  if (id.empty() || id.size() > kAccountIdBytesMax) {
    return absl::InvalidArgumentError(
        absl::StrCat("account id must be 1..", kAccountIdBytesMax, " bytes"));
  }
  for (char c : id) {
    if (c <= 0x20 || c > 0x7e) {
      return absl::InvalidArgumentError(absl::StrCat(
          "account id \"", View(id), "\" may only contain printable ASCII without spaces"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateAccountSpec(const AccountSpec& spec) {
  if (absl::Status s = ValidateAccountId(spec.id); !s.ok()) return s;
  if (absl::Status s = ValidateAssetCode(spec.asset); !s.ok()) return s;
  if (spec.overdraft_limit < 0) {
    return absl::InvalidArgumentError("overdraft limit must not be negative");
  }
  if (spec.allow_negative && spec.overdraft_limit != 0) {
    return absl::InvalidArgumentError(
        "an allow_negative account has no floor; do not also set an overdraft limit");
  }
  return absl::OkStatus();
}

}  // namespace ledger
