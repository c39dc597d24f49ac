// TLS to PostgreSQL, on servers of this test's own (ThrowawayServer): one accepts TLS
// with a certificate the test made (a CA of its own signed it for 127.0.0.1), the other
// has none (ssl = off). The URL carries libpq's TLS parameters: sslmode=require
// encrypts (checked on the server, in pg_stat_ssl), verify-full with the right CA
// connects, verify-full against another CA is refused, and require, verify-ca and
// verify-full are refused by the server without TLS before anything is written; each
// refusal says why and never shows the password. ctest label: tls.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "engines/open_engine.h"
#include "engines/postgres/postgres_engine.h"
#include "pqxx/connection"
#include "pqxx/nontransaction"
#include "tests/conformance/conformance_context.h"
#include "tests/support/throwaway_server.h"

namespace ledger::testing {
namespace {

constexpr char kPassword[] = "Tls-p@ss:w0rd/secret";
constexpr char kEscapedPassword[] = "Tls-p%40ss%3Aw0rd%2Fsecret";

class PostgresTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<TestCertificates> made = MakeTestCertificates();
    if (!made.ok()) {
      *start_failure_ = made.status();
      return;
    }
    certificates_ = new TestCertificates(*made);
    absl::StatusOr<std::unique_ptr<ThrowawayServer>> started =
        ThrowawayServer::Start(ThrowawayServer::Kind::kPostgres, certificates_);
    if (!started.ok()) {
      *start_failure_ = started.status();
      return;
    }
    server_ = started->release();
    started = ThrowawayServer::StartWithoutTls(ThrowawayServer::Kind::kPostgres);
    if (!started.ok()) {
      *start_failure_ = started.status();
      return;
    }
    plain_server_ = started->release();
    // The servers trust local connections; the password only has to be in the URL.
    for (const ThrowawayServer* server : {server_, plain_server_}) {
      absl::Status created = Admin(absl::StrCat("CREATE ROLE ledger_tls LOGIN SUPERUSER PASSWORD '",
                                                kPassword, "'"),
                                   server)
                                 .status();
      if (!created.ok()) *start_failure_ = created;
    }
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    delete plain_server_;
    plain_server_ = nullptr;
    if (certificates_ != nullptr) RemoveTestCertificates(*certificates_);
    delete certificates_;
    certificates_ = nullptr;
  }

  void SetUp() override {
    if (server_ == nullptr || plain_server_ == nullptr || !start_failure_->ok()) {
      if (RunningInCi()) GTEST_FAIL() << "no PostgreSQL servers of the test's own: " << *start_failure_;
      GTEST_SKIP() << "no PostgreSQL servers of the test's own: " << *start_failure_;
    }
  }

  // The engine's URL for `server` (the TLS one by default), as user ledger_tls with its
  // password, and `query`.
  static std::string Url(const std::string& query, const ThrowawayServer* server = nullptr) {
    return absl::StrCat("postgresql://ledger_tls:", kEscapedPassword, "@127.0.0.1:",
                        (server == nullptr ? server_ : server)->port(), "/ledger_test?", query);
  }

  static absl::StatusOr<std::string> Admin(const std::string& sql,
                                           const ThrowawayServer* server = nullptr) {
    try {
      pqxx::connection admin(
          absl::StrCat((server == nullptr ? server_ : server)->url(), "?sslmode=disable"));
      pqxx::nontransaction work(admin);
      pqxx::result rows = work.exec(sql);
      if (rows.empty() || rows[0].empty()) return std::string();
      return rows[0][0].c_str();
    } catch (const std::exception& e) {
      return absl::InternalError(e.what());
    }
  }

  // Sessions named `application` that use TLS, as the server sees them.
  static std::string TlsSessionsOf(const std::string& application) {
    return Admin(absl::StrCat("SELECT count(*) FROM pg_stat_ssl JOIN pg_stat_activity USING (pid) "
                              "WHERE ssl AND application_name = '",
                              application, "'"))
        .value_or("the query failed");
  }

  static ThrowawayServer* server_;        // TLS with certificates_
  static ThrowawayServer* plain_server_;  // no TLS
  static TestCertificates* certificates_;
  static absl::Status* start_failure_;
};

ThrowawayServer* PostgresTlsTest::server_ = nullptr;
ThrowawayServer* PostgresTlsTest::plain_server_ = nullptr;
TestCertificates* PostgresTlsTest::certificates_ = nullptr;
absl::Status* PostgresTlsTest::start_failure_ = new absl::Status();

