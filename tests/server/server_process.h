// Runs the built `ledger serve` as a real process on a free loopback port (port 0; the
// port is read from the server's "listening" log line) and talks HTTP to it over real
// sockets with httplib::Client.
//
// Not thread-safe to Start/Stop from several threads; Client() may be called from any.
#ifndef LEDGER_TESTS_SERVER_SERVER_PROCESS_H_
#define LEDGER_TESTS_SERVER_SERVER_PROCESS_H_

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "httplib.h"
#include "nlohmann/json.hpp"

namespace ledger::testing {

class ServerProcess {
 public:
  // Starts `ledger serve --db URL --listen 127.0.0.1:0 EXTRA...` with stderr in
  // `log_path`; returns null (and records a test failure) when it does not come up.
  static std::unique_ptr<ServerProcess> Start(const std::string& database_url,
                                              const std::filesystem::path& log_path,
                                              const std::vector<std::string>& extra_arguments = {});
  ~ServerProcess();  // SIGKILL if still running

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::unique_ptr<httplib::Client> Client() const;
  // Sends `signal` and waits for the exit; the exit code, or -1 if killed by a signal.
  int SignalAndWait(int signal);
  std::string Log() const;

 private:
  ServerProcess(pid_t pid, std::filesystem::path log_path) : pid_(pid), log_path_(std::move(log_path)) {}
  pid_t pid_;
  std::filesystem::path log_path_;
  int port_ = 0;
  bool exited_ = false;
};

// Runs `ledger ARGS...` to completion; returns the exit code (stderr into `log_path`).
int RunLedgerToExit(const std::vector<std::string>& arguments, const std::filesystem::path& log_path);

// The response body as JSON (null on a parse failure).
nlohmann::json BodyJson(const httplib::Result& result);

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_SERVER_SERVER_PROCESS_H_
