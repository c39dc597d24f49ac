// API keys for `ledger serve`: who may call, as which tenant, with which role.
//
// The key file (or environment variable) holds one key per line, stored hashed:
//
//   # sha256-hex-of-the-key                                          tenant   role
//   9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 acme     submit
//
// Roles are ordered: read (GET routes) < submit (+ POST /v1/operations) < admin (+ define
// assets, open and close accounts). A client presents `Authorization: Bearer <key>`;
// the server hashes it and looks the hash up, so the file never holds a usable key and
// nothing the server prints can leak one. The tenant of the key names its own ledger
// (server/tenant_ledgers.h) and is the scope of its idempotency keys: one tenant never
// sees, moves, replays or probes another's. A tenant name is 1 to 32 characters of
// lower-case letters, digits and '_', beginning with a letter (ValidateTenantName), so it
// is safe in a schema or database name and in a file name.
//
// Thread-safe after construction (read-only).
#ifndef LEDGER_SERVER_API_KEYS_H_
#define LEDGER_SERVER_API_KEYS_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace ledger::server {

enum class Role { kRead = 0, kSubmit = 1, kAdmin = 2 };

std::string_view RoleName(Role role);

// Who is calling: the tenant scopes idempotency keys; the role gates routes.
struct Principal {
  std::string tenant = "default";
  Role role = Role::kAdmin;
};

inline constexpr size_t kTenantNameBytesMax = 32;

// InvalidArgument, saying what is allowed, unless `tenant` is 1 to kTenantNameBytesMax
// characters of [a-z0-9_] beginning with [a-z].
absl::Status ValidateTenantName(std::string_view tenant);

// Lower-case hex SHA-256 of `key`: what the key file stores.
std::string HashApiKey(std::string_view key);

class ApiKeys {
 public:
  // Parses the lines described above. Bad lines are InvalidArgument naming the line
  // number (never its content: it may be a key pasted by mistake).
  static absl::StatusOr<ApiKeys> Parse(std::string_view text);

  // The principal of a presented key, or nullopt when the key is unknown.
  std::optional<Principal> Find(std::string_view presented_key) const;
  size_t size() const { return by_hash_.size(); }
  // Every tenant some key names.
  std::set<std::string> tenants() const;

 private:
  std::map<std::string, Principal, std::less<>> by_hash_;
};

}  // namespace ledger::server

#endif  // LEDGER_SERVER_API_KEYS_H_
