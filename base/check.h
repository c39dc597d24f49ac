// LEDGER_CHECK: an assertion that stays on in every build, release included.
//
//   LEDGER_CHECK(lease_expires_at <= expires_at) << "lease past the claim's expiry";
//
// For programmer errors only (a broken precondition, an impossible state): the process
// prints the condition, the file and line, and the optional streamed message to stderr
// and aborts, so a bug stops the ledger before it writes something wrong. Operating
// errors (bad input, a lost connection) are absl::Status, never a check. The default
// build (RelWithDebInfo) defines NDEBUG, which would compile `assert` out; this does not
// depend on NDEBUG, as TigerBeetle keeps its assertions on in production.
//
// Thread-safe: a failing check writes one message and aborts.
#ifndef LEDGER_BASE_CHECK_H_
#define LEDGER_BASE_CHECK_H_

#include <sstream>

namespace ledger::internal {

// Collects the streamed message of a failed check; its destructor prints and aborts.
class CheckFailure {
 public:
  CheckFailure(const char* condition, const char* file, int line);
  [[noreturn]] ~CheckFailure();
  CheckFailure(const CheckFailure&) = delete;
  CheckFailure& operator=(const CheckFailure&) = delete;

  template <typename T>
  CheckFailure& operator<<(const T& value) {
    message_ << value;
    return *this;
  }

 private:
  const char* condition_;
  const char* file_;
  int line_;
  std::ostringstream message_;
};

// Lets the macro below end in a stream expression of type void in both branches.
struct CheckVoidify {
  void operator&(const CheckFailure&) {}
};

}  // namespace ledger::internal

// The condition is evaluated exactly once; the message only when it fails.
#define LEDGER_CHECK(condition)                 \
  (condition) ? (void)0                         \
              : ::ledger::internal::CheckVoidify() & \
                    ::ledger::internal::CheckFailure(#condition, __FILE__, __LINE__)

#endif  // LEDGER_BASE_CHECK_H_
