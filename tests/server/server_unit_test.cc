// In-process tests of the server's pure parts: the Idempotency-Key grammar, the API key
// file, that the served routes and docs/openapi.json list the same operations, and the
// hold sweeper over the memory engine with a manual clock, the one problem table
// (every reason, every library error) against docs/http.md, and the single submit's
// direct 201 rendering against the JSON tree's, byte for byte.
#include <atomic>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/clock.h"
#include "base/status.h"
#include "engines/common/database_url.h"
#include "engines/memory/memory_engine.h"
#include "gtest/gtest.h"
#include "ledger/json.h"
#include "ledger/outcome.h"
#include "nlohmann/json.hpp"
#include "server/api.h"
#include "server/api_keys.h"
#include "server/batch_request.h"
#include "server/hold_sweeper.h"
#include "server/http_message.h"
#include "server/idempotency_key_header.h"
#include "server/problem.h"
#include "server/router.h"
#include "server/server.h"
#include "server/submit_answer.h"
#include "server/tenant_ledgers.h"
#include "tests/support/fault_injecting_engine.h"

namespace ledger::server {
namespace {

std::string ReadSourceFile(const std::string& path) {
  std::ifstream file(std::string(LEDGER_SOURCE_DIR) + "/" + path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// One loop per core up to four; on SQLite one core is left to its single writer; never
// fewer than one.
TEST(DefaultLoopThreads, OnePerCoreUpToFourAndOneCoreLeftToSqlitesWriter) {
  EXPECT_EQ(DefaultLoopThreads("postgres", 1), 1);
  EXPECT_EQ(DefaultLoopThreads("postgres", 2), 2);
  EXPECT_EQ(DefaultLoopThreads("mysql", 8), 4);
  EXPECT_EQ(DefaultLoopThreads("postgres", 0), 1);  // hardware_concurrency unknown
  EXPECT_EQ(DefaultLoopThreads("sqlite", 1), 1);
  EXPECT_EQ(DefaultLoopThreads("sqlite", 2), 1);
  EXPECT_EQ(DefaultLoopThreads("sqlite", 4), 3);
  EXPECT_EQ(DefaultLoopThreads("sqlite", 16), 3);
}

TEST(ProblemTable, EveryReasonIsDocumentedOnceWithAnErrorStatus) {
  const std::string http_docs = ReadSourceFile("docs/http.md");
  ASSERT_FALSE(http_docs.empty()) << "docs/http.md not found under " << LEDGER_SOURCE_DIR;
  std::set<std::string_view> seen;
  for (const ProblemKind& kind : ProblemKinds()) {
    EXPECT_TRUE(seen.insert(kind.reason).second) << kind.reason << " is in the table twice";
    EXPECT_GE(kind.status, 400) << kind.reason;
    EXPECT_LE(kind.status, 599) << kind.reason;
    EXPECT_NE(http_docs.find("`" + std::string(kind.reason) + "`"), std::string::npos)
        << kind.reason << " (" << kind.status << ") is not in docs/http.md";
    const Problem problem = MakeProblem(kind.reason, "detail");
    EXPECT_EQ(problem.status, kind.status) << kind.reason;
    EXPECT_EQ(ProblemJson(problem)["type"], "urn:ledger:problem:" + std::string(kind.reason));
  }
}

TEST(ProblemTable, EveryRejectionReasonIsA402) {
  for (int reason = 0; reason <= static_cast<int>(RejectionReason::kBatchItemFailed); ++reason) {
    const std::string_view name = RejectionReasonName(static_cast<RejectionReason>(reason));
    EXPECT_EQ(ProblemKindFor(name).status, 402) << name;
  }
}

TEST(ProblemTable, EveryLibraryErrorMapsToARowAndOnlyBugsAre500) {
  const std::vector<absl::Status> tagged = {
      ConflictError("c"), DuplicateError("d"), InProgressError("p"), RetryableError("r"),
      InDoubtError("i")};
  for (const absl::Status& status : tagged) {
    const Problem problem = ProblemFromStatus(status);
    EXPECT_EQ(problem.status, ProblemKindFor(problem.reason).status) << status;
    EXPECT_NE(problem.status, 500) << status;
  }
  EXPECT_EQ(ProblemFromStatus(ConflictError("c")).reason, "idempotency_key_reused");
  EXPECT_EQ(ProblemFromStatus(InProgressError("p")).reason, "idempotency_key_in_progress");
  EXPECT_EQ(ProblemFromStatus(InDoubtError("i")).reason, "in_doubt");
  const std::set<absl::StatusCode> bugs = {absl::StatusCode::kUnknown, absl::StatusCode::kInternal,
                                           absl::StatusCode::kUnimplemented,
                                           absl::StatusCode::kDataLoss,
                                           absl::StatusCode::kCancelled,
                                           absl::StatusCode::kPermissionDenied,
                                           absl::StatusCode::kUnauthenticated};
  for (int code = 1; code <= 16; ++code) {
    const absl::Status status(static_cast<absl::StatusCode>(code), "message");
    const Problem problem = ProblemFromStatus(status);
    EXPECT_EQ(problem.status, ProblemKindFor(problem.reason).status) << status;
    EXPECT_EQ(problem.status == 500, bugs.count(status.code()) == 1) << status;
    if (problem.status == 500) {
      EXPECT_EQ(problem.detail, "internal error") << status;
    }
  }
  // CloseAccount's retryable Aborted (a deadlock against a submit) came out as 500.
  EXPECT_EQ(ProblemFromStatus(RetryableError("deadlock")).status, 503);
  EXPECT_EQ(ProblemFromStatus(absl::AbortedError("deadlock")).status, 503);
  EXPECT_EQ(ProblemFromStatus(InvariantViolationError("bug")).status, 500);
}

TEST(ProblemTable, RetryAfterGoesWithTheRowsThatSayRetry) {
  for (const ProblemKind& kind : ProblemKinds()) {
    HttpResponse response;
    WriteProblem(response, MakeProblem(kind.reason, "detail"));
    EXPECT_EQ(response.status, kind.status) << kind.reason;
    EXPECT_EQ(response.has_header("Retry-After"), kind.retry_after) << kind.reason;
    EXPECT_EQ(response.get_header_value_count("Retry-After"), kind.retry_after ? 1u : 0u);
  }
  EXPECT_TRUE(ProblemKindFor("idempotency_key_in_progress").retry_after);
  EXPECT_TRUE(ProblemKindFor("too_many_requests").retry_after);
  EXPECT_FALSE(ProblemKindFor("idempotency_key_reused").retry_after);
}

// What the route files read off a request: the decoded path, query parameters in
// order (the first of a repeated name wins), headers whatever their case.
// The hot path's 201 (WriteSubmitResult, TransactionToJsonText) is the JSON tree's
// (WriteSubmitAnswer(AnswerSubmit(...))) to the byte, so a replay still matches the
// first answer whichever wrote it, and the batch route's copy of each body too.
TEST(SubmitAnswer, TheDirect201BodyIsTheJsonTreesToTheByte) {
  std::string every_ascii;
  for (int c = 1; c < 0x80; ++c) every_ascii += static_cast<char>(c);
  Transaction base{.id = "0193d6a0-0000-7000-8000-000000000001",
                   .kind = OperationKind::kTransfer,
                   .created_at = absl::FromUnixMicros(1764190000123456),
                   .fingerprint = "sha256:abc",
                   .entries = {{.account_id = "alice", .asset = "USD", .amount = -150,
                                .balance_after = 850, .account_version = 7},
                               {.account_id = "bob", .asset = "USD", .amount = 150,
                                .balance_after = 1150, .account_version = 1}}};
  std::vector<Transaction> transactions = {base};
  Transaction odd = base;  // every ASCII byte, quotes and control characters in the strings
  odd.entries[0].account_id = every_ascii;
  odd.entries[1].asset = "a\"b\\c\x01\x1f\x7f";
  odd.fingerprint = "\t\n\r\b\f";
  transactions.push_back(odd);
  Transaction unicode = base;  // non-ASCII, valid and not
  unicode.entries[0].account_id = "caf\u00e9-\u20ac-\U0001F600-\u2028";
  unicode.entries[1].account_id = std::string("bad\xff\xfe-utf8");
  transactions.push_back(unicode);
  Transaction with_metadata = base;
  with_metadata.metadata = R"({"order":{"id":1001,"tags":["a","\u00e9"],"x":null,"y":1.5,"z":true}})";
  transactions.push_back(with_metadata);
  Transaction unparsable = base;
  unparsable.metadata = "{not json";
  transactions.push_back(unparsable);
  Transaction reversal = base;
  reversal.kind = OperationKind::kReverse;
  reversal.reversal_of = "0193d6a0-0000-7000-8000-000000000000";
  transactions.push_back(reversal);
  Transaction capture = base;
  capture.kind = OperationKind::kCapture;
  capture.hold_id = "hold-1";
  capture.entries.clear();
  transactions.push_back(capture);
  Transaction hold = base;
  hold.kind = OperationKind::kHold;
  hold.entries.clear();
  hold.hold = HoldTerms{.from = "alice", .to = "bob", .asset = "USD", .amount = 5};
  transactions.push_back(hold);

  for (const Transaction& transaction : transactions) {
    EXPECT_EQ(TransactionToJsonText(transaction), JsonText(TransactionToJson(transaction)));
    for (OutcomeKind kind : {OutcomeKind::kCommitted, OutcomeKind::kDuplicate}) {
      Outcome outcome{.kind = kind, .transaction = transaction};
      HttpResponse direct;
      HttpResponse tree;
      const std::string label = WriteSubmitResult(direct, outcome);
      const SubmitAnswer answer = AnswerSubmit(outcome);
      WriteSubmitAnswer(tree, answer);
      EXPECT_EQ(direct.status, tree.status);
      EXPECT_EQ(direct.headers, tree.headers);
      EXPECT_EQ(direct.content_type, tree.content_type);
      EXPECT_EQ(direct.body, tree.body);
      EXPECT_EQ(label, answer.outcome);
    }
  }
  // What is not a 201 goes the tree's way.
  for (const SubmitResult& result :
       {SubmitResult(Outcome::Rejected(RejectionReason::kInsufficientFunds, "short")),
        SubmitResult(absl::InvalidArgumentError("bad amount"))}) {
    HttpResponse direct;
    HttpResponse tree;
    const std::string label = WriteSubmitResult(direct, result);
    const SubmitAnswer answer = AnswerSubmit(result);
    WriteSubmitAnswer(tree, answer);
    EXPECT_EQ(direct.status, tree.status);
    EXPECT_EQ(direct.body, tree.body);
    EXPECT_EQ(label, answer.outcome);
  }
}

TEST(HttpRequest, SplitsTheTargetAndDecodesPercentEscapes) {
  HttpRequest request{.target = "/v1/accounts/a%2Fb/history?after=3&as_of=2026-01-31T23%3A59%3A59Z&q=a+b&after=9&flag"};
  ASSERT_TRUE(request.SplitTarget());
  EXPECT_EQ(request.path, "/v1/accounts/a/b/history");
  EXPECT_EQ(request.get_param_value("after"), "3");
  EXPECT_EQ(request.get_param_value("as_of"), "2026-01-31T23:59:59Z");
  EXPECT_EQ(request.get_param_value("q"), "a b");
  EXPECT_TRUE(request.has_param("flag"));
  EXPECT_FALSE(request.has_param("limit"));
  EXPECT_EQ(request.get_param_value("limit"), "");
  for (const char* bad : {"/v1/%zz", "/v1/%2", "/v1/x?after=%"}) {
    HttpRequest malformed{.target = bad};
    EXPECT_FALSE(malformed.SplitTarget()) << bad;
  }
  request.headers = {{"idempotency-key", "\"k\""}, {"Prefer", "wait=1"}, {"PREFER", "wait=2"}};
  EXPECT_EQ(request.get_header_value("Idempotency-Key"), "\"k\"");
  EXPECT_EQ(request.get_header_value_count("prefer"), 2u);
  EXPECT_EQ(request.get_header_value("Prefer"), "wait=1");
  EXPECT_FALSE(request.has_header("Authorization"));
}

TEST(HttpResponse, SetHeaderReplacesWhateverTheCase) {
  HttpResponse response;
  response.set_header("Retry-After", "1");
  response.set_header("retry-after", "2");
  EXPECT_EQ(response.get_header_value_count("Retry-After"), 1u);
  EXPECT_EQ(response.get_header_value("RETRY-AFTER"), "2");
  response.set_content("{}", "application/json");
  EXPECT_EQ(response.body, "{}");
  EXPECT_EQ(response.content_type, "application/json");
}

TEST(IdempotencyKeyHeader, StructuredStringAndTokenGiveTheSameKey) {
  EXPECT_EQ(*ParseIdempotencyKeyHeader("\"8e03978e-40d5-43e8-bc93-6894a57f9324\""),
            "8e03978e-40d5-43e8-bc93-6894a57f9324");
  EXPECT_EQ(*ParseIdempotencyKeyHeader("8e03978e-40d5-43e8-bc93-6894a57f9324"),
            "8e03978e-40d5-43e8-bc93-6894a57f9324");
  EXPECT_EQ(*ParseIdempotencyKeyHeader(R"("a \"quoted\" \\ key")"), R"(a "quoted" \ key)");
  EXPECT_EQ(*ParseIdempotencyKeyHeader("order:1/2"), "order:1/2");
}

// Each accepted form (server/idempotency_key_header.h), and the bare value's whole set.
TEST(IdempotencyKeyHeader, AcceptsTheStringAndTheBareValueForms) {
  EXPECT_EQ(*ParseIdempotencyKeyHeader("\"12345\""), "12345");  // a number, quoted: a key
  EXPECT_EQ(*ParseIdempotencyKeyHeader("\" spaces, commas; and (parens) \""),
            " spaces, commas; and (parens) ");
  EXPECT_EQ(*ParseIdempotencyKeyHeader("\"" + std::string(255, 'k') + "\""), std::string(255, 'k'));
  const std::string every_bare = "azAZ09!#$%&'*+-.^_`|~:/";
  EXPECT_EQ(*ParseIdempotencyKeyHeader(every_bare), every_bare);
  EXPECT_EQ(*ParseIdempotencyKeyHeader("123abc"), "123abc");    // not a number: a key
  EXPECT_EQ(*ParseIdempotencyKeyHeader("1.2.3"), "1.2.3");      // not a Decimal either
  EXPECT_EQ(*ParseIdempotencyKeyHeader("order:1"), "order:1");  // ':' inside is fine
}

// Each refusal says why (the detail of the 400 idempotency_key_invalid).
TEST(IdempotencyKeyHeader, EachRefusalSaysWhy) {
  const std::pair<std::string, std::string> refusals[] = {
      {"", "is empty"},
      {"12345", "is a number"},
      {"-7", "is a number"},
      {"3.14", "is a number"},
      {"000000000000000000001", "is a number"},
      {":aGk:", "Byte Sequence"},
      {"two words", "bare value"},
      {"k,l", "bare value"},
      {"k;p=1", "bare value"},
      {"?1", "bare value"},
      {"caf\xc3\xa9", "bare value"},
      {"\"open", "no closing quote"},
      {"\"a\"b", "nothing may follow"},
      {"\"a\";p=1", "nothing may follow"},
      {"\"bad\\x\"", "backslash"},
      {"\"tab\there\"", "printable ASCII"},
      {"\"\"", "Idempotency-Key"},
      {std::string(256, 'k'), "Idempotency-Key"},
  };
  for (const auto& [value, why] : refusals) {
    absl::StatusOr<std::string> key = ParseIdempotencyKeyHeader(value);
    ASSERT_FALSE(key.ok()) << value;
    EXPECT_EQ(key.status().code(), absl::StatusCode::kInvalidArgument) << value;
    EXPECT_NE(key.status().message().find(why), absl::string_view::npos)
        << value << ": " << key.status().message();
  }
}

TEST(IdempotencyKeyHeader, RejectsWhatTheGrammarForbids) {
  for (const char* bad : {"", "\"\"", "\"open", "\"a\"b", "\"a\";p=1", "\"bad\\x\"", "two words",
                          "a,b", "\"tab\there\"", "quote\"inside"}) {
    absl::StatusOr<std::string> key = ParseIdempotencyKeyHeader(bad);
    EXPECT_FALSE(key.ok()) << bad;
    EXPECT_EQ(key.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_FALSE(ParseIdempotencyKeyHeader(std::string(256, 'k')).ok());
  EXPECT_TRUE(ParseIdempotencyKeyHeader(std::string(255, 'k')).ok());
}

// A driver's message that echoes the served URL's password (as written or decoded, or
// alone) never reaches a problem's detail.
TEST(ProblemFromStatus, HidesTheServedDatabasesPassword) {
  const std::string url = "postgresql://app:Zq7p%40ss@db:5432/books?password=Zq7second";
  HidePasswordOf(url);
  for (const absl::Status& status :
       {absl::UnavailableError("connect to " + url + " failed: Zq7p@ss"),
        absl::NotFoundError("no such thing as Zq7p%40ss or Zq7second"),
        absl::InvalidArgumentError("password Zq7p@ss"),
        absl::FailedPreconditionError("Zq7second")}) {
    const Problem problem = ProblemFromStatus(status);
    EXPECT_EQ(problem.detail.find("Zq7"), std::string::npos) << problem.detail;
    EXPECT_EQ(JsonText(ProblemJson(problem)).find("Zq7"), std::string::npos);
  }
  EXPECT_EQ(ProblemFromStatus(absl::UnavailableError("server gone")).detail, "server gone");
  HidePasswordOf("");
}

// Where each tenant's ledger lives (docs/http.md "Tenants"), engine by engine.
TEST(TenantDatabaseUrl, DerivesEachTenantsLedgerFromTheDbUrl) {
  const std::pair<std::string, std::string> derived[] = {
      {"sqlite:/var/lib/ledger/books.db", "sqlite:/var/lib/ledger/books.acme.db"},
      {"sqlite:books.db?synchronous=normal", "sqlite:books.acme.db?synchronous=normal"},
      {"sqlite:///var/lib/ledger/books", "sqlite:///var/lib/ledger/books.acme"},
      {"sqlite:/var/lib/ledger.d/books", "sqlite:/var/lib/ledger.d/books.acme"},
      {"postgresql://app@db/books", "postgresql://app@db/books?schema=public_acme"},
      {"postgres://app:pw@db/books?sslmode=require&schema=ledger",
       "postgres://app:pw@db/books?sslmode=require&schema=ledger_acme"},
      {"mysql://app:pw@db:3306/books", "mysql://app:pw@db:3306/books_acme?create_database=true"},
      {"mysql://app@db/books?ssl_mode=required",
       "mysql://app@db/books_acme?ssl_mode=required&create_database=true"},
      {"memory:", "memory:"},
  };
  for (const auto& [database_url, tenant_url] : derived) {
    absl::StatusOr<std::string> url = TenantDatabaseUrl(database_url, "acme");
    ASSERT_TRUE(url.ok()) << database_url << ": " << url.status();
    EXPECT_EQ(*url, tenant_url);
  }
  EXPECT_EQ(*TenantDatabaseUrl("postgresql://app@db/books", "default"), "postgresql://app@db/books");
}

// A --read-db replica's URL creates nothing: a read_only MySQL replica refuses CREATE DATABASE.
TEST(TenantDatabaseUrl, AReplicasUrlCreatesNothing) {
  EXPECT_EQ(*TenantDatabaseUrl("mysql://app@replica/books?ssl_mode=required", "acme",
                               TenantUrlFor::kReads),
            "mysql://app@replica/books_acme?ssl_mode=required");
  EXPECT_EQ(*TenantDatabaseUrl("postgresql://app@replica/books", "acme", TenantUrlFor::kReads),
            "postgresql://app@replica/books?schema=public_acme");
}

TEST(TenantDatabaseUrl, RefusesNamesTheEngineCannotHold) {
  const std::string tenant(32, 't');
  EXPECT_EQ(TenantDatabaseUrl("postgresql://app@db/b?schema=" + std::string(31, 's'), tenant).status().code(),
            absl::StatusCode::kInvalidArgument);  // 31 + 1 + 32 > 63
  EXPECT_TRUE(TenantDatabaseUrl("postgresql://app@db/b?schema=" + std::string(30, 's'), tenant).ok());
  EXPECT_EQ(TenantDatabaseUrl("mysql://app@db/" + std::string(32, 'd'), tenant).status().code(),
            absl::StatusCode::kInvalidArgument);  // 32 + 1 + 32 > 64
  EXPECT_EQ(TenantDatabaseUrl("mysql://app@db/my-books", "acme").status().code(),
            absl::StatusCode::kInvalidArgument);  // not a plain name
}

TEST(ApiKeys, TenantNamesAreSafeInIdentifiersAndPaths) {
  for (const std::string& tenant : std::vector<std::string>{"a", "acme", "acme_2", std::string(32, 'a')}) {
    EXPECT_TRUE(ValidateTenantName(tenant).ok()) << tenant;
  }
  for (const std::string& tenant :
       std::vector<std::string>{"", "Acme", "1acme", "_acme", "acme-corp", "acme.db", "../x",
                                "caf\xc3\xa9", std::string(33, 'a')}) {
    EXPECT_EQ(ValidateTenantName(tenant).code(), absl::StatusCode::kInvalidArgument) << tenant;
  }
}

TEST(ApiKeys, FindsTheTenantAndRoleOfAHashedKey) {
  absl::StatusOr<ApiKeys> keys = ApiKeys::Parse(
      "# comment\n\n" + HashApiKey("s3cret") + "  acme\tsubmit\n" + HashApiKey("other") + " b read\n");
  ASSERT_TRUE(keys.ok()) << keys.status();
  std::optional<Principal> acme = keys->Find("s3cret");
  ASSERT_TRUE(acme.has_value());
  EXPECT_EQ(acme->tenant, "acme");
  EXPECT_EQ(acme->role, Role::kSubmit);
  EXPECT_FALSE(keys->Find("S3CRET").has_value());
  EXPECT_FALSE(keys->Find(HashApiKey("s3cret")).has_value());  // the hash is not the key
}

TEST(ApiKeys, BadLinesNameTheLineButNeverItsContent) {
  absl::StatusOr<ApiKeys> plain = ApiKeys::Parse("my-plain-secret acme admin\n");
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.status().message().find("line 1"), absl::string_view::npos);
  EXPECT_EQ(plain.status().message().find("my-plain-secret"), absl::string_view::npos);
  EXPECT_FALSE(ApiKeys::Parse(HashApiKey("k") + " acme root\n").ok());
  EXPECT_FALSE(ApiKeys::Parse(HashApiKey("k") + " acme\n").ok());
  EXPECT_FALSE(ApiKeys::Parse(HashApiKey("k") + " a read\n" + HashApiKey("k") + " b read\n").ok());
  EXPECT_FALSE(ApiKeys::Parse("# only a comment\n").ok());
}

TEST(BatchRequestBody, EachItemKeepsItsOwnKeyAndOperationResult) {
  absl::StatusOr<BatchRequestBody> body = ParseBatchRequestBody(
      R"({"atomic":true,"items":[)"
      R"({"idempotency_key":"\"quoted\"","operation":{"kind":"reverse","transaction_id":"t1"}},)"
      R"({"idempotency_key":"bare","operation":{"kind":"reverse","transaction_id":"t2"}},)"
      R"({"idempotency_key":"two words","operation":{"kind":"reverse","transaction_id":"t3"}},)"
      R"({"idempotency_key":"k4","operation":{"kind":"reverse","transaction_id":"t4","x":1}}]})");
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_TRUE(body->atomic);
  ASSERT_EQ(body->items.size(), 4u);
  EXPECT_EQ(*body->items[0].key, "quoted");  // the Structured Field string form
  EXPECT_EQ(body->items[0].operation->transaction_id, "t1");
  EXPECT_EQ(*body->items[1].key, "bare");  // the token form
  EXPECT_FALSE(body->items[2].key.ok());   // neither: that item's 400, not the batch's
  EXPECT_TRUE(body->items[2].operation.ok());
  EXPECT_TRUE(body->items[3].key.ok());
  EXPECT_FALSE(body->items[3].operation.ok());
  EXPECT_FALSE(ParseBatchRequestBody(R"({"items":[{"idempotency_key":"k","operation":{}}]})")->atomic);
}

TEST(BatchRequestBody, TheEnvelopeFailsTheWholeRequest) {
  for (const char* bad : {
           "{not json", "[]", R"({"items":[]})", R"({"items":{}})", R"({"atomic":false})",
           R"({"items":[{"idempotency_key":"k","operation":{}}],"atomic":"yes"})",
           R"({"items":[{"idempotency_key":"k","operation":{}}],"extra":1})",
           R"({"items":[{"idempotency_key":"k","operation":{},"note":1}]})",
           R"({"items":[{"operation":{}}]})", R"({"items":[{"idempotency_key":7,"operation":{}}]})",
           R"({"items":[{"idempotency_key":"k"}]})", R"({"items":["k"]})",
           R"({"items":[{"idempotency_key":"k","idempotency_key":"j","operation":{}}]})"}) {
    absl::StatusOr<BatchRequestBody> body = ParseBatchRequestBody(bad);
    ASSERT_FALSE(body.ok()) << bad;
    EXPECT_EQ(body.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  std::string items;
  for (size_t i = 0; i <= kBatchItemsMax; ++i) {
    items += std::string(i == 0 ? "" : ",") + R"({"idempotency_key":"k","operation":{}})";
  }
  EXPECT_EQ(ParseBatchRequestBody(R"({"items":[)" + items + "]}").status().code(),
            absl::StatusCode::kOutOfRange);
}

// Served routes == documented operations, both ways.
TEST(OpenApi, TheDocumentAndTheRoutesListTheSameOperations) {
  Ledger ledger = Ledger::Open(OpenMemoryEngine()).value();
  ServerOptions options;
  Metrics metrics(1, 1, std::nullopt, absl::ZeroDuration());
  std::atomic<bool> stopping{false};
  Router router(options, nullptr, metrics);
  ApiContext api{ledger, options, metrics, stopping};
  AddHealthRoutes(router, api);
  AddResourceRoutes(router, api);
  AddOperationRoutes(router, api);
  AddHoldRoutes(router, api);
  AddListingRoutes(router, api);
  std::set<std::pair<std::string, std::string>> served;
  for (const RouteInfo& route : router.routes()) served.emplace(route.method, route.path_template);
  nlohmann::json document = nlohmann::json::parse(OpenApiDocument());
  std::set<std::pair<std::string, std::string>> documented;
  for (const auto& [path, operations] : document["paths"].items()) {
    for (const auto& [method, operation] : operations.items()) {
      std::string upper = method;
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      documented.emplace(upper, path);
    }
  }
  EXPECT_EQ(served, documented);
}

// A call admitted by `router` for GET /later, whose resume counts its calls.
struct LaterCall {
  explicit LaterCall(const Router& router) {
    call.request.method = "GET";
    call.request.target = "/later";
    EXPECT_TRUE(call.request.SplitTarget());
    EXPECT_TRUE(router.Admit(call));
    call.resume = [this] { resumed += 1; };
  }
  RouterCall call;
  std::atomic<int> resumed{0};
};

// A handler that answers later holds its call until the answer comes, from another
// thread, after it returned (resumed once), or before it returned (no resume: the
// answer is ready when Run returns); one whose LaterAnswer is dropped unanswered gets
// a 500 instead of a call that waits forever.
TEST(Router, AnAnswerGivenLaterResumesTheCallOnce) {
  ServerOptions options;
  Metrics metrics(1, 8, std::nullopt, absl::ZeroDuration());
  Router router(options, nullptr, metrics);
  enum class Mode { kAfterReturn, kBeforeReturn, kDropped } mode = Mode::kAfterReturn;
  std::optional<LaterAnswer> pending;
  router.Get("/later", std::nullopt, [&](RequestContext& context) {
    LaterAnswer answer = context.AnswerLater();
    if (mode == Mode::kAfterReturn) pending = answer;
    if (mode == Mode::kBeforeReturn) answer([](HttpResponse& response) { response.status = 202; });
  });

  LaterCall after(router);
  EXPECT_FALSE(router.Run(after.call));
  EXPECT_EQ(after.resumed.load(), 0);
  std::thread([&] {
    (*pending)([](HttpResponse& response) { response.status = 201; });
    (*pending)([](HttpResponse& response) { response.status = 500; });  // only the first counts
  }).join();
  pending.reset();
  EXPECT_EQ(after.resumed.load(), 1);
  router.Complete(after.call);
  EXPECT_EQ(after.call.response.status, 201);

  mode = Mode::kBeforeReturn;
  LaterCall before(router);
  EXPECT_TRUE(router.Run(before.call));
  router.Complete(before.call);
  EXPECT_EQ(before.resumed.load(), 0);
  EXPECT_EQ(before.call.response.status, 202);

  mode = Mode::kDropped;
  LaterCall dropped(router);
  EXPECT_TRUE(router.Run(dropped.call));
  router.Complete(dropped.call);
  EXPECT_EQ(dropped.resumed.load(), 0);
  EXPECT_EQ(dropped.call.response.status, 500);
  for (LaterCall* done : {&after, &before, &dropped}) router.Finish(done->call);
}

// Routes match their templates segment by segment (no regular expressions since the
// routing cost was profiled): a parameter is one whole non-empty segment, whatever bytes
// it holds; anything else is literal; a path that matches under another method is 405.
TEST(Router, MatchesTemplatesSegmentBySegment) {
  ServerOptions options;
  Metrics metrics(8, 8, std::nullopt, absl::ZeroDuration());
  Router router(options, nullptr, metrics);
  router.Get("/v1/accounts/{id}", std::nullopt, [](RequestContext&) {});
  router.Get("/v1/accounts/{id}/history", std::nullopt, [](RequestContext&) {});
  router.Post("/v1/operations", std::nullopt, [](RequestContext&) {});
  struct Case {
    std::string method;
    std::string path;
    int status;                      // 0: admitted
    std::optional<size_t> route;     // when admitted
    std::vector<std::string> parameters;
  };
  for (const Case& c : std::vector<Case>{
           {"GET", "/v1/accounts/alice", 0, 0, {"alice"}},
           {"GET", "/v1/accounts/a.b+c(d)*?", 0, 0, {"a.b+c(d)*?"}},
           {"GET", "/v1/accounts/alice/history", 0, 1, {"alice"}},
           {"POST", "/v1/operations", 0, 2, {}},
           {"GET", "/v1/accounts/", 404, std::nullopt, {}},
           {"GET", "/v1/accounts//history", 404, std::nullopt, {}},
           {"GET", "/v1/accounts/alice/history/", 404, std::nullopt, {}},
           {"GET", "/v1/accounts/alice/other", 404, std::nullopt, {}},
           {"GET", "/v1/operations/x", 404, std::nullopt, {}},
           {"GET", "/v1/operations", 405, std::nullopt, {}},
           {"POST", "/v1/accounts/alice", 405, std::nullopt, {}},
       }) {
    RouterCall call;
    call.request.method = c.method;
    call.request.path = c.path;
    const bool admitted = router.Admit(call);
    EXPECT_EQ(admitted, c.status == 0) << c.method << " " << c.path;
    if (admitted) {
      EXPECT_EQ(call.route, c.route) << c.path;
      EXPECT_EQ(call.path_parameters, c.parameters) << c.path;
    } else {
      EXPECT_EQ(call.response.status, c.status) << c.method << " " << c.path;
    }
    if (c.status == 405) {
      EXPECT_NE(call.response.get_header_value("Allow"), "") << c.path;
    }
    router.Finish(call);
  }
}

// A ledger on the memory engine behind a fault injector, with a manual clock, holding
// `holds` holds of 10 from alice that lapse after one minute.
struct SweeperLedger {
  explicit SweeperLedger(int holds) {
    faulty = std::make_shared<testing::FaultInjectingEngine>(OpenMemoryEngine());
    ledger = std::make_unique<Ledger>(Ledger::Open(faulty, {.clock = &clock}).value());
    EXPECT_TRUE(ledger->DefineAsset({"USD", 2}).ok());
    EXPECT_TRUE(ledger->OpenAccount({.id = "issuance", .asset = "USD", .allow_negative = true}).ok());
    EXPECT_TRUE(ledger->OpenAccount({.id = "alice", .asset = "USD"}).ok());
    EXPECT_TRUE(ledger->OpenAccount({.id = "bob", .asset = "USD"}).ok());
    Submit("top-up", Operation::TopUp("issuance", "alice", "USD", 1000));
    for (int i = 0; i < holds; ++i) {
      Submit("hold-" + std::to_string(i),
             Operation::Hold("alice", "bob", "USD", 10, clock.Now() + absl::Minutes(1)));
    }
  }
  void Submit(const std::string& key, Operation operation) {
    absl::StatusOr<Outcome> outcome = ledger->Submit({.key = key, .operation = std::move(operation)});
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    ASSERT_EQ(outcome->kind, OutcomeKind::kCommitted) << outcome->detail;
  }
  ManualClock clock;
  std::shared_ptr<testing::FaultInjectingEngine> faulty;
  std::unique_ptr<Ledger> ledger;
  Metrics metrics{1, 1, std::nullopt, absl::Hours(1)};
  std::vector<std::string> log;
  HoldSweeper::LogEvent Logger() {
    return [this](const std::string& members) { log.push_back(members); };
  }
};

TEST(HoldSweeper, ASweepThatExpiresHoldsLogsOneLineAndCountsThem) {
  SweeperLedger book(3);
  HoldSweeper sweeper(*book.ledger, absl::Hours(1), book.metrics, book.Logger());
  EXPECT_EQ(sweeper.SweepOnce(), 0);  // nothing lapsed yet: no line
  EXPECT_TRUE(book.log.empty());
  book.clock.Advance(absl::Minutes(2));
  EXPECT_EQ(sweeper.SweepOnce(), 3);
  ASSERT_EQ(book.log.size(), 1u);
  EXPECT_NE(book.log[0].find("\"event\":\"holds_expired\",\"expired\":3,\"duration_ms\":"),
            std::string::npos)
      << book.log[0];
  EXPECT_EQ(book.ledger->GetAccount("alice")->pending_debits, 0);
  std::string text = book.metrics.RenderPrometheusText();
  EXPECT_NE(text.find("ledger_holds_expired_total 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("ledger_hold_sweeps_total{result=\"ok\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("ledger_hold_sweep_duration_seconds_count 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("ledger_hold_sweep_interval_seconds 3600\n"), std::string::npos) << text;
}

TEST(HoldSweeper, AFailedSweepIsLoggedWithItsCodeAndTheNextOneRetries) {
  SweeperLedger book(2);
  book.clock.Advance(absl::Minutes(2));
  book.faulty->FailAt(testing::FaultPoint::kBegin,
                      absl::UnavailableError("connection to secret-host lost"));
  HoldSweeper sweeper(*book.ledger, absl::Hours(1), book.metrics, book.Logger());
  EXPECT_EQ(sweeper.SweepOnce(), 0);
  ASSERT_EQ(book.log.size(), 1u);
  EXPECT_EQ(book.log[0], "\"event\":\"hold_sweep_failed\",\"code\":\"UNAVAILABLE\",\"retry_in_seconds\":3600");
  EXPECT_EQ(book.log[0].find("secret-host"), std::string::npos);  // never the message
  EXPECT_EQ(sweeper.SweepOnce(), 2);
  std::string text = book.metrics.RenderPrometheusText();
  EXPECT_NE(text.find("ledger_hold_sweeps_total{result=\"failed\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("ledger_holds_expired_total 2\n"), std::string::npos) << text;
}

// The thread sweeps on its own, and Stop wakes it out of its wait: with a one-hour
// interval this test would hang (and time out) if Stop waited the interval out.
TEST(HoldSweeper, TheThreadSweepsEveryIntervalAndStopWakesItAtOnce) {
  SweeperLedger book(1);
  book.clock.Advance(absl::Minutes(2));
  HoldSweeper fast(*book.ledger, absl::Milliseconds(10), book.metrics, [](const std::string&) {});
  while (book.ledger->GetHold(book.ledger->ListHolds("alice", "", 1)->at(0).id)->settled_by == std::nullopt) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  fast.Stop();
  fast.Stop();  // twice is fine
  HoldSweeper slow(*book.ledger, absl::Hours(1), book.metrics, [](const std::string&) {});
  slow.Stop();
  HoldSweeper disabled(*book.ledger, absl::ZeroDuration(), book.metrics, [](const std::string&) {});
  EXPECT_EQ(disabled.SweepOnce(), 0);
}

}  // namespace
}  // namespace ledger::server
