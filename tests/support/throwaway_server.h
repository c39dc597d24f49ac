// A database server of a test's own, for tests that freeze the server or change how it
// accepts connections: started by scripts/test-servers.sh (start-postgres or
// start-mysql) in a fresh folder, stopped and removed with the object. The servers of
// the test command, which other tests share while ctest runs them in parallel, are
// never touched.
//
//   absl::StatusOr<std::unique_ptr<ThrowawayServer>> server =
//       ThrowawayServer::Start(ThrowawayServer::Kind::kPostgres);
//   (*server)->Freeze();   // SIGSTOP: the server's kernel still accepts bytes and probes
//   ...                    // a client now waits for replies that never come
//   (*server)->Thaw();     // SIGCONT
//
// Also makes the certificates of the TLS tests (openssl): a CA, a server certificate it
// signed for 127.0.0.1 and localhost, and a second CA that signed nothing.
//
// Not thread-safe, except Freeze and Thaw, which may run on any thread (a submit's hook
// freezes, the test thaws).
#ifndef LEDGER_TESTS_SUPPORT_THROWAWAY_SERVER_H_
#define LEDGER_TESTS_SUPPORT_THROWAWAY_SERVER_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ledger::testing {

// The certificates of a TLS test, as PEM files in `directory`.
struct TestCertificates {
  std::string directory;        // holds ca.crt, server.crt, server.key (what the script takes)
  std::string ca;               // the CA that signed the server's certificate
  std::string wrong_ca;         // a CA that did not
  std::string server_cert;
  std::string server_key;
};

// Makes a fresh set under a new folder in /tmp (removed by RemoveTestCertificates).
// FailedPrecondition when openssl is missing or fails.
absl::StatusOr<TestCertificates> MakeTestCertificates();
void RemoveTestCertificates(const TestCertificates& certificates);

class ThrowawayServer {
 public:
  enum class Kind { kPostgres, kMysql };

  // Starts a server in a new folder in /tmp; with `certificates`, it also accepts TLS
  // with their server certificate. FailedPrecondition (with the script's output) when
  // it cannot start: no server binaries, not allowed to run them.
  static absl::StatusOr<std::unique_ptr<ThrowawayServer>> Start(
      Kind kind, const TestCertificates* certificates = nullptr);
  // Starts one that refuses TLS (LEDGER_TEST_SERVERS_NO_TLS: MariaDB --skip-ssl, so
  // have_ssl is DISABLED; PostgreSQL ssl = off), for tests that a client asking for TLS
  // does not fall back to plain text.
  static absl::StatusOr<std::unique_ptr<ThrowawayServer>> StartWithoutTls(Kind kind);
  ~ThrowawayServer();  // thaws, stops the server, removes its folder
  ThrowawayServer(const ThrowawayServer&) = delete;
  ThrowawayServer& operator=(const ThrowawayServer&) = delete;

  // The URL of its database (ledger_test), as the engines take it: root / postgres,
  // no password, 127.0.0.1 and the server's port.
  const std::string& url() const { return url_; }
  int port() const { return port_; }
  const std::string& directory() const { return directory_; }

  // SIGSTOP to every process of the server (PostgreSQL: the postmaster first, then
  // each of its children; MariaDB: mariadbd). Thaw sends SIGCONT to the same set. A
  // frozen server thaws by itself after `thaw_after` at the latest, so a wait that is
  // not bounded makes its test fail on time instead of hanging until ctest's timeout.
  absl::Status Freeze(absl::Duration thaw_after = absl::Seconds(30)) ABSL_LOCKS_EXCLUDED(mutex_);
  absl::Status Thaw() ABSL_LOCKS_EXCLUDED(mutex_);

  // The processes Freeze and Thaw signal, the main one first.
  std::vector<pid_t> Processes() const;

 private:
  ThrowawayServer(Kind kind, std::string directory) : kind_(kind), directory_(std::move(directory)) {}
  // Runs the script's start with `environment` ("NAME=value ..." for the shell) before it.
  static absl::StatusOr<std::unique_ptr<ThrowawayServer>> StartWith(
      Kind kind, const std::string& environment);
  pid_t MainProcess() const;  // 0 when none runs
  absl::Status Signal(int signal_number);

  void StopThawTimer() ABSL_LOCKS_EXCLUDED(mutex_);

  const Kind kind_;
  const std::string directory_;
  std::string url_;
  int port_ = 0;
  absl::Mutex mutex_;
  bool frozen_ ABSL_GUARDED_BY(mutex_) = false;
  std::thread thaw_timer_;  // while frozen: thaws at the latest deadline
};

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_SUPPORT_THROWAWAY_SERVER_H_