TEST_F(PostgresTlsTest, SslmodeRequireConnectsOverTls) {
  absl::StatusOr<std::unique_ptr<Engine>> engine =
      OpenEngine(Url("sslmode=require&application_name=ledger-require"));
  ASSERT_TRUE(engine.ok()) << engine.status();
  ASSERT_TRUE((*engine)->PutAsset({"CREDITS", 0}).ok());  // a pooled session, idle afterwards
  EXPECT_NE(TlsSessionsOf("ledger-require"), "0");

  // The same check on a plain connection finds none: it can tell them apart.
  absl::StatusOr<std::unique_ptr<Engine>> plain =
      OpenEngine(Url("sslmode=disable&application_name=ledger-plain"));
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_TRUE((*plain)->GetAsset("CREDITS").ok());
  EXPECT_EQ(TlsSessionsOf("ledger-plain"), "0");
  EXPECT_EQ(Admin("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ledger-plain'")
                .value_or("the query failed"),
            "1");
}

TEST_F(PostgresTlsTest, VerifyFullWithTheServersCaConnects) {
  absl::StatusOr<std::unique_ptr<Engine>> engine = OpenEngine(
      Url(absl::StrCat("sslmode=verify-full&sslrootcert=", certificates_->ca,
                       "&application_name=ledger-verified")));
  ASSERT_TRUE(engine.ok()) << engine.status();
  ASSERT_TRUE((*engine)->GetAsset("CREDITS").ok());  // a pooled session, idle afterwards
  EXPECT_NE(TlsSessionsOf("ledger-verified"), "0");
}

TEST_F(PostgresTlsTest, VerifyFullAgainstAnotherCaIsRefusedClearlyWithoutThePassword) {
  const std::string url =
      Url(absl::StrCat("sslmode=verify-full&sslrootcert=", certificates_->wrong_ca));
  PostgresOptions options;
  options.connection = url;
  // Both ways in: the URL opener, and the engine's own open function.
  for (const absl::Status& refused :
       {OpenEngine(url).status(), OpenPostgresEngine(options).status()}) {
    EXPECT_TRUE(absl::IsPermissionDenied(refused)) << refused;  // a session refused: exit 10
    EXPECT_NE(refused.message().find("certificate verify failed"), absl::string_view::npos)
        << refused;
    EXPECT_EQ(refused.message().find(kPassword), absl::string_view::npos) << refused;
    EXPECT_EQ(refused.message().find(kEscapedPassword), absl::string_view::npos) << refused;
  }
}

// The server without TLS: require, verify-ca and verify-full are refused by the URL
// opener and the engine's open function (which would migrate), and nothing is written.
TEST_F(PostgresTlsTest, ModesThatRequireTlsRefuseAServerWithoutIt) {
  ASSERT_EQ(Admin("SHOW ssl", plain_server_).value_or("the query failed"), "off");
  for (const std::string& query :
       {std::string("sslmode=require"),
        absl::StrCat("sslmode=verify-ca&sslrootcert=", certificates_->ca),
        absl::StrCat("sslmode=verify-full&sslrootcert=", certificates_->ca)}) {
    SCOPED_TRACE(query);
    const std::string url = Url(query, plain_server_);
    PostgresOptions options;
    options.connection = url;
    for (const absl::Status& refused :
         {OpenEngine(url).status(), OpenPostgresEngine(options).status()}) {
      EXPECT_TRUE(absl::IsPermissionDenied(refused)) << refused;  // a session refused: exit 10
      EXPECT_NE(refused.message().find("server does not support SSL"), absl::string_view::npos)
          << refused;
      EXPECT_EQ(refused.message().find(kPassword), absl::string_view::npos) << refused;
      EXPECT_EQ(refused.message().find(kEscapedPassword), absl::string_view::npos) << refused;
    }
  }
  EXPECT_EQ(Admin("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'",
                  plain_server_)
                .value_or("the query failed"),
            "0");
  // The control: the same role and password open the ledger there without TLS.
  absl::StatusOr<std::unique_ptr<Engine>> plain = OpenEngine(Url("sslmode=disable", plain_server_));
  EXPECT_TRUE(plain.ok()) << plain.status();
}

}  // namespace
}  // namespace ledger::testing
