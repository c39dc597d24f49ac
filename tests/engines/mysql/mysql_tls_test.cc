// TLS to MariaDB, on a server of this test's own (ThrowawayServer) that accepts TLS with
// a certificate the test made (a CA of its own signed it for 127.0.0.1). The URL carries
// the engine's ssl_* parameters: ssl_mode=required encrypts (the session's Ssl_cipher,
// and a server that refuses plain connections still serves the engine), verify_ca and
// verify_identity with the right CA connect, and verify_ca against another CA is
// refused with an error that says why and never shows the password. ctest label: tls.
#include <memory>
#include <string>

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
    absl::StatusOr<std::unique_ptr<ThrowawayServer>> started =
        ThrowawayServer::Start(ThrowawayServer::Kind::kMysql, certificates_);
    if (!started.ok()) {
      *start_failure_ = started.status();
      return;
    }
    server_ = started->release();
    absl::StatusOr<std::unique_ptr<MysqlTestServer>> admin = MysqlTestServer::Connect(server_->url());
    if (!admin.ok()) {
      *start_failure_ = admin.status();
      return;
    }
    admin_ = admin->release();
    for (const std::string& sql :
         {absl::StrCat("CREATE USER 'ledger_tls'@'%' IDENTIFIED BY '", kPassword, "'"),
          std::string("GRANT ALL ON ledger_test.* TO 'ledger_tls'@'%'")}) {
      if (absl::Status done = admin_->Execute(sql); !done.ok()) *start_failure_ = done;
    }
  }
  static void TearDownTestSuite() {
    delete admin_;
    admin_ = nullptr;
    delete server_;
    server_ = nullptr;
    if (certificates_ != nullptr) RemoveTestCertificates(*certificates_);
    delete certificates_;
    certificates_ = nullptr;
  }

  void SetUp() override {
    if (admin_ == nullptr || !start_failure_->ok()) {
      if (RunningInCi()) GTEST_FAIL() << "no TLS MariaDB server of the test's own: " << *start_failure_;
      GTEST_SKIP() << "no TLS MariaDB server of the test's own: " << *start_failure_;
    }
  }

  // The engine's URL for the server, as user ledger_tls with its password, and `query`.
  static std::string Url(const std::string& query) {
    return absl::StrCat("mysql://ledger_tls:", kEscapedPassword, "@127.0.0.1:", server_->port(),
                        "/ledger_test?", query);
  }

  // The cipher of a session opened the engine's way with `query`'s settings ("" when
  // the session is not encrypted), as the server reports it.
  static absl::StatusOr<std::string> CipherOfSession(const std::string& query) {
    LEDGER_ASSIGN_OR_RETURN(mysql_internal::MysqlSettings settings,
                            mysql_internal::ParseMysqlUrl(Url(query)));
    LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<MysqlConnection> connection,
                            MysqlConnection::Open(settings));
    std::string cipher;
    LEDGER_RETURN_IF_ERROR(connection->Query(
        "SHOW SESSION STATUS LIKE 'Ssl_cipher'", {},
        [&](const SqlRow& row) { cipher = row.String(1); }, "read the cipher",
        ErrorContext::kStandalone));
    return cipher;
  }

  static ThrowawayServer* server_;
  static MysqlTestServer* admin_;
  static TestCertificates* certificates_;
  static absl::Status* start_failure_;
};

ThrowawayServer* MysqlTlsTest::server_ = nullptr;
MysqlTestServer* MysqlTlsTest::admin_ = nullptr;
TestCertificates* MysqlTlsTest::certificates_ = nullptr;
absl::Status* MysqlTlsTest::start_failure_ = new absl::Status();

TEST_F(MysqlTlsTest, SslModeRequiredEncryptsTheSession) {
  absl::StatusOr<std::string> cipher = CipherOfSession("ssl_mode=required");
  ASSERT_TRUE(cipher.ok()) << cipher.status();
  EXPECT_NE(*cipher, "");
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

TEST_F(MysqlTlsTest, VerifyCaAgainstAnotherCaIsRefusedClearlyWithoutThePassword) {
  const std::string url = Url(absl::StrCat("ssl_mode=verify_ca&ssl_ca=", certificates_->wrong_ca));
  MysqlOptions options;
  options.connection = url;
  // Both ways in: the URL opener, and the engine's own open function.
  for (const absl::Status& refused : {OpenEngine(url).status(), OpenMysqlEngine(options).status()}) {
    EXPECT_TRUE(absl::IsUnavailable(refused)) << refused;
    EXPECT_NE(refused.message().find("TLS/SSL error"), absl::string_view::npos) << refused;
    EXPECT_NE(refused.message().find("certificate"), absl::string_view::npos) << refused;
    EXPECT_EQ(refused.message().find(kPassword), absl::string_view::npos) << refused;
    EXPECT_EQ(refused.message().find(kEscapedPassword), absl::string_view::npos) << refused;
  }
}

}  // namespace
}  // namespace ledger::testing
