// Identity of an idempotent operation: (namespace, scope, key), and the claim options
// a caller sets per request.
//
//   ledger::KeyIdentity identity{"transfer", {"acme", "user-42"}, "order-1001"};
//   if (absl::Status s = ledger::ValidateIdentity(identity); !s.ok()) ...
//
// The key is chosen by the client and never trusted: 1..255 bytes of printable ASCII.
// The same key in two scopes, or in two namespaces, names two different operations.
#ifndef LEDGER_IDEMPOTENCY_KEY_H_
#define LEDGER_IDEMPOTENCY_KEY_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace ledger {

inline constexpr size_t kKeyBytesMax = 255;
inline constexpr size_t kNamespaceBytesMax = 64;
inline constexpr size_t kScopePartBytesMax = 100;  // tenant and actor each
inline constexpr absl::Duration kKeyTtlDefault = absl::Hours(24);
inline constexpr absl::Duration kKeyTtlMax = absl::Hours(24 * 366);
inline constexpr absl::Duration kWaitDefault = absl::Seconds(10);

// Who the operation belongs to. A scope can never read another scope's results.
struct Scope {
  std::string tenant = "default";
  std::string actor = "default";

  // "tenant/actor": the form stored in the key table's scope column.
  std::string Encoded() const;
  friend bool operator==(const Scope&, const Scope&) = default;
};

struct KeyIdentity {
  // A submit's: "operations" (ledger/ledger.h kDefaultKeyNamespace) unless the caller
  // names another; other work: the caller's name for it.
  std::string key_namespace;
  Scope scope;
  std::string key;

  // "namespace|tenant/actor|key": unambiguous because the parts may not contain '|'
  // ('|' is allowed in the key itself, which is last). Used for lock names and logs.
  std::string Encoded() const;
  friend bool operator==(const KeyIdentity&, const KeyIdentity&) = default;
};

absl::Status ValidateKey(std::string_view key);
absl::Status ValidateScope(const Scope& scope);
absl::Status ValidateNamespace(std::string_view key_namespace);
absl::Status ValidateIdentity(const KeyIdentity& identity);

// What a retry of an already committed key gets: the recorded result, or an error.
enum class ReplayPolicy { kReturn, kError };

// How long a submit waits for another in-flight attempt with the same key.
struct WaitPolicy {
  // How long to wait; zero: fail fast with an in-progress error; never negative.
  // Default: kWaitDefault (10 s).
  absl::Duration wait_max = kWaitDefault;

  static WaitPolicy FailFast() { return WaitPolicy{absl::ZeroDuration()}; }
  bool fail_fast() const { return wait_max <= absl::ZeroDuration(); }
};

// Checked on every submit: a bad field is InvalidArgument naming it.
struct ClaimOptions {
  // How long a committed key is replayed; after it the key can be reused with a new
  // payload. Positive, at most kKeyTtlMax (366 days). Default: kKeyTtlDefault (24 h).
  absl::Duration ttl = kKeyTtlDefault;
  // What a retry of a committed key gets. Default: kReturn, the recorded result.
  ReplayPolicy replay = ReplayPolicy::kReturn;
  // How long to wait for another in-flight attempt with the same key. Default: 10 s.
  WaitPolicy wait;
};

absl::Status ValidateClaimOptions(const ClaimOptions& options);

// A committed key: what a retry replays. Only committed records are ever visible to
// other transactions; rejected and faulted attempts leave no record.
struct KeyRecord {
  KeyIdentity identity;
  std::string fingerprint;  // hex SHA-256 of the canonical business payload
  std::string transaction_id;
  absl::Time created_at;
  absl::Time expires_at;

  bool ExpiredAt(absl::Time now) const { return expires_at <= now; }
  friend bool operator==(const KeyRecord&, const KeyRecord&) = default;
};

}  // namespace ledger

#endif  // LEDGER_IDEMPOTENCY_KEY_H_
