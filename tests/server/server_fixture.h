// The server suite's fixture: one `ledger serve` process per test, against each engine
// the environment offers (SQLite always; PostgreSQL and MySQL/MariaDB when
// LEDGER_TEST_POSTGRES_DSN / LEDGER_TEST_MYSQL_DSN are set, as the conformance suite
// does; under CI=true a missing server is a failure, not a skip).
//
// Server databases are shared between tests, so every test names its accounts and keys
// with its own random prefix (Name("alice")).
#ifndef LEDGER_TESTS_SERVER_SERVER_FIXTURE_H_
#define LEDGER_TESTS_SERVER_SERVER_FIXTURE_H_

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "tests/server/server_process.h"

namespace ledger::testing {

struct ServerEngine {
  std::string name;
  std::string database_url;        // empty for SQLite: a fresh file per test
  std::string unavailable_reason;  // non-empty: skip (or fail under CI=true)
};

using ServerEngineFactory = ServerEngine (*)();

// SQLite, PostgreSQL, MySQL/MariaDB: what every server suite instantiates with.
std::vector<ServerEngineFactory> ServerEngineFactories();

class ServerTest : public ::testing::TestWithParam<ServerEngineFactory> {
 protected:
  void SetUp() override;
  void TearDown() override;
  // Starts `ledger serve` with the test's extra arguments. A server that does not start
  // fails the test with its log and ends it (a fatal failure in a helper does: the tests'
  // main(), tests/support/test_main.cc), as does a failed OpenAccounts.
  void StartServer(const std::vector<std::string>& extra_arguments = {});

  bool IsSqlite() const { return engine_.name == "sqlite"; }
  std::string Name(const std::string& base) const { return prefix_ + base; }

  httplib::Result Post(const std::string& path, const std::string& body,
                       const httplib::Headers& headers = {});
  httplib::Result Get(const std::string& path, const httplib::Headers& headers = {});
  // POST /v1/operations with Idempotency-Key: "key" (Structured Field string form).
  httplib::Result Submit(const std::string& key, const nlohmann::json& operation,
                         const httplib::Headers& extra_headers = {});
  // Defines USD and opens Name("issuance") (allow_negative) and Name("alice").
  void OpenAccounts();
  nlohmann::json TopUp(const std::string& to, int64_t amount) const;
  std::string Balance(const std::string& account);
  int64_t LastEventSequence();
  void SignalUnderLoadLosesNothingAcknowledged(int signal);

  ServerEngine engine_;
  std::filesystem::path folder_;
  std::string database_url_;
  std::string prefix_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<httplib::Client> client_;
};

// Lowercase hex SHA-256, computed apart from the server's own hashing (API key files).
std::string Sha256Hex(const std::string& text);

// True when the problem+json has the status and reason and the RFC 9457 members.
::testing::AssertionResult IsProblem(const httplib::Result& result, int status,
                                     const std::string& reason);

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_SERVER_SERVER_FIXTURE_H_
