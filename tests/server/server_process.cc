#include "tests/server/server_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "gtest/gtest.h"

namespace ledger::testing {
namespace {

constexpr auto kStartWaitMax = std::chrono::seconds(30);

pid_t Spawn(const std::vector<std::string>& arguments, const std::filesystem::path& log_path) {
  std::vector<char*> argv;
  std::string binary = LEDGER_CLI_PATH;
  argv.push_back(binary.data());
  std::vector<std::string> copies = arguments;
  for (std::string& argument : copies) argv.push_back(argument.data());
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(log, STDERR_FILENO);
    int null = open("/dev/null", O_RDWR);
    dup2(null, STDIN_FILENO);
    dup2(null, STDOUT_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

int WaitForExit(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

std::unique_ptr<ServerProcess> ServerProcess::Start(const std::string& database_url,
                                                    const std::filesystem::path& log_path,
                                                    const std::vector<std::string>& extra_arguments) {
  std::vector<std::string> arguments = {"serve", "--db", database_url, "--listen", "127.0.0.1:0"};
  arguments.insert(arguments.end(), extra_arguments.begin(), extra_arguments.end());
  std::filesystem::remove(log_path);  // an earlier server's "listening" line must not be read
  std::unique_ptr<ServerProcess> server(new ServerProcess(Spawn(arguments, log_path), log_path));
  const std::regex listening(R"("event":"listening".*"port":([0-9]+))");
  auto deadline = std::chrono::steady_clock::now() + kStartWaitMax;
  while (std::chrono::steady_clock::now() < deadline) {
    std::smatch match;
    std::string log = server->Log();
    if (std::regex_search(log, match, listening)) {
      server->port_ = std::stoi(match[1].str());
      return server;
    }
    int status = 0;
    if (waitpid(server->pid_, &status, WNOHANG) == server->pid_) {
      server->exited_ = true;
      ADD_FAILURE() << "ledger serve exited before listening:\n" << log;
      return nullptr;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ADD_FAILURE() << "ledger serve did not log \"listening\" in time:\n" << server->Log();
  return nullptr;
}

ServerProcess::~ServerProcess() {
  if (!exited_) {
    kill(pid_, SIGKILL);
    WaitForExit(pid_);
  }
}

std::unique_ptr<httplib::Client> ServerProcess::Client() const {
  auto client = std::make_unique<httplib::Client>("127.0.0.1", port_);
  client->set_read_timeout(60, 0);
  return client;
}

int ServerProcess::SignalAndWait(int signal) {
  kill(pid_, signal);
  int code = WaitForExit(pid_);
  exited_ = true;
  return code;
}

std::string ServerProcess::Log() const {
  std::ifstream file(log_path_);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

int RunLedgerToExit(const std::vector<std::string>& arguments, const std::filesystem::path& log_path) {
  return WaitForExit(Spawn(arguments, log_path));
}

nlohmann::json BodyJson(const httplib::Result& result) {
  if (!result) return nullptr;
  return nlohmann::json::parse(result->body, nullptr, /*allow_exceptions=*/false);
}

}  // namespace ledger::testing
