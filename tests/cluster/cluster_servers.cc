#include "tests/cluster/cluster_servers.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"

namespace ledger::testing {
namespace {

constexpr char kScript[] = LEDGER_TEST_SOURCE_DIR "/scripts/cluster-servers.sh";

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

absl::Status Run(const std::string& command, const std::string& log) {
  const int status = std::system(absl::StrCat("( ", command, " ) >", Quoted(log), " 2>&1").c_str());
  if (status == 0) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("`", command, "` failed (status ", status, "):\n", ReadFile(log)));
}

pid_t ReadPid(const std::string& path) {
  int pid = 0;
  const std::string text = ReadFile(path);
  if (!absl::SimpleAtoi(text.substr(0, text.find('\n')), &pid)) return 0;
  return pid;
}

std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> children;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return children;
  while (dirent* entry = readdir(proc)) {
    int pid = 0;
    if (!absl::SimpleAtoi(entry->d_name, &pid)) continue;
    const std::string stat = ReadFile(absl::StrCat("/proc/", pid, "/stat"));
    const size_t comm_end = stat.rfind(')');
    if (comm_end == std::string::npos || comm_end + 2 >= stat.size()) continue;
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

bool WaitUntil(const std::function<bool()>& condition, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!condition()) {
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(200));
  }
  return true;
}

std::string LogTail(const std::string& path, int lines,
                    const std::vector<std::string>& containing) {
  std::ifstream in(path);
  std::deque<std::string> tail;
  for (std::string line; std::getline(in, line);) {
    const bool wanted = containing.empty() ||
                        absl::c_any_of(containing, [&](const std::string& word) {
                          return absl::StrContains(line, word);
                        });
    if (!wanted) continue;
    tail.push_back(line);
    if (static_cast<int>(tail.size()) > lines) tail.pop_front();
  }
  return absl::StrJoin(tail, "\n");
}

absl::StatusOr<std::unique_ptr<ClusterServers>> ClusterServers::Start(Kind kind) {
  std::string pattern = "/tmp/ledger-cluster.XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp: ", std::strerror(errno)));
  }
  std::unique_ptr<ClusterServers> cluster(new ClusterServers(kind, pattern));
  const std::string log = pattern + ".log";
  absl::Status started = Run(absl::StrCat("bash ", Quoted(kScript),
                                          kind == Kind::kPatroni ? " start-patroni " : " start-galera ",
                                          Quoted(pattern)),
                             log);
  std::remove(log.c_str());
  if (!started.ok()) return started;  // the destructor stops whatever did start
  cluster->env_ = ReadFile(pattern + "/env");
  return cluster;
}

ClusterServers::~ClusterServers() {
  (void)Run(absl::StrCat("bash ", Quoted(kScript), " stop ", Quoted(directory_)), "/dev/null");
}

std::string ClusterServers::Exported(const std::string& name) const {
  for (absl::string_view line : absl::StrSplit(env_, '\n')) {
    if (absl::ConsumePrefix(&line, absl::StrCat("export ", name, "="))) {
      line = absl::StripPrefix(absl::StripSuffix(line, "'"), "'");
      return std::string(line);
    }
  }
  return "";
}

std::vector<pid_t> ClusterServers::Processes(const std::string& node) const {
  std::vector<pid_t> processes;
  const std::string node_directory = absl::StrCat(directory_, "/", node);
  if (kind_ == Kind::kPatroni) {
    if (pid_t patroni = ReadPid(node_directory + "/patroni.pid"); patroni > 0) {
      processes.push_back(patroni);
    }
    if (pid_t postmaster = ReadPid(node_directory + "/data/postmaster.pid"); postmaster > 0) {
      processes.push_back(postmaster);
      for (pid_t child : ChildrenOf(postmaster)) processes.push_back(child);
    }
  } else if (pid_t server = ReadPid(node_directory + "/mysqld.pid"); server > 0) {
    processes.push_back(server);
  }
  return processes;
}

absl::Status ClusterServers::Signal(const std::string& node, int signal_number) {
  const std::vector<pid_t> processes = Processes(node);
  if (processes.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("no process of ", node, " under ", directory_));
  }
  for (pid_t pid : processes) {
    if (kill(pid, signal_number) != 0 && errno != ESRCH) {
      return absl::InternalError(absl::StrCat("kill(", pid, "): ", std::strerror(errno)));
    }
  }
  return absl::OkStatus();
}

absl::Status ClusterServers::StartNode(const std::string& node) {
  return Run(absl::StrCat("bash ", Quoted(kScript), " start-node ", Quoted(directory_), " ",
                          Quoted(node)),
             absl::StrCat(directory_, "/start-", node, ".log"));
}

namespace {

// `command`'s output, or Unavailable with it when the command fails.
absl::StatusOr<std::string> Output(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return absl::InternalError(absl::StrCat("popen: ", std::strerror(errno)));
  std::string output;
  char buffer[4096];
  while (size_t read = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, read);
  const int status = pclose(pipe);
  if (status != 0) return absl::UnavailableError(absl::StrCat("`", command, "`: ", output));
  return output;
}

}  // namespace

absl::StatusOr<std::string> ClusterServers::PatroniLeader() const {
  absl::StatusOr<std::string> leader = Output(
      absl::StrCat("bash ", Quoted(kScript), " patroni-leader ", Quoted(directory_), " 2>/dev/null"));
  if (!leader.ok()) return leader.status();
  return std::string(absl::StripAsciiWhitespace(*leader));
}

absl::Status ClusterServers::SetPatroniMaintenance(bool on) {
  return Run(absl::StrCat("bash ", Quoted(kScript), " patroni-maintenance ", Quoted(directory_),
                          on ? " on" : " off"),
             absl::StrCat(directory_, "/maintenance.log"));
}

absl::StatusOr<std::string> ClusterServers::GaleraSql(int node, const std::string& sql) const {
  // `timeout`: the client has no read timeout of its own, and a stalled node can hold even a
  // status query.
  return Output(absl::StrCat("timeout 10 mariadb --no-defaults --connect-timeout=5 --socket=",
                             directory_, "/galera", node, "/mysqld.sock -uroot -N -B -e ",
                             Quoted(sql), " 2>&1"));
}

}  // namespace ledger::testing
