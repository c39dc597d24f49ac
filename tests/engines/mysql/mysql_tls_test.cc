// TLS to MariaDB, on servers of this test's own (ThrowawayServer): one accepts TLS with
// a certificate the test made (a CA of its own signed it for 127.0.0.1), the other has
// no TLS at all (--skip-ssl: have_ssl DISABLED). The URL carries the engine's ssl_*
// parameters: ssl_mode=required encrypts (the session's Ssl_cipher, and a server that
// refuses plain connections still serves the engine), verify_ca and verify_identity with
// the right CA connect; every mode but disabled, in MySQL 8's spelling (REQUIRED) and in
// lower case, is refused by the server without TLS before anything of the ledger's is
// written, and verify_ca and verify_identity against another CA are refused; each
// refusal says why and never shows the password. ctest label: tls.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "base/status.h"
#include "engines/mysql/mysql_connection.h"
#include "engines/mysql/mysql_engine.h"
#include "engines/open_engine.h"
#include "tests/conformance/conformance_context.h"
#include "tests/engines/mysql/mysql_test_server.h"
#include "tests/support/throwaway_server.h"

namespace ledger::testing {
namespace {

using mysql_internal::ErrorContext;
using mysql_internal::MysqlConnection;
using mysql_internal::SqlRow;

constexpr char kPassword[] = "Tls-p@ss:w0rd/secret";
constexpr char kEscapedPassword[] = "Tls-p%40ss%3Aw0rd%2Fsecret";

class MysqlTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<TestCertificates> made = MakeTestCertificates();
    if (!made.ok()) {
      *start_failure_ = made.status();
      return;
    }
    certificates_ = new TestCertificates(*made);
    *start_failure_ = StartServer(
        ThrowawayServer::Start(ThrowawayServer::Kind::kMysql, certificates_), server_, admin_);
    if (!start_failure_->ok()) return;
    *start_failure_ =
        StartServer(ThrowawayServer::StartWithoutTls(ThrowawayServer::Kind::kMysql),
                    plain_server_, plain_admin_);
  }
  // Takes `started`, connects its admin session and creates the user ledger_tls.
  static absl::Status StartServer(absl::StatusOr<std::unique_ptr<ThrowawayServer>> started,
                                  ThrowawayServer*& server, MysqlTestServer*& admin) {
    if (!started.ok()) return started.status();
    server = started->release();
    LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<MysqlTestServer> connected,
                            MysqlTestServer::Connect(server->url()));
    admin = connected.release();
    for (const std::string& sql :
         {absl::StrCat("CREATE USER 'ledger_tls'@'%' IDENTIFIED BY '", kPassword, "'"),
          std::string("GRANT ALL ON ledger_test.* TO 'ledger_tls'@'%'")}) {
      LEDGER_RETURN_IF_ERROR(admin->Execute(sql));
    }
    return absl::OkStatus();
  }
  static void TearDownTestSuite() {
    for (MysqlTestServer** admin : {&admin_, &plain_admin_}) {
      delete *admin;
      *admin = nullptr;
    }
    for (ThrowawayServer** server : {&server_, &plain_server_}) {
      delete *server;
      *server = nullptr;
    }
    if (certificates_ != nullptr) RemoveTestCertificates(*certificates_);
    delete certificates_;
    certificates_ = nullptr;
  }

  void SetUp() override {
    if (admin_ == nullptr || plain_admin_ == nullptr || !start_failure_->ok()) {
      if (RunningInCi()) GTEST_FAIL() << "no MariaDB servers of the test's own: " << *start_failure_;
      GTEST_SKIP() << "no MariaDB servers of the test's own: " << *start_failure_;
    }
  }

  // The engine's URL for `server` (the TLS one by default), as user ledger_tls with its
  // password, and `query`.
  static std::string Url(const std::string& query, const ThrowawayServer* server = nullptr) {
    return absl::StrCat("mysql://ledger_tls:", kEscapedPassword, "@127.0.0.1:",
                        (server == nullptr ? server_ : server)->port(), "/ledger_test?", query);
  }

  // Every mode above disabled, as MySQL 8 spells it (--ssl-mode=VERIFY_CA) and in lower
  // case, with the TLS parameters that go with it: `ca` for the verifying modes.
  static std::vector<std::string> ModesAboveDisabled(const std::string& ca) {
    std::vector<std::string> queries;
    for (const char* mode : {"required", "REQUIRED"}) {
      queries.push_back(absl::StrCat("ssl_mode=", mode));
    }
    for (const char* mode : {"verify_ca", "VERIFY_CA", "verify_identity", "VERIFY_IDENTITY"}) {
      queries.push_back(absl::StrCat("ssl_mode=", mode, "&ssl_ca=", ca));
    }
    return queries;
  }

  // Expects `refused` to be a refusal at open that names TLS and shows no password. A
  // session refused (PermissionDenied, the CLI's exit 10): retrying cannot help.
  static void ExpectTlsRefusal(const absl::Status& refused) {
    EXPECT_TRUE(absl::IsPermissionDenied(refused)) << refused;
    EXPECT_NE(refused.message().find("TLS/SSL error"), absl::string_view::npos) << refused;
    EXPECT_EQ(refused.message().find(kPassword), absl::string_view::npos) << refused;
    EXPECT_EQ(refused.message().find(kEscapedPassword), absl::string_view::npos) << refused;
  }

  // The cipher of a session opened the engine's way with `query`'s settings ("" when
  // the session is not encrypted), as the server reports it.
  static absl::StatusOr<std::string> CipherOfSession(const std::string& query,
                                                     const ThrowawayServer* server = nullptr) {
    LEDGER_ASSIGN_OR_RETURN(mysql_internal::MysqlSettings settings,
                            mysql_internal::ParseMysqlUrl(Url(query, server)));
    LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<MysqlConnection> connection,
                            MysqlConnection::Open(settings));
    std::string cipher;
    LEDGER_RETURN_IF_ERROR(connection->Query(
        "SHOW SESSION STATUS LIKE 'Ssl_cipher'", {},
        [&](const SqlRow& row) { cipher = row.String(1); }, "read the cipher",
        ErrorContext::kStandalone));
    return cipher;
  }

  static ThrowawayServer* server_;        // TLS with certificates_
  static MysqlTestServer* admin_;
  static ThrowawayServer* plain_server_;  // no TLS
  static MysqlTestServer* plain_admin_;
  static TestCertificates* certificates_;
  static absl::Status* start_failure_;
};

