#include "tests/support/throwaway_server.h"

#include <dirent.h>
#include <signal.h>
#include <stdlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"

namespace ledger::testing {
namespace {

constexpr char kScript[] = LEDGER_TEST_SOURCE_DIR "/scripts/test-servers.sh";

// Single quotes for the shell.
std::string Quoted(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs `command` with its output in `log`; FailedPrecondition with the log otherwise.
absl::Status Run(const std::string& command, const std::string& log) {
  const int status = std::system(absl::StrCat("( ", command, " ) >", Quoted(log), " 2>&1").c_str());
  if (status == 0) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("`", command, "` failed (status ", status, "):\n", ReadFile(log)));
}

absl::StatusOr<std::string> MakeTemporaryDirectory(const std::string& prefix) {
  std::string pattern = absl::StrCat("/tmp/", prefix, ".XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp: ", std::strerror(errno)));
  }
  return pattern;
}

// The value NAME of "export NAME=value" in the script's env file.
std::string ExportedValue(const std::string& env, const std::string& name) {
  for (absl::string_view line : absl::StrSplit(env, '\n')) {
    if (absl::ConsumePrefix(&line, absl::StrCat("export ", name, "="))) return std::string(line);
  }
  return "";
}

pid_t ReadPid(const std::string& path) {
  int pid = 0;
  std::string text = ReadFile(path);
  std::string first_line = text.substr(0, text.find('\n'));
  if (!absl::SimpleAtoi(first_line, &pid)) return 0;
  return pid;
}

// Every process whose parent is `parent` (from /proc/PID/stat: "pid (comm) state ppid").
std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> children;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return children;
  while (dirent* entry = readdir(proc)) {
    int pid = 0;
    if (!absl::SimpleAtoi(entry->d_name, &pid)) continue;
    const std::string stat = ReadFile(absl::StrCat("/proc/", pid, "/stat"));
    const size_t comm_end = stat.rfind(')');
    if (comm_end == std::string::npos) continue;
    std::vector<std::string> fields = absl::StrSplit(stat.substr(comm_end + 2), ' ');
    int ppid = 0;
    if (fields.size() > 1 && absl::SimpleAtoi(fields[1], &ppid) && ppid == parent) {
      children.push_back(pid);
    }
  }
  closedir(proc);
  return children;
}

}  // namespace

absl::StatusOr<TestCertificates> MakeTestCertificates() {
  absl::StatusOr<std::string> directory = MakeTemporaryDirectory("ledger-test-certificates");
  if (!directory.ok()) return directory.status();
  TestCertificates made{*directory, *directory + "/ca.crt", *directory + "/wrong-ca.crt",
                        *directory + "/server.crt", *directory + "/server.key"};
  // EC keys: made in milliseconds, where RSA takes a noticeable part of a second.
  const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  const std::string script = absl::StrCat(
      "cd ", Quoted(*directory), " && ",
      "openssl req -x509 ", key, " -keyout ca.key -out ca.crt -days 2 -subj '/CN=ledger test CA' && ",
      "openssl req -x509 ", key,
      " -keyout wrong-ca.key -out wrong-ca.crt -days 2 -subj '/CN=ledger wrong CA' && ",
      "openssl req ", key, " -keyout server.key -out server.csr -subj '/CN=127.0.0.1' && ",
      "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > server.ext && ",
      "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial ",
      "-out server.crt -days 2 -extfile server.ext");
  absl::Status made_them = Run(script, *directory + "/openssl.log");
  if (!made_them.ok()) {
    RemoveTestCertificates(made);
    return made_them;
  }
  return made;
}

void RemoveTestCertificates(const TestCertificates& certificates) {
  std::error_code ignored;
  std::filesystem::remove_all(certificates.directory, ignored);
}

absl::StatusOr<std::unique_ptr<ThrowawayServer>> ThrowawayServer::Start(
    Kind kind, const TestCertificates* certificates) {
  return StartWith(kind, certificates == nullptr
                             ? ""
                             : absl::StrCat("LEDGER_TEST_SERVERS_TLS_DIR=",
                                            Quoted(certificates->directory), " "));
}

absl::StatusOr<std::unique_ptr<ThrowawayServer>> ThrowawayServer::StartWithoutTls(Kind kind) {
  return StartWith(kind, "LEDGER_TEST_SERVERS_NO_TLS=1 ");
}

