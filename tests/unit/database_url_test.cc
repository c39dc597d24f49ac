// Database URL parsing and the one redaction every program uses.
#include "engines/common/database_url.h"

#include <string>
#include <vector>

#include "base/status.h"
#include "gtest/gtest.h"

namespace ledger {
namespace {

TEST(RedactDatabaseUrlTest, HidesUserinfoPasswordsWithReservedCharacters) {
  EXPECT_EQ(RedactDatabaseUrl("mysql://root:s3cr@t@db:3306/books"), "mysql://root:***@db:3306/books");
  EXPECT_EQ(RedactDatabaseUrl("mysql://root:a:b/c%3F?d@db/books"), "mysql://root:***@db/books");
  EXPECT_EQ(RedactDatabaseUrl("postgresql://app:p%40ss@[::1]:5432/books?sslmode=require"),
            "postgresql://app:***@[::1]:5432/books?sslmode=require");
}

TEST(RedactDatabaseUrlTest, HidesPasswordParametersAndKeywords) {
  EXPECT_EQ(RedactDatabaseUrl("postgres://app@db/books?sslmode=require&password=hunter2&x=1"),
            "postgres://app@db/books?sslmode=require&password=***&x=1");
  EXPECT_EQ(RedactDatabaseUrl("host=db password=hunter2 dbname=books"),
            "host=db password=*** dbname=books");
  EXPECT_EQ(RedactDatabaseUrl("host=db password = 'hunter 2\\' x' dbname=books"),
            "host=db password = *** dbname=books");
}

TEST(RedactDatabaseUrlTest, LeavesUrlsWithoutPasswordsAlone) {
  for (const char* url : {"sqlite:ledger.db", "memory:", "postgres://app@db/books",
                          "mysql://root@127.0.0.1:3306/ledger", "host=db dbname=books"}) {
    EXPECT_EQ(RedactDatabaseUrl(url), url);
  }
}

TEST(RedactPasswordInStatusTest, HidesThePasswordAsWrittenAndDecodedAndKeepsTheTag) {
  const std::string url = "mysql://root:p%40ss%3Aword@db/books";
  absl::Status echoed = InDoubtError(
      "driver said: access denied for root using p@ss:word; url was " + url + " (p%40ss%3Aword)");

  absl::Status redacted = RedactPasswordInStatus(echoed, url);

  EXPECT_EQ(redacted.message().find("p@ss:word"), std::string::npos) << redacted;
  EXPECT_EQ(redacted.message().find("p%40ss"), std::string::npos) << redacted;
  EXPECT_NE(redacted.message().find("mysql://root:***@db/books"), std::string::npos) << redacted;
  EXPECT_EQ(redacted.code(), absl::StatusCode::kUnknown);
  EXPECT_TRUE(IsInDoubt(redacted));
}

TEST(ParseDatabaseUrlTest, QueryStartsAfterTheCredentials) {
  absl::StatusOr<DatabaseUrl> url = ParseDatabaseUrl("postgres://app:pa?ss@db/books?claim=row");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->scheme, "postgres");
  EXPECT_EQ(url->base, "postgres://app:pa?ss@db/books");
  EXPECT_EQ(url->Parameter("claim", "advisory"), "row");
  EXPECT_EQ(url->Parameter("sslmode", "prefer"), "prefer");
}

// A raw '@' or '/' in a password makes a driver read the rest of it as the host (libpq:
// could not translate host name "S3cretPW@127.0.0.1"), which its error then prints.
TEST(ParseDatabaseUrlTest, RefusesARawAtOrSlashInTheCredentialsWithoutShowingThem) {
  for (const char* url : {"postgres://u:Zq7pa@S3cretPW@127.0.0.1:5432/db",
                          "postgresql://u:Zq7pa@S3cretPW@127.0.0.1:5432/db?sslmode=disable",
                          "mysql://app:Zq7p@ss:w/rd%3F@127.0.0.1:1/ledger",
                          "mysql://app:Zq7p@ss?x@127.0.0.1:1/ledger",
                          "postgres://u:Zq7p@ss/w@host/db", "postgres://u:Zq7p@s?s@host/db",
                          "postgres://u:Zq7pa/ss@127.0.0.1/db",
                          "postgres://u:pw@host/db?application_name=Zq7a@b"}) {
    absl::StatusOr<DatabaseUrl> parsed = ParseDatabaseUrl(url);
    ASSERT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << url;
    const std::string message(parsed.status().message());
    EXPECT_EQ(message.find("Zq7"), std::string::npos) << message;
    EXPECT_EQ(message.find("S3cret"), std::string::npos) << message;
    EXPECT_TRUE(message.find("%40") != std::string::npos ||
                message.find("%2F") != std::string::npos)
        << message;
  }
}

TEST(ParseDatabaseUrlTest, AcceptsEncodedCredentialsAndSqlitePathsWithAt) {
  for (const char* url : {"postgres://u:p%40ss%2Fw@127.0.0.1:5432/db",
                          "mysql://app:p%40ss:w%2Frd?x@127.0.0.1:1/ledger",
                          "postgres://app@db/books?password=p%40ss", "postgres://db/books",
                          "sqlite:///var/lib/user@1000/a@b.db", "sqlite:/tmp/a@b@c.db",
                          "host=db user=u@corp password=p@ss@w dbname=books"}) {
    EXPECT_TRUE(ParseDatabaseUrl(url).ok()) << url << ": " << ParseDatabaseUrl(url).status();
  }
}

TEST(ParseDatabaseUrlTest, RejectsNamelessAndRepeatedParameters) {
  EXPECT_EQ(ParseDatabaseUrl("sqlite:a.db?=full").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseDatabaseUrl("sqlite:a.db?synchronous=full&synchronous=normal").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CheckParametersTest, NamesTheUnknownParameterAndTheAcceptedOnes) {
  absl::StatusOr<DatabaseUrl> url = ParseDatabaseUrl("sqlite:a.db?journal=off");
  ASSERT_TRUE(url.ok());

  absl::Status checked = CheckParameters(*url, "sqlite", {"synchronous"});

  EXPECT_EQ(checked.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(checked.message().find("\"journal\""), std::string::npos) << checked;
  EXPECT_NE(checked.message().find("synchronous"), std::string::npos) << checked;
  EXPECT_TRUE(CheckParameters(*url, "sqlite", {"journal"}).ok());
}

TEST(ValidateSchemaNameTest, AcceptsOnePlainLowerCaseIdentifier) {
  for (const std::string& schema :
       std::vector<std::string>{"books", "_books", "public_acme", "b2", std::string(63, 'a')}) {
    EXPECT_TRUE(ValidateSchemaName("postgres", schema).ok()) << schema;
  }
}

TEST(ValidateSchemaNameTest, RefusesEverythingElseNamingTheRule) {
  for (const std::string& schema :
       std::vector<std::string>{"", "Books", "1books", "pg_books", "books-a", "books;drop",
                                "\"books\"", "b\xc3\xa9", std::string(64, 'a')}) {
    absl::Status valid = ValidateSchemaName("postgres", schema);
    EXPECT_EQ(valid.code(), absl::StatusCode::kInvalidArgument) << schema;
    EXPECT_NE(valid.message().find("postgres URL: schema"), std::string::npos) << valid;
  }
}

}  // namespace
}  // namespace ledger