ThrowawayServer* MysqlTlsTest::server_ = nullptr;
MysqlTestServer* MysqlTlsTest::admin_ = nullptr;
ThrowawayServer* MysqlTlsTest::plain_server_ = nullptr;
MysqlTestServer* MysqlTlsTest::plain_admin_ = nullptr;
TestCertificates* MysqlTlsTest::certificates_ = nullptr;
absl::Status* MysqlTlsTest::start_failure_ = new absl::Status();

TEST_F(MysqlTlsTest, SslModeRequiredEncryptsTheSession) {
  for (const char* query : {"ssl_mode=required", "ssl_mode=REQUIRED"}) {
    absl::StatusOr<std::string> cipher = CipherOfSession(query);
    ASSERT_TRUE(cipher.ok()) << query << ": " << cipher.status();
    EXPECT_NE(*cipher, "") << query;
  }
  // The same check on a plain session finds no cipher: it can tell them apart.
  absl::StatusOr<std::string> plain = CipherOfSession("ssl_mode=disabled");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(*plain, "");
}

// The whole engine, not only its session class: a server that refuses every plain
// connection still serves it, and refuses it without ssl_mode.
TEST_F(MysqlTlsTest, SslModeRequiredServesTheEngineWhereTheServerDemandsTls) {
  ASSERT_TRUE(admin_->Execute("SET GLOBAL require_secure_transport = ON").ok());
  absl::StatusOr<std::unique_ptr<Engine>> engine = OpenEngine(Url("ssl_mode=required"));
  absl::StatusOr<std::unique_ptr<Engine>> plain = OpenEngine(Url("ssl_mode=disabled"));
  ASSERT_TRUE(admin_->Execute("SET GLOBAL require_secure_transport = OFF").ok());
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_TRUE((*engine)->PutAsset({"CREDITS", 0}).ok());
  EXPECT_FALSE(plain.ok());
}

