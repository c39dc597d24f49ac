// The 'pending' placeholder row by which a claim holds a new key (PostgreSQL's row
// mode, MySQL), kept the same on every engine.
//
// Its expires_at is the largest value: a claim in flight must never look expired, so no
// prune (DELETE ... WHERE expires_at <= now) selects it or waits for its row lock, and no
// expiry check can take it for a reusable record. (0 would say "expired since 1970".)
// The placeholder's other columns are empty; it is filled in by RecordKey or deleted at
// COMMIT.
//
// Internal to engines/. Thread-safe: a constant.
#ifndef LEDGER_ENGINES_COMMON_KEY_PLACEHOLDER_H_
#define LEDGER_ENGINES_COMMON_KEY_PLACEHOLDER_H_

#include <cstdint>
#include <limits>

namespace ledger::engine_common {

inline constexpr int64_t kPlaceholderExpiresAtMicros = std::numeric_limits<int64_t>::max();

}  // namespace ledger::engine_common

#endif  // LEDGER_ENGINES_COMMON_KEY_PLACEHOLDER_H_
