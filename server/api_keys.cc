#include "server/api_keys.h"

#include <openssl/evp.h>

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ledger::server {
namespace {

constexpr size_t kHashHexBytes = 64;

bool IsLowerHex(std::string_view text) {
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::optional<Role> ParseRole(std::string_view name) {
  if (name == "read") return Role::kRead;
  if (name == "submit") return Role::kSubmit;
  if (name == "admin") return Role::kAdmin;
  return std::nullopt;
}

}  // namespace

absl::Status ValidateTenantName(std::string_view tenant) {
  bool valid = !tenant.empty() && tenant.size() <= kTenantNameBytesMax && tenant[0] >= 'a' &&
               tenant[0] <= 'z';
  for (char c : tenant) {
    valid = valid && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
  }
  if (valid) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "a tenant name is 1 to ", kTenantNameBytesMax,
      " characters: lower-case letters, digits and '_', beginning with a letter (it names "
      "the tenant's schema, database or file)"));
}

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kRead: return "read";
    case Role::kSubmit: return "submit";
    case Role::kAdmin: return "admin";
  }
  return "unknown";
}

std::string HashApiKey(std::string_view key) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_bytes = 0;
  EVP_Digest(key.data(), key.size(), digest, &digest_bytes, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(digest_bytes * 2);
  for (unsigned int i = 0; i < digest_bytes; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 0xf]);
  }
  return hex;
}

absl::StatusOr<ApiKeys> ApiKeys::Parse(std::string_view text) {
  ApiKeys keys;
  int line_number = 0;
  for (absl::string_view raw_line : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    ++line_number;
    absl::string_view line = absl::StripAsciiWhitespace(raw_line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields = absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    auto bad = [line_number](std::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat("API keys line ", line_number, ": ", absl::string_view(why.data(), why.size()),
                       " (expected: SHA256-HEX TENANT ROLE)"));
    };
    if (fields.size() != 3) return bad("needs three fields");
    if (fields[0].size() != kHashHexBytes || !IsLowerHex(fields[0])) {
      return bad("the first field must be the key's lower-case hex SHA-256, not the key");
    }
    std::optional<Role> role = ParseRole(fields[2]);
    if (!role.has_value()) return bad("the role must be read, submit or admin");
    Principal principal{.tenant = fields[1], .role = *role};
    if (absl::Status tenant = ValidateTenantName(principal.tenant); !tenant.ok()) {
      return bad(std::string(tenant.message()));
    }
    if (!keys.by_hash_.emplace(fields[0], principal).second) return bad("the same key twice");
  }
  if (keys.by_hash_.empty()) return absl::InvalidArgumentError("API keys: no key given");
  return keys;
}

std::set<std::string> ApiKeys::tenants() const {
  std::set<std::string> tenants;
  for (const auto& [hash, principal] : by_hash_) tenants.insert(principal.tenant);
  return tenants;
}

std::optional<Principal> ApiKeys::Find(std::string_view presented_key) const {
  auto found = by_hash_.find(HashApiKey(presented_key));
  if (found == by_hash_.end()) return std::nullopt;
  return found->second;
}

}  // namespace ledger::server
