// Parsing, validation and payloads of operations: no engine involved.
#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "gtest/gtest.h"
#include "idempotency/fingerprint.h"
#include "ledger/amount.h"
#include "ledger/operation.h"
#include "ledger/outcome.h"
#include "ledger/transaction.h"

namespace ledger {
namespace {

TEST(ParseAmount, AcceptsCanonicalIntegersOnly) {
  EXPECT_EQ(*ParseAmount("1500"), 1500);
  EXPECT_EQ(*ParseAmount("-20"), -20);
  EXPECT_EQ(*ParseAmount("9223372036854775807"), INT64_MAX);
  for (const char* bad : {"", "-", "+1", "01", "1.5", " 1", "1e3", "9223372036854775808", "abc"}) {
    EXPECT_EQ(ParseAmount(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(FormatMajorUnits, PlacesTheDecimalPointByScale) {
  EXPECT_EQ(FormatMajorUnits(-1234, 2), "-12.34");
  EXPECT_EQ(FormatMajorUnits(5, 2), "0.05");
  EXPECT_EQ(FormatMajorUnits(42, 0), "42");
}

// Issue 30: one key space for every entry point only holds if every door fingerprints
// an operation alike. The CLI (JSON, or flags made into JSON) and HTTP both parse the
// JSON form; C++ callers build the Operation: the fingerprint is the same whichever,
// and whatever the member order, whitespace, or amounts as strings or integers.
TEST(OperationPayload, TheSameOperationHasOneFingerprintWhicheverDoorBuiltIt) {
  Operation top_up = Operation::TopUp("issuance", "alice", "USD", 500);
  top_up.metadata = {{"order", "A-1"}, {"lines", {1, 2}}, {"note", "caf\u00e9"}};
  Operation spend = Operation::Spend("alice", "creator", "USD", 100, Fee{"platform", 10});
  const std::vector<std::pair<Operation, std::vector<std::string>>> cases = {
      {top_up,
       {R"({"kind":"top_up","from":"issuance","to":"alice","asset":"USD","amount":"500",)"
        R"("metadata":{"order":"A-1","lines":[1,2],"note":"caf\u00e9"}})",
        R"({ "metadata": {"note": "café", "lines": [1, 2], "order": "A-1"}, "amount": 500,)"
        R"( "asset": "USD", "to": "alice", "from": "issuance", "kind": "top_up" })"}},
      {Operation::Transfer("alice", "bob", "USD", 250),
       {R"({"kind":"transfer","from":"alice","to":"bob","asset":"USD","amount":"250"})",
        R"({"kind":"transfer","from":"alice","to":"bob","asset":"USD","amount":250,"metadata":{}})"}},
      {spend,
       {R"({"kind":"spend","from":"alice","to":"creator","asset":"USD","amount":"100",)"
        R"("fee":{"to":"platform","amount":"10"}})"}},
      {Operation::Post({{"alice", "USD", -30}, {"bob", "USD", 30}}),
       {R"({"kind":"post","postings":[{"account":"alice","asset":"USD","amount":"-30"},)"
        R"({"account":"bob","asset":"USD","amount":30}]})"}},
      {Operation::Hold("alice", "bob", "USD", 250),
       {R"({"kind":"hold","from":"alice","to":"bob","asset":"USD","amount":"250"})"}},
      {Operation::Capture("h-1", 5), {R"({"kind":"capture","hold_id":"h-1","amount":"5"})"}},
      {Operation::Void("h-1"), {R"({"kind":"void","hold_id":"h-1"})"}},
      {Operation::Reverse("t-1"), {R"({"kind":"reverse","transaction_id":"t-1"})"}}};
  for (const auto& [built, texts] : cases) {
    absl::StatusOr<std::string> expected = Fingerprint(OperationPayload(built));
    ASSERT_TRUE(expected.ok()) << expected.status();
    for (const std::string& text : texts) {
      absl::StatusOr<Operation> parsed = ParseOperationJson(text);
      ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status();
      EXPECT_EQ(*Fingerprint(OperationPayload(*parsed)), *expected) << text;
    }
  }
}

TEST(ParseOperationJson, ReadsEveryKind) {
  absl::StatusOr<Operation> spend = ParseOperationJson(
      R"({"kind":"spend","asset":"CREDITS","from":"a","to":"b","amount":"100",)"
      R"("fee":{"to":"p","amount":10},"metadata":{"order":"x"}})");
  ASSERT_TRUE(spend.ok()) << spend.status();
  EXPECT_EQ(spend->kind, OperationKind::kSpend);
  EXPECT_EQ(spend->fee->amount, 10);
  EXPECT_TRUE(ValidateOperation(*spend).ok());

  absl::StatusOr<Operation> post = ParseOperationJson(
      R"({"kind":"post","postings":[{"account":"a","asset":"USD","amount":"-5"},)"
      R"({"account":"b","asset":"USD","amount":"5"}]})");
  ASSERT_TRUE(post.ok()) << post.status();
  EXPECT_EQ(post->postings.size(), 2u);
  EXPECT_TRUE(ParseOperationJson(R"({"kind":"reverse","transaction_id":"t"})").ok());
}

TEST(ParseOperationJson, ReadsHoldsAndTheirSettlements) {
  absl::StatusOr<Operation> hold = ParseOperationJson(
      R"({"kind":"hold","asset":"CREDITS","from":"a","to":"b","amount":"70",)"
      R"("expires_at":"2026-12-01T12:00:00Z"})");
  ASSERT_TRUE(hold.ok()) << hold.status();
  EXPECT_EQ(hold->kind, OperationKind::kHold);
  EXPECT_EQ(hold->expires_at, absl::FromUnixSeconds(1'796'126'400));
  EXPECT_TRUE(ValidateOperation(*hold).ok());
  absl::StatusOr<Operation> timed = ParseOperationJson(
      R"({"kind":"hold","asset":"CREDITS","from":"a","to":"b","amount":70,"timeout_seconds":300})");
  ASSERT_TRUE(timed.ok()) << timed.status();
  EXPECT_EQ(timed->timeout, absl::Seconds(300));

  absl::StatusOr<Operation> capture = ParseOperationJson(R"({"kind":"capture","hold_id":"h","amount":"5"})");
  ASSERT_TRUE(capture.ok()) << capture.status();
  EXPECT_EQ(capture->capture_amount, 5);
  absl::StatusOr<Operation> whole = ParseOperationJson(R"({"kind":"capture","hold_id":"h"})");
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->capture_amount, std::nullopt);
  // Capturing all and capturing an explicit amount are different payloads.
  EXPECT_NE(*Fingerprint(OperationPayload(*capture)), *Fingerprint(OperationPayload(*whole)));
  absl::StatusOr<Operation> voided = ParseOperationJson(R"({"kind":"void","hold_id":"h"})");
  ASSERT_TRUE(voided.ok()) << voided.status();
  EXPECT_TRUE(ValidateOperation(*voided).ok());

  for (const Operation& op : {*hold, *timed, *capture, *whole, *voided}) {
    absl::StatusOr<Operation> round_trip = OperationFromJson(OperationPayload(op));
    ASSERT_TRUE(round_trip.ok()) << round_trip.status();
    EXPECT_EQ(*Fingerprint(OperationPayload(*round_trip)), *Fingerprint(OperationPayload(op)));
  }
}

TEST(ValidateOperation, HoldsTakeOnlyTheirOwnFields) {
  struct Case {
    const char* json;
    const char* message_part;
  };
  for (const Case& c : std::initializer_list<Case>{
           {R"({"kind":"void","hold_id":"h","amount":"5"})", "unknown field \"amount\""},
           {R"({"kind":"capture","hold_id":"h","amount":"0"})", "must be positive"},
           {R"({"kind":"capture","hold_id":"h","amount":"-1"})", "must be positive"},
           {R"({"kind":"capture","amount":"1"})", "missing field \"hold_id\""},
           {R"({"kind":"hold","asset":"CREDITS","from":"a","to":"b","amount":"1","fee":{}})",
            "unknown field \"fee\""},
           {R"({"kind":"hold","asset":"CREDITS","from":"a","to":"b","amount":"1","expires_at":"soon"})",
            "RFC 3339"},
           {R"({"kind":"hold","asset":"CREDITS","from":"a","to":"b","amount":"1","timeout_seconds":0})",
            "timeout_seconds"},
           {R"({"kind":"hold","asset":"CREDITS","from":"a","to":"b","amount":"1","timeout_seconds":"9"})",
            "integer number of seconds"},
           {R"({"kind":"hold","asset":"CREDITS","from":"a","to":"b","amount":"1","timeout_seconds":60,)"
            R"("expires_at":"2026-12-01T12:00:00Z"})",
            "not both"},
           {R"({"kind":"transfer","asset":"CREDITS","from":"a","to":"b","amount":"1","timeout_seconds":60})",
            "unknown field \"timeout_seconds\""},
           {R"({"kind":"expire","hold_id":"h"})", "not submitted"},
       }) {
    absl::StatusOr<Operation> parsed = ParseOperationJson(c.json);
    absl::Status status = parsed.ok() ? ValidateOperation(*parsed) : parsed.status();
    ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.json;
    EXPECT_NE(status.message().find(c.message_part), std::string::npos) << c.json << " -> " << status;
  }
}

TEST(ParseOperationJson, RejectsUnknownFieldsWrongTypesAndMalformedJson) {
  struct Case {
    const char* json;
    const char* message_part;
  };
  for (const Case& c : std::initializer_list<Case>{
           {R"({"kind":"transfer","asset":"USD","from":"a","to":"b","amount":"1","memo":"x"})",
            "unknown field \"memo\""},
           {R"({"kind":"transfer","asset":"USD","from":"a","to":"b","amount":1.5})", "integer"},
           {R"({"kind":"transfer","asset":"USD","from":"a","to":"b"})", "missing field \"amount\""},
           {R"({"kind":"refund"})", "unknown operation kind"},
           {R"({"kind":"transfer",)", "malformed JSON"},
           {R"({"kind":"transfer","kind":"post"})", "duplicate member name"},
           {R"([1,2])", "must be a JSON object"},
           {R"({"kind":"transfer","asset":"USD","from":"a","to":"b","amount":"1","metadata":[]})",
            "metadata"},
       }) {
    absl::StatusOr<Operation> parsed = ParseOperationJson(c.json);
    ASSERT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << c.json;
    EXPECT_NE(parsed.status().message().find(c.message_part), std::string::npos)
        << c.json << " -> " << parsed.status();
  }
}

TEST(OperationPayload, RoundTripsThroughJsonWithTheSameFingerprint) {
  Operation op = Operation::Spend("a", "b", "CREDITS", 100, Fee{"p", 10});
  op.metadata = {{"z", 1}, {"a", "x"}};
  nlohmann::json payload = OperationPayload(op);
  absl::StatusOr<Operation> parsed = OperationFromJson(payload);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*Fingerprint(OperationPayload(*parsed)), *Fingerprint(payload));
  EXPECT_EQ(payload["amount"], "100");  // amounts as decimal strings
}

TEST(OperationPayload, DiffersWhenAnyBusinessFieldDiffers) {
  Operation base = Operation::Transfer("a", "b", "USD", 100);
  std::string fingerprint = *Fingerprint(OperationPayload(base));
  Operation other_amount = Operation::Transfer("a", "b", "USD", 101);
  Operation other_kind = Operation::Payout("a", "b", "USD", 100);
  Operation other_metadata = base;
  other_metadata.metadata = {{"k", "v"}};
  for (const Operation& op : {other_amount, other_kind, other_metadata}) {
    EXPECT_NE(*Fingerprint(OperationPayload(op)), fingerprint);
  }
}

TEST(PostingsOf, SpendWithFeeHasThreeLegsThatBalance) {
  std::vector<Posting> postings =
      PostingsOf(Operation::Spend("wallet", "creator", "CREDITS", 100, Fee{"platform", 20}));
  ASSERT_EQ(postings.size(), 3u);
  EXPECT_EQ(postings[0], (Posting{"wallet", "CREDITS", -100}));
  EXPECT_EQ(postings[1], (Posting{"creator", "CREDITS", 80}));
  EXPECT_EQ(postings[2], (Posting{"platform", "CREDITS", 20}));
}

TEST(NewTransactionId, IsTimeOrderedUuidVersion7) {
  std::string earlier = NewTransactionId(absl::FromUnixMillis(1'000));
  std::string later = NewTransactionId(absl::FromUnixMillis(2'000));
  EXPECT_LT(earlier, later);
  EXPECT_EQ(earlier.size(), 36u);
  EXPECT_EQ(earlier[14], '7');
}

// The RFC 9562 text form: lowercase hex in 8-4-4-4-12, the Unix milliseconds first,
// then the version and the variant.
TEST(NewTransactionId, IsLowercaseHexGroupedWithTheMillisecondsFirst) {
  const std::string id = NewTransactionId(absl::FromUnixMillis(0x0123456789ab));
  ASSERT_EQ(id.size(), 36u);
  EXPECT_EQ(id.substr(0, 15), "01234567-89ab-7");
  for (size_t i = 0; i < id.size(); ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      EXPECT_EQ(id[i], '-') << id;
    } else {
      EXPECT_TRUE(absl::ascii_isdigit(id[i]) || (id[i] >= 'a' && id[i] <= 'f')) << id;
    }
  }
  EXPECT_NE(std::string("89ab").find(id[19]), std::string::npos) << id;
  EXPECT_NE(NewTransactionId(absl::FromUnixMillis(0x0123456789ab)), id);  // random bits
}

// The random bits come from a per-thread block of CSPRNG output: ids in the same
// millisecond across many blocks are all distinct.
TEST(NewTransactionId, IdsOfOneMillisecondAreDistinctAcrossRandomBlocks) {
  std::set<std::string> ids;
  for (int i = 0; i < 1000; ++i) ids.insert(NewTransactionId(absl::FromUnixMillis(7)));
  EXPECT_EQ(ids.size(), 1000u);
}

// A forked child does not hand out the random bytes its parent drew before the fork (the
// parent's next id in the same millisecond would be the child's).
TEST(NewTransactionId, AForkedChildDrawsItsOwnRandomBits) {
  const absl::Time now = absl::FromUnixMillis(1'764'190'000'000);
  (void)NewTransactionId(now);  // the parent draws its block
  int pipe_ends[2];
  ASSERT_EQ(pipe(pipe_ends), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const std::string id = NewTransactionId(now);
    const bool written = write(pipe_ends[1], id.data(), id.size()) == static_cast<ssize_t>(id.size());
    _exit(written ? 0 : 1);
  }
  close(pipe_ends[1]);
  const std::string parent_id = NewTransactionId(now);
  std::string child_id(36, '\0');
  size_t read_bytes = 0;
  while (read_bytes < child_id.size()) {
    const ssize_t n = read(pipe_ends[0], child_id.data() + read_bytes, child_id.size() - read_bytes);
    if (n <= 0) break;
    read_bytes += static_cast<size_t>(n);
  }
  close(pipe_ends[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_EQ(read_bytes, child_id.size());
  EXPECT_NE(child_id, parent_id);
}

// The names are the wire format (JSON, the CLI, the idempotency namespace of keys):
// each value has its own, and parsing a name gives the value back.
TEST(EnumNames, EveryOperationKindHasADistinctNameThatParsesBack) {
  std::set<std::string> names;
  for (int value = 0; value <= static_cast<int>(OperationKind::kExpire); ++value) {
    auto kind = static_cast<OperationKind>(value);
    std::string name(OperationKindName(kind));
    EXPECT_NE(name, "unknown") << value;
    EXPECT_TRUE(names.insert(name).second) << name;
    absl::StatusOr<OperationKind> parsed = ParseOperationKind(name);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, kind);
  }
  EXPECT_EQ(OperationKindName(OperationKind::kTopUp), "top_up");
  EXPECT_EQ(ParseOperationKind("refund").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(EnumNames, OutcomesAndRejectionReasonsHaveDistinctNames) {
  std::set<std::string> outcomes;
  for (int value = 0; value <= static_cast<int>(OutcomeKind::kFaulted); ++value) {
    std::string name(OutcomeKindName(static_cast<OutcomeKind>(value)));
    EXPECT_NE(name, "unknown") << value;
    EXPECT_TRUE(outcomes.insert(name).second) << name;
  }
  std::set<std::string> reasons;
  for (int value = 0; value <= static_cast<int>(RejectionReason::kBatchItemFailed);
       ++value) {
    std::string name(RejectionReasonName(static_cast<RejectionReason>(value)));
    EXPECT_NE(name, "unknown") << value;
    EXPECT_TRUE(reasons.insert(name).second) << name;
  }
  EXPECT_EQ(OutcomeKindName(OutcomeKind::kDuplicate), "duplicate");
  EXPECT_EQ(RejectionReasonName(RejectionReason::kInsufficientFunds), "insufficient_funds");
}

}  // namespace
}  // namespace ledger
