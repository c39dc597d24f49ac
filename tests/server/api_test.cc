// The /v1 resources, auth, limits, metrics and shutdown of `ledger serve`, per engine.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <set>
#include <future>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "tests/server/server_fixture.h"

namespace ledger::testing {
namespace {

TEST_P(ServerTest, HealthAndReadiness) {
  StartServer();
  httplib::Result health = Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  httplib::Result ready = Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200);
  EXPECT_EQ(BodyJson(ready)["engine"], engine_.name);
}

// The served URL's password shows in no response body (answers, problems, metrics) and
// no log line. SQLite URLs carry none.
TEST_P(ServerTest, TheDatabasePasswordIsInNoBodyMetricOrLogLine) {
  constexpr char kMark[] = "Zq7";  // every password below holds it
  if (IsSqlite()) GTEST_SKIP() << "a SQLite URL holds no password";
  if (engine_.name == "postgres") {
    // The throwaway server trusts loopback: any password is accepted.
    const std::string with_password = absl::StrReplaceAll(
        database_url_, {{"postgresql://postgres@", "postgresql://postgres:Zq7p%40ss:w@"}});
    ASSERT_NE(with_password, database_url_) << "unexpected DSN shape";
    database_url_ = with_password + "?sslmode=disable&password=Zq7p%40ss:w";
  } else {
    // mysql://root@HOST:PORT/DB: a user of its own, with a password the server checks.
    const size_t host = database_url_.find('@') + 1;
    const size_t path = database_url_.find('/', host);
    ASSERT_NE(path, std::string::npos) << "unexpected DSN shape";
    const std::string host_port = database_url_.substr(host, path - host);
    const std::string database = database_url_.substr(path + 1);
    const size_t colon = host_port.find(':');
    const std::string create = absl::StrCat(
        "mariadb --protocol=tcp -h ", host_port.substr(0, colon), " -P ",
        host_port.substr(colon + 1), " -u root -e \"CREATE USER IF NOT EXISTS "
        "'ledger_secret'@'127.0.0.1' IDENTIFIED BY 'Zq7p@ss:w/rd%x'; GRANT ALL ON ",
        database, ".* TO 'ledger_secret'@'127.0.0.1';\"");
    ASSERT_EQ(std::system(create.c_str()), 0) << create;
    database_url_ =
        absl::StrCat("mysql://ledger_secret:Zq7p%40ss:w%2Frd%25x@", host_port, "/", database);
  }
  StartServer();
  OpenAccounts();
  std::vector<httplib::Result> results;
  results.push_back(Get("/readyz"));
  results.push_back(Get("/v1/accounts/" + Name("nobody")));
  results.push_back(Get("/v1/transactions/nope"));
  results.push_back(Submit(Name("k1"), TopUp(Name("alice"), 5)));
  results.push_back(Submit(Name("k2"), TopUp(Name("nobody"), 5)));
  results.push_back(Submit(Name("k1"), TopUp(Name("alice"), 6)));
  results.push_back(Post("/v1/operations", "{not json"));
  results.push_back(Get("/metrics"));
  std::string shown;
  for (const httplib::Result& result : results) {
    ASSERT_TRUE(result);
    absl::StrAppend(&shown, result->body, "\n");
    for (const auto& [name, value] : result->headers) absl::StrAppend(&shown, name, value, "\n");
  }
  EXPECT_EQ(server_->SignalAndWait(SIGTERM), 0);
  absl::StrAppend(&shown, server_->Log());
  EXPECT_EQ(shown.find(kMark), std::string::npos) << shown;
}

TEST_P(ServerTest, UnknownRouteIs404AndWrongMethodIs405AsProblems) {
  StartServer();
  EXPECT_TRUE(IsProblem(Get("/v2/nothing"), 404, "route_not_found"));
  httplib::Result wrong = client_->Delete("/v1/accounts");
  EXPECT_TRUE(IsProblem(wrong, 405, "method_not_allowed"));
  EXPECT_EQ(wrong->get_header_value("Allow"), "GET, POST");
  EXPECT_TRUE(IsProblem(Get("/v1/transactions/nope"), 404, "not_found"));
}

TEST_P(ServerTest, AssetsAndAccountsWithKeysetPaging) {
  StartServer();
  OpenAccounts();
  httplib::Result again = Post("/v1/assets", R"({"code":"USD","scale":2})");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
  EXPECT_TRUE(IsProblem(Post("/v1/assets", R"({"code":"USD","scale":3})"), 409, "already_exists"));
  EXPECT_TRUE(IsProblem(Post("/v1/assets", R"({"code":"USD","scale":2,"x":1})"), 400, "invalid_request"));
  httplib::Result assets = Get("/v1/assets");
  ASSERT_TRUE(assets);
  EXPECT_NE(assets->body.find(R"({"code":"USD","scale":2})"), std::string::npos);
  for (const char* id : {"p-a", "p-b", "p-c"}) {
    ASSERT_EQ(Post("/v1/accounts", nlohmann::json{{"id", Name(id)}, {"asset", "USD"}}.dump())->status, 201);
  }
  EXPECT_TRUE(IsProblem(Post("/v1/accounts", nlohmann::json{{"id", Name("p-a")}, {"asset", "USD"}}.dump()),
                        409, "already_exists"));
  // One plain message on every engine, never the driver's constraint text (issue 31).
  EXPECT_EQ(BodyJson(Post("/v1/accounts", nlohmann::json{{"id", Name("p-a")}, {"asset", "USD"}}.dump()))["detail"],
            "account " + Name("p-a") + " already exists");
  const std::string malformed = BodyJson(Post("/v1/accounts", R"({"id": )"))["detail"];
  EXPECT_NE(malformed.find("malformed JSON: "), std::string::npos) << malformed;
  EXPECT_EQ(malformed.find("json.exception"), std::string::npos) << malformed;
  EXPECT_TRUE(IsProblem(Post("/v1/accounts", nlohmann::json{{"id", Name("x")}, {"asset", "NOPE"}}.dump()),
                        422, "failed_precondition"));
  nlohmann::json page = BodyJson(Get("/v1/accounts?limit=2&after=" + Name("p-")));
  ASSERT_EQ(page["accounts"].size(), 2u);
  EXPECT_EQ(page["accounts"][0]["id"], Name("p-a"));
  EXPECT_EQ(page["accounts"][1]["id"], Name("p-b"));
  ASSERT_EQ(page["next_after"], Name("p-b"));
  nlohmann::json next = BodyJson(Get("/v1/accounts?limit=2&after=" + Name("p-b")));
  EXPECT_EQ(next["accounts"][0]["id"], Name("p-c"));
  EXPECT_TRUE(IsProblem(Get("/v1/accounts?limit=0"), 400, "invalid_request"));
  EXPECT_TRUE(IsProblem(Get("/v1/accounts/" + Name("ghost")), 404, "not_found"));
  nlohmann::json alice = BodyJson(Get("/v1/accounts/" + Name("alice")));
  EXPECT_EQ(alice["asset"], "USD");
  EXPECT_EQ(alice["closed"], false);
}

TEST_P(ServerTest, HistoryPagesAndBalanceAsOfComeFromStoredEntries) {
  StartServer();
  OpenAccounts();
  nlohmann::json first = BodyJson(Submit(Name("t1"), TopUp(Name("alice"), 100)));
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // distinct created_at
  ASSERT_EQ(Submit(Name("t2"), TopUp(Name("alice"), 50))->status, 201);
  std::string path = "/v1/accounts/" + Name("alice");
  nlohmann::json page = BodyJson(Get(path + "/history?limit=1"));
  ASSERT_EQ(page["entries"].size(), 1u);
  EXPECT_EQ(page["entries"][0]["balance_after"], "100");
  EXPECT_EQ(page["next_after"], 1);
  nlohmann::json rest = BodyJson(Get(path + "/history?after=1"));
  ASSERT_EQ(rest["entries"].size(), 1u);
  EXPECT_EQ(rest["entries"][0]["balance_after"], "150");
  EXPECT_TRUE(rest["next_after"].is_null());
  EXPECT_EQ(Balance(Name("alice")), "150");
  std::string first_time = first["created_at"];
  EXPECT_EQ(BodyJson(Get(path + "/balance?as_of=" + first_time))["balance"], "100");
  EXPECT_EQ(BodyJson(Get(path + "/balance?as_of=2000-01-01T00:00:00Z"))["balance"], "0");
  EXPECT_EQ(BodyJson(Get(path + "/balance?as_of=2999-01-01T00:00:00Z"))["balance"], "150");
  EXPECT_TRUE(IsProblem(Get(path + "/balance?as_of=yesterday"), 400, "invalid_request"));
}

TEST_P(ServerTest, EventsLongPollReturnsWhenATransactionCommits) {
  StartServer();
  OpenAccounts();
  int64_t head = LastEventSequence();
  ASSERT_GE(head, 0);
  std::future<httplib::Result> poll = std::async(std::launch::async, [this, head] {
    return server_->Client()->Get(("/v1/events?wait=20&after=" + std::to_string(head)).c_str());
  });
  httplib::Result committed = Submit(Name("e1"), TopUp(Name("alice"), 3));
  ASSERT_EQ(committed->status, 201);
  httplib::Result events = poll.get();
  ASSERT_TRUE(events);
  ASSERT_EQ(events->status, 200);
  nlohmann::json body = BodyJson(events);
  ASSERT_FALSE(body["events"].empty()) << events->body;
  bool found = false;
  for (const nlohmann::json& event : body["events"]) {
    found |= event["transaction_id"] == BodyJson(committed)["id"];
  }
  EXPECT_TRUE(found) << events->body;
}

TEST_P(ServerTest, MetricsCountSubmitsByOutcomeAndRequestsByRoute) {
  StartServer();
  OpenAccounts();
  Submit(Name("m"), TopUp(Name("alice"), 1));
  Submit(Name("m"), TopUp(Name("alice"), 1));
  Submit(Name("m"), TopUp(Name("alice"), 2));
  std::string metrics = Get("/metrics")->body;
  EXPECT_NE(metrics.find("ledger_submits_total{outcome=\"committed\"} 1"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("ledger_submits_total{outcome=\"duplicate\"} 1"), std::string::npos);
  EXPECT_NE(metrics.find("ledger_submits_total{outcome=\"conflict\"} 1"), std::string::npos);
  EXPECT_NE(metrics.find("ledger_http_requests_total{method=\"POST\",route=\"/v1/operations\",status=\"201\"} 2"),
            std::string::npos);
  EXPECT_NE(metrics.find("ledger_http_request_duration_seconds_count{route=\"/v1/operations\"} 3"),
            std::string::npos);
  EXPECT_NE(metrics.find("ledger_http_worker_threads 32"), std::string::npos);
}

// Two tenants with their own keys: the same Idempotency-Key never crosses tenants (each
// tenant has a ledger of its own: tests/server/tenants_test.cc).
TEST_P(ServerTest, TenantComesFromTheApiKeyAndRolesGateRoutes) {
  std::ofstream keys(folder_ / "keys");
  keys << "# test keys\n"
       << Sha256Hex("admin-secret") << " acme admin\n"
       << Sha256Hex("acme-secret") << " acme submit\n"
       << Sha256Hex("globex-admin-secret") << " globex admin\n"
       << Sha256Hex("globex-secret") << " globex submit\n"
       << Sha256Hex("reader-secret") << " acme read\n";
  keys.close();
  StartServer({"--api-keys-file", (folder_ / "keys").string()});
  for (const char* admin_key : {"admin-secret", "globex-admin-secret"}) {
    httplib::Headers admin = {{"Authorization", std::string("Bearer ") + admin_key}};
    ASSERT_EQ(Post("/v1/assets", R"({"code":"USD","scale":2})", admin)->status / 100, 2);
    for (const char* id : {"issuance", "alice"}) {
      nlohmann::json body = {{"id", Name(id)}, {"asset", "USD"}, {"allow_negative", std::string(id) == "issuance"}};
      ASSERT_EQ(Post("/v1/accounts", body.dump(), admin)->status, 201);
    }
  }
  EXPECT_TRUE(IsProblem(Get("/v1/assets"), 401, "unauthenticated"));
  EXPECT_TRUE(IsProblem(Get("/v1/assets", {{"Authorization", "Bearer wrong"}}), 401, "unauthenticated"));
  httplib::Headers acme = {{"Authorization", "Bearer acme-secret"}};
  httplib::Headers globex = {{"Authorization", "Bearer globex-secret"}};
  EXPECT_TRUE(IsProblem(Post("/v1/accounts", R"({"id":"x","asset":"USD"})", acme), 403, "forbidden"));
  EXPECT_TRUE(IsProblem(Submit(Name("k"), TopUp(Name("alice"), 1), {{"Authorization", "Bearer reader-secret"}}),
                        403, "forbidden"));
  httplib::Result acme_first = Submit(Name("k"), TopUp(Name("alice"), 10), acme);
  ASSERT_EQ(acme_first->status, 201);
  // globex, same key, same payload: its own first commit, not acme's replay.
  httplib::Result globex_first = Submit(Name("k"), TopUp(Name("alice"), 10), globex);
  ASSERT_EQ(globex_first->status, 201);
  EXPECT_FALSE(globex_first->has_header("Idempotent-Replayed"));
  EXPECT_NE(BodyJson(globex_first)["id"], BodyJson(acme_first)["id"]);
  // The batch route scopes its items' keys the same way.
  nlohmann::json batch = {{"items", {{{"idempotency_key", Name("k")}, {"operation", TopUp(Name("alice"), 10)}}}}};
  nlohmann::json acme_again = BodyJson(Post("/v1/operations/batch", batch.dump(), acme))["results"][0];
  EXPECT_EQ(acme_again["replayed"], true);
  EXPECT_EQ(acme_again["body"], BodyJson(acme_first));
  nlohmann::json globex_again = BodyJson(Post("/v1/operations/batch", batch.dump(), globex))["results"][0];
  EXPECT_EQ(globex_again["replayed"], true);
  EXPECT_EQ(globex_again["body"], BodyJson(globex_first));
  EXPECT_TRUE(IsProblem(Post("/v1/operations/batch", batch.dump(), {{"Authorization", "Bearer reader-secret"}}),
                        403, "forbidden"));
  // globex, acme's key with another payload: no 422 leaks that acme used it.
  EXPECT_EQ(Submit(Name("k2"), TopUp(Name("alice"), 1), acme)->status, 201);
  EXPECT_EQ(Submit(Name("k2"), TopUp(Name("alice"), 2), globex)->status, 201);
  EXPECT_EQ(Get("/v1/accounts/" + Name("alice") + "/balance", acme)->status, 200);
  EXPECT_EQ(Get("/healthz")->status, 200);  // health stays public
  EXPECT_EQ(server_->Log().find("secret"), std::string::npos);  // keys never logged
}

TEST_P(ServerTest, NonLoopbackListenWithoutApiKeysRefusesToStart) {
  int code = RunLedgerToExit({"serve", "--db", database_url_, "--listen", "0.0.0.0:0"},
                             folder_ / "refused.log");
  EXPECT_NE(code, 0);
  std::ifstream log(folder_ / "refused.log");
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("without API keys"), std::string::npos) << text;
}

TEST_P(ServerTest, OverTheInFlightLimitIs429WithRetryAfter) {
  StartServer({"--in-flight-max", "1"});
  int64_t head = LastEventSequence();
  std::future<httplib::Result> poll = std::async(std::launch::async, [this, head] {
    std::string path = "/v1/events?wait=30&after=" + std::to_string(head + 1000000);
    while (true) {  // a probe below may hold the slot at first: then try again
      httplib::Result result = server_->Client()->Get(path.c_str());
      if (!result || result->status != 429) return result;
    }
  });
  // The long poll holds the only slot until it ends; probe until it is seen in flight.
  for (int attempt = 0; attempt < 500; ++attempt) {
    httplib::Result probe = Get("/v1/assets");
    if (probe && probe->status == 429) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  httplib::Result refused = Get("/v1/assets");
  EXPECT_TRUE(IsProblem(refused, 429, "too_many_requests"));
  EXPECT_EQ(refused->get_header_value("Retry-After"), "1");
  EXPECT_EQ(server_->SignalAndWait(SIGTERM), 0);
  EXPECT_TRUE(poll.get());
}

// SIGTERM with a request in flight: the request finishes with its answer, the server
// exits 0, and nothing is accepted afterwards.
TEST_P(ServerTest, SigtermFinishesTheRequestInFlightAndExitsZero) {
  StartServer();
  OpenAccounts();
  ASSERT_EQ(Submit(Name("before"), TopUp(Name("alice"), 9))->status, 201);
  int64_t head = LastEventSequence();
  std::future<httplib::Result> poll = std::async(std::launch::async, [this, head] {
    return server_->Client()->Get(("/v1/events?wait=30&after=" + std::to_string(head)).c_str());
  });
  // Wait until the long poll is in flight (the metrics gauge says so), then stop.
  for (int attempt = 0; attempt < 500; ++attempt) {
    if (Get("/metrics")->body.find("ledger_http_in_flight 2") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(server_->SignalAndWait(SIGTERM), 0);
  httplib::Result finished = poll.get();
  ASSERT_TRUE(finished) << httplib::to_string(finished.error());
  EXPECT_EQ(finished->status, 200);
  EXPECT_NE(server_->Log().find("\"event\":\"stopped\""), std::string::npos);
  EXPECT_FALSE(server_->Client()->Get("/healthz"));
  // What was acknowledged survives: a new server replays the key.
  StartServer();
  httplib::Result replay = Submit(Name("before"), TopUp(Name("alice"), 9));
  ASSERT_TRUE(replay);
  EXPECT_EQ(replay->get_header_value("Idempotent-Replayed"), "true");
}

// Clients submit without pause while the server gets `signal`; afterwards every key that
// was acknowledged with a 201 resolves, on a new server, to exactly one transaction
// (a replay of it), and the verify audit finds the ledger intact.
}  // namespace

void ServerTest::SignalUnderLoadLosesNothingAcknowledged(int signal) {
  StartServer();
  OpenAccounts();
  constexpr int kClients = 8;
  std::atomic<bool> stop{false};
  std::atomic<int> acknowledged_count{0};
  std::vector<std::vector<std::pair<std::string, std::string>>> acknowledged(kClients);  // key, id
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      std::unique_ptr<httplib::Client> client = server_->Client();
      for (int i = 0; !stop.load(); ++i) {
        std::string key = Name("load-" + std::to_string(c) + "-" + std::to_string(i));
        httplib::Result result = client->Post("/v1/operations", {{"Idempotency-Key", key}},
                                              TopUp(Name("alice"), 1).dump(), "application/json");
        if (!result) return;  // the server is gone
        if (result->status == 201) {
          acknowledged[c].emplace_back(key, BodyJson(result)["id"]);
          acknowledged_count.fetch_add(1);
        }
      }
    });
  }
  for (int wait = 0; wait < 1000 && acknowledged_count.load() < 100; ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  int exit_code = server_->SignalAndWait(signal);
  stop.store(true);
  for (std::thread& client : clients) client.join();
  if (signal == SIGTERM) {
    EXPECT_EQ(exit_code, 0) << server_->Log();
  }
  ASSERT_GE(acknowledged_count.load(), 1);

  StartServer();
  std::set<std::string> ids;
  for (const auto& per_client : acknowledged) {
    for (const auto& [key, id] : per_client) {
      httplib::Result replay = Post("/v1/operations", TopUp(Name("alice"), 1).dump(), {{"Idempotency-Key", key}});
      ASSERT_TRUE(replay);
      ASSERT_EQ(replay->status, 201) << replay->body;
      EXPECT_EQ(replay->get_header_value("Idempotent-Replayed"), "true") << key;
      EXPECT_EQ(BodyJson(replay)["id"], id) << key;
      ids.insert(id);
    }
  }
  EXPECT_EQ(static_cast<int>(ids.size()), acknowledged_count.load());
  EXPECT_GE(std::stoll(Balance(Name("alice"))), acknowledged_count.load());
  EXPECT_EQ(RunLedgerToExit({"verify", "--db", database_url_}, folder_ / "verify.log"), 0);
}

namespace {

TEST_P(ServerTest, SigtermUnderLoadLosesNothingAcknowledged) {
  SignalUnderLoadLosesNothingAcknowledged(SIGTERM);
}

TEST_P(ServerTest, SigkillUnderLoadLosesNothingAcknowledged) {
  SignalUnderLoadLosesNothingAcknowledged(SIGKILL);
}

TEST_P(ServerTest, ApiKeysFromAnEnvironmentVariable) {
  setenv("LEDGER_SERVER_TEST_KEYS", (Sha256Hex("env-secret") + " envtenant read\n").c_str(), 1);
  StartServer({"--api-keys-env", "LEDGER_SERVER_TEST_KEYS"});
  EXPECT_TRUE(IsProblem(Get("/v1/assets"), 401, "unauthenticated"));
  EXPECT_EQ(Get("/v1/assets", {{"Authorization", "Bearer env-secret"}})->status, 200);
  EXPECT_TRUE(IsProblem(Post("/v1/assets", R"({"code":"USD","scale":2})", {{"Authorization", "Bearer env-secret"}}),
                        403, "forbidden"));
}

// A client that starts a request and stalls is dropped after --read-timeout, so it
// cannot hold a worker forever.
TEST_P(ServerTest, AStalledRequestIsDroppedAfterTheReadTimeout) {
  StartServer({"--read-timeout", "1s"});
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(server_->port()));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  const char partial[] = "POST /v1/operations HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{";
  ASSERT_GT(send(fd, partial, sizeof(partial) - 1, 0), 0);
  // Blocks until the server gives up on the body: it answers (408/400) or just closes.
  char buffer[4096];
  ssize_t received = 0;
  while ((received = recv(fd, buffer, sizeof(buffer), 0)) > 0) {
  }
  EXPECT_EQ(received, 0);  // an orderly close from the server, not an error
  close(fd);
  EXPECT_EQ(Get("/healthz")->status, 200);  // and the worker is free again
}

TEST_P(ServerTest, SigintStopsGracefullyLikeSigterm) {
  StartServer();
  EXPECT_EQ(Get("/healthz")->status, 200);
  EXPECT_EQ(server_->SignalAndWait(SIGINT), 0);
  EXPECT_NE(server_->Log().find("\"signal\":\"SIGINT\""), std::string::npos);
}

// --tls-cert/--tls-key serve HTTPS: a client that trusts the certificate talks to it,
// and a plain-HTTP client gets nothing.
TEST_P(ServerTest, ServesHttpsWithTheGivenCertificate) {
  std::string certificate = (folder_ / "certificate.pem").string();
  std::string key = (folder_ / "key.pem").string();
  ASSERT_EQ(std::system(("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 "
                         "-addext subjectAltName=IP:127.0.0.1 -keyout " + key + " -out " + certificate +
                         " 2>/dev/null").c_str()),
            0);
  StartServer({"--tls-cert", certificate, "--tls-key", key});
  EXPECT_NE(server_->Log().find("\"scheme\":\"https\""), std::string::npos);
  httplib::SSLClient tls("127.0.0.1", server_->port());
  tls.set_ca_cert_path(certificate);
  tls.enable_server_certificate_verification(true);
  httplib::Result health = tls.Get("/healthz");
  ASSERT_TRUE(health) << httplib::to_string(health.error());
  EXPECT_EQ(health->status, 200);
  EXPECT_FALSE(Get("/healthz"));
  EXPECT_NE(RunLedgerToExit({"serve", "--db", database_url_, "--listen", "127.0.0.1:0", "--tls-cert",
                             certificate}, folder_ / "half.log"), 0);
}

// Every operation of docs/openapi.json (served at /v1/openapi.json) has a route.
TEST_P(ServerTest, EveryDocumentedRouteIsServed) {
  StartServer();
  httplib::Result document = Get("/v1/openapi.json");
  ASSERT_TRUE(document);
  std::ifstream source(LEDGER_SOURCE_DIR "/docs/openapi.json");
  std::string file((std::istreambuf_iterator<char>(source)), std::istreambuf_iterator<char>());
  EXPECT_EQ(document->body, file);  // embedded at build time, byte for byte
  nlohmann::json openapi = BodyJson(document);
  EXPECT_EQ(openapi["openapi"], "3.1.0");
  int checked = 0;
  for (const auto& [path, operations] : openapi["paths"].items()) {
    std::string concrete = path;
    if (size_t brace = concrete.find("{id}"); brace != std::string::npos) concrete.replace(brace, 4, "none");
    if (size_t brace = concrete.find("{key}"); brace != std::string::npos) concrete.replace(brace, 5, "none");
    for (const auto& [method, operation] : operations.items()) {
      httplib::Result result = method == "get" ? Get(concrete) : Post(concrete, "{}");
      ASSERT_TRUE(result) << method << " " << path;
      nlohmann::json body = BodyJson(result);  // /metrics is text: not a problem either
      std::string reason = body.is_object() ? body.value("reason", "") : "";
      EXPECT_NE(reason, "route_not_found") << method << " " << path;
      EXPECT_NE(reason, "method_not_allowed") << method << " " << path;
      ++checked;
    }
  }
  // Every route of issue 14, the two hold routes of issue 13 and issue 31's listings
  // (GET /v1/transactions, GET /v1/holds, GET /v1/keys/{key}).
  EXPECT_EQ(checked, 21);
}

}  // namespace
}  // namespace ledger::testing