absl::StatusOr<std::unique_ptr<ThrowawayServer>> ThrowawayServer::StartWith(
    Kind kind, const std::string& environment) {
  absl::StatusOr<std::string> directory = MakeTemporaryDirectory("ledger-test-server");
  if (!directory.ok()) return directory.status();
  std::unique_ptr<ThrowawayServer> server(new ThrowawayServer(kind, *directory));
  // The log lives beside the folder: the script wants the folder empty.
  const std::string log = *directory + ".log";
  absl::Status started =
      Run(absl::StrCat(environment, "bash ", Quoted(kScript),
                       kind == Kind::kPostgres ? " start-postgres " : " start-mysql ",
                       Quoted(*directory)),
          log);
  std::remove(log.c_str());
  if (!started.ok()) return started;  // the destructor stops whatever did start
  const std::string env = ReadFile(*directory + "/env");
  server->url_ = ExportedValue(
      env, kind == Kind::kPostgres ? "LEDGER_TEST_POSTGRES_DSN" : "LEDGER_TEST_MYSQL_DSN");
  const std::string port_file = *directory + (kind == Kind::kPostgres ? "/pg.port" : "/my.port");
  if (server->url_.empty() || !absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadFile(port_file)),
                                                &server->port_)) {
    return absl::InternalError(absl::StrCat("test-servers.sh wrote no URL or port:\n", env));
  }
  return server;
}

ThrowawayServer::~ThrowawayServer() {
  (void)Thaw();
  (void)Run(absl::StrCat("bash ", Quoted(kScript), " stop ", Quoted(directory_)), "/dev/null");
}

pid_t ThrowawayServer::MainProcess() const {
  return ReadPid(directory_ + (kind_ == Kind::kPostgres ? "/pg/data/postmaster.pid"
                                                         : "/my/mysqld.pid"));
}

std::vector<pid_t> ThrowawayServer::Processes() const {
  const pid_t main = MainProcess();
  if (main <= 0) return {};
  std::vector<pid_t> processes = {main};
  for (pid_t child : ChildrenOf(main)) processes.push_back(child);  // PostgreSQL's backends
  return processes;
}

absl::Status ThrowawayServer::Signal(int signal_number) {
  const pid_t main = MainProcess();
  if (main <= 0) {
    return absl::FailedPreconditionError(absl::StrCat("no server process under ", directory_));
  }
  // The main process first: a stopped postmaster forks no child the list would miss.
  std::vector<pid_t> processes = {main};
  for (size_t next = 0; next < processes.size(); ++next) {
    if (kill(processes[next], signal_number) != 0 && errno != ESRCH) {
      return absl::InternalError(absl::StrCat("kill(", processes[next], "): ", std::strerror(errno)));
    }
    if (next == 0) {
      for (pid_t child : ChildrenOf(main)) processes.push_back(child);
    }
  }
  return absl::OkStatus();
}

namespace {

// Whether every thread of `pid` is stopped (state T in /proc/PID/task/TID/stat) or dead
// (Z, X: an exited backend its stopped parent has not reaped), or the process is gone.
bool AllThreadsStopped(pid_t pid) {
  std::error_code error;
  const std::filesystem::path tasks = absl::StrCat("/proc/", pid, "/task");
  for (const auto& task : std::filesystem::directory_iterator(tasks, error)) {
    std::ifstream stat(task.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;  // the thread ended
    const size_t comm_end = line.rfind(')');  // the command name may hold spaces
    if (comm_end == std::string::npos || comm_end + 2 >= line.size()) return false;
    const char state = line[comm_end + 2];
    if (state != 'T' && state != 'Z' && state != 'X') return false;
  }
  return true;
}

}  // namespace

absl::Status ThrowawayServer::Freeze(absl::Duration thaw_after) {
  StopThawTimer();  // a second Freeze restarts the deadline
  {
    absl::MutexLock lock(&mutex_);
    frozen_ = true;
  }
  absl::Status frozen = Signal(SIGSTOP);
  // kill() returns before every thread has stopped (a thread running on the other core
  // stops when it is next interrupted), and a reply sent in between makes the caller's
  // next statement succeed: wait until each process shows every thread stopped.
  const absl::Time stopped_by = absl::Now() + absl::Seconds(2);
  for (pid_t pid : Processes()) {
    while (frozen.ok() && !AllThreadsStopped(pid) && absl::Now() < stopped_by) {
      absl::SleepFor(absl::Microseconds(200));
    }
  }
  const absl::Time deadline = absl::Now() + thaw_after;
  thaw_timer_ = std::thread([this, deadline] {
    absl::MutexLock lock(&mutex_);
    auto thawed = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) { return !frozen_; };
    if (!mutex_.AwaitWithDeadline(absl::Condition(&thawed), deadline)) {
      (void)Signal(SIGCONT);  // the test did not thaw in time: it fails, it does not hang
    }
  });
  return frozen;
}

absl::Status ThrowawayServer::Thaw() {
  StopThawTimer();
  return Signal(SIGCONT);
}

void ThrowawayServer::StopThawTimer() {
  {
    absl::MutexLock lock(&mutex_);
    frozen_ = false;
  }
  if (thaw_timer_.joinable() && thaw_timer_.get_id() != std::this_thread::get_id()) {
    thaw_timer_.join();
  }
}

}  // namespace ledger::testing
