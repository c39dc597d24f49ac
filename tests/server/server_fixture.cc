#include "tests/server/server_fixture.h"

#include <openssl/evp.h>

#include <random>

#include "tests/conformance/conformance_context.h"

namespace ledger::testing {
namespace {

ServerEngine SqliteEngine() { return {.name = "sqlite"}; }

ServerEngine FromEnvironment(const char* name, const char* variable) {
  std::string url = EnvironmentOrEmpty(variable);
  ServerEngine engine{.name = name, .database_url = url};
  if (url.empty()) engine.unavailable_reason = std::string(variable) + " is not set";
  return engine;
}

ServerEngine PostgresEngine() { return FromEnvironment("postgres", "LEDGER_TEST_POSTGRES_DSN"); }
ServerEngine MysqlEngine() { return FromEnvironment("mysql", "LEDGER_TEST_MYSQL_DSN"); }

std::string RandomPrefix() {
  static constexpr char kLetters[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device device;
  std::string prefix = "t";
  for (int i = 0; i < 10; ++i) prefix += kLetters[device() % 36];
  return prefix + "-";
}

}  // namespace

void ServerTest::SetUp() {
  engine_ = GetParam()();
  if (!engine_.unavailable_reason.empty()) {
    if (RunningInCi()) FAIL() << engine_.name << ": " << engine_.unavailable_reason << " (CI=true)";
    GTEST_SKIP() << engine_.name << ": " << engine_.unavailable_reason;
  }
  prefix_ = RandomPrefix();
  folder_ = std::filesystem::temp_directory_path() / ("ledger-server-test-" + prefix_ + engine_.name);
  std::filesystem::create_directories(folder_);
  database_url_ = engine_.database_url.empty() ? "sqlite:" + (folder_ / "ledger.db").string()
                                               : engine_.database_url;
}

void ServerTest::TearDown() {
  client_.reset();
  server_.reset();
  if (!folder_.empty() && !HasFailure()) std::filesystem::remove_all(folder_);
}

void ServerTest::StartServer(const std::vector<std::string>& extra_arguments) {
  server_ = ServerProcess::Start(database_url_, folder_ / "server.log", extra_arguments);
  // Ends the test, also from here in a helper (tests/support/test_main.cc): every request
  // after it would go through a client that does not exist.
  ASSERT_NE(server_, nullptr) << "ledger serve did not start on " << engine_.name << " (its log is above)";
  client_ = server_->Client();
}

httplib::Result ServerTest::Post(const std::string& path, const std::string& body,
                                 const httplib::Headers& headers) {
  return client_->Post(path.c_str(), headers, body, "application/json");
}

httplib::Result ServerTest::Get(const std::string& path, const httplib::Headers& headers) {
  return client_->Get(path.c_str(), headers);
}

httplib::Result ServerTest::Submit(const std::string& key, const nlohmann::json& operation,
                                   const httplib::Headers& extra_headers) {
  httplib::Headers headers = extra_headers;
  headers.emplace("Idempotency-Key", "\"" + key + "\"");
  return Post("/v1/operations", operation.dump(), headers);
}

void ServerTest::OpenAccounts() {
  httplib::Result asset = Post("/v1/assets", R"({"code":"USD","scale":2})");
  ASSERT_TRUE(asset);
  ASSERT_TRUE(asset->status == 201 || asset->status == 200) << asset->body;
  for (const auto& [id, allow_negative] : {std::pair{Name("issuance"), true}, {Name("alice"), false}}) {
    nlohmann::json body = {{"id", id}, {"asset", "USD"}, {"allow_negative", allow_negative}};
    httplib::Result opened = Post("/v1/accounts", body.dump());
    ASSERT_TRUE(opened);
    ASSERT_EQ(opened->status, 201) << opened->body;
  }
}

nlohmann::json ServerTest::TopUp(const std::string& to, int64_t amount) const {
  return {{"kind", "top_up"}, {"asset", "USD"}, {"from", Name("issuance")}, {"to", to},
          {"amount", std::to_string(amount)}};
}

std::string ServerTest::Balance(const std::string& account) {
  httplib::Result result = Get("/v1/accounts/" + account + "/balance");
  if (!result || result->status != 200) return "error";
  return BodyJson(result)["balance"].get<std::string>();
}

int64_t ServerTest::LastEventSequence() {
  int64_t after = 0;
  while (true) {
    httplib::Result page = Get("/v1/events?limit=1000&after=" + std::to_string(after));
    if (!page || page->status != 200) return -1;
    nlohmann::json body = BodyJson(page);
    if (body["events"].empty()) return after;
    after = body["next_after"].get<int64_t>();
  }
}

::testing::AssertionResult IsProblem(const httplib::Result& result, int status,
                                     const std::string& reason) {
  if (!result) return ::testing::AssertionFailure() << "no response: " << httplib::to_string(result.error());
  if (result->status != status) {
    return ::testing::AssertionFailure() << "status " << result->status << " (want " << status
                                         << "): " << result->body;
  }
  if (result->get_header_value("Content-Type") != "application/problem+json") {
    return ::testing::AssertionFailure() << "content type " << result->get_header_value("Content-Type");
  }
  nlohmann::json body = BodyJson(result);
  for (const char* member : {"type", "title", "status", "detail", "reason"}) {
    if (!body.contains(member)) return ::testing::AssertionFailure() << "no " << member << ": " << result->body;
  }
  if (body["status"] != status || body["reason"] != reason ||
      body["type"] != "urn:ledger:problem:" + reason) {
    return ::testing::AssertionFailure() << "want reason " << reason << ": " << result->body;
  }
  return ::testing::AssertionSuccess();
}

std::vector<ServerEngineFactory> ServerEngineFactories() {
  return {&SqliteEngine, &PostgresEngine, &MysqlEngine};
}

std::string Sha256Hex(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(text.data(), text.size(), digest, &size, EVP_sha256(), nullptr);
  std::string hex;
  for (unsigned int i = 0; i < size; ++i) {
    static constexpr char kHex[] = "0123456789abcdef";
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0xf];
  }
  return hex;
}

INSTANTIATE_TEST_SUITE_P(Engines, ServerTest, ::testing::ValuesIn(ServerEngineFactories()),
                         [](const ::testing::TestParamInfo<ServerEngineFactory>& info) {
                           return info.param().name;
                         });

}  // namespace ledger::testing