TEST_F(MysqlTlsTest, VerifyingModesWithTheServersCaConnect) {
  for (const char* mode : {"verify_ca", "verify_identity"}) {
    absl::StatusOr<std::string> cipher =
        CipherOfSession(absl::StrCat("ssl_mode=", mode, "&ssl_ca=", certificates_->ca));
    ASSERT_TRUE(cipher.ok()) << mode << ": " << cipher.status();
    EXPECT_NE(*cipher, "") << mode;
  }
}

// The server's certificate comes from a CA the client was not given: the verifying
// modes refuse it, in either spelling, through the URL opener and the engine's own open
// function alike.
TEST_F(MysqlTlsTest, VerifyingModesAgainstAnotherCaAreRefusedClearlyWithoutThePassword) {
  for (const char* mode : {"verify_ca", "VERIFY_CA", "verify_identity", "VERIFY_IDENTITY"}) {
    SCOPED_TRACE(mode);
    const std::string url =
        Url(absl::StrCat("ssl_mode=", mode, "&ssl_ca=", certificates_->wrong_ca));
    MysqlOptions options;
    options.connection = url;
    for (const absl::Status& refused :
         {OpenEngine(url).status(), OpenMysqlEngine(options).status()}) {
      ExpectTlsRefusal(refused);
      EXPECT_NE(refused.message().find("certificate"), absl::string_view::npos) << refused;
    }
  }
}

// required does not check the certificate: a server whose certificate no CA the client
// knows signed is served encrypted (SslModeRequiredEncryptsTheSession: no ssl_ca). Given
// an ssl_ca, the client library checks the chain against it in every mode.
TEST_F(MysqlTlsTest, SslModeRequiredChecksTheChainOnlyWhenGivenACa) {
  absl::StatusOr<std::string> cipher =
      CipherOfSession(absl::StrCat("ssl_mode=required&ssl_ca=", certificates_->ca));
  ASSERT_TRUE(cipher.ok()) << cipher.status();
  EXPECT_NE(*cipher, "");
  ExpectTlsRefusal(
      CipherOfSession(absl::StrCat("ssl_mode=required&ssl_ca=", certificates_->wrong_ca))
          .status());
}

// The server without TLS: every mode above disabled is refused, by the session class,
// the URL opener and the engine's open function (which would migrate), and nothing of
// the ledger's reaches the server (no table; no TLS session was ever accepted).
TEST_F(MysqlTlsTest, EveryModeAboveDisabledRefusesAServerWithoutTls) {
  absl::StatusOr<std::string> have_ssl = plain_admin_->QueryText("SELECT @@have_ssl");
  ASSERT_TRUE(have_ssl.ok()) << have_ssl.status();
  ASSERT_EQ(*have_ssl, "DISABLED");
  // The control: the same user and password open a plain session there.
  absl::StatusOr<std::string> plain = CipherOfSession("ssl_mode=disabled", plain_server_);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(*plain, "");
  for (const std::string& query : ModesAboveDisabled(certificates_->ca)) {
    SCOPED_TRACE(query);
    const std::string url = Url(query, plain_server_);
    MysqlOptions options;
    options.connection = url;
    for (const absl::Status& refused :
         {CipherOfSession(query, plain_server_).status(), OpenEngine(url).status(),
          OpenMysqlEngine(options).status()}) {
      ExpectTlsRefusal(refused);
      // Why: the engine's check (required, verify_ca) or the client library's own
      // (verify_identity).
      EXPECT_TRUE(absl::StrContains(refused.message(), "the session is not encrypted") ||
                  absl::StrContains(refused.message(), "the server does not support it"))
          << refused;
    }
  }
  absl::StatusOr<std::string> tables = plain_admin_->QueryText(
      "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'ledger_test'");
  ASSERT_TRUE(tables.ok()) << tables.status();
  EXPECT_EQ(*tables, "0");
  absl::StatusOr<std::string> accepted = plain_admin_->QueryText(
      "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS "
      "WHERE VARIABLE_NAME = 'SSL_ACCEPTS'");
  ASSERT_TRUE(accepted.ok()) << accepted.status();
  EXPECT_EQ(*accepted, "0");
}

}  // namespace
}  // namespace ledger::testing
