// Issue 29: a submit's writes and its COMMIT travel in one round trip (libpq pipeline
// mode, engines/postgres/postgres_pipelined_commit.h). The round trips are counted on
// the wire (the relay ledger_load --count-round-trips uses); a write the server finds
// short is refused before the COMMIT behind it can run; a session cut after the write
// ran, while COMMIT's answer is awaited, is in doubt. Both claim modes.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "base/clock.h"
#include "base/status.h"
#include "bench/load/round_trip_relay.h"
#include "engines/postgres/postgres_engine.h"
#include "ledger/json.h"
#include "ledger/ledger.h"
#include "ledger/verify.h"
#include "tests/conformance/conformance_context.h"
#include "tests/engines/postgres/postgres_test_database.h"
#include "tests/support/open_ledger.h"

namespace ledger {
namespace testing {
namespace {

constexpr char kAsset[] = "CREDITS";

// Everything a submit could write, to prove a path wrote nothing.
struct Written {
  std::vector<Account> accounts;
  std::vector<Transaction> transactions;
  std::vector<KeyRecord> keys;
  std::vector<OutboxEvent> events;
  friend bool operator==(const Written&, const Written&) = default;
};

class PostgresPipelinedCommitTest : public ::testing::TestWithParam<PostgresClaimMode> {
 protected:
  void SetUp() override {
    if (std::string reason = PostgresUnavailableReason(); !reason.empty()) {
      if (RunningInCi()) GTEST_FAIL() << "postgres is required under CI=true: " << reason;
      GTEST_SKIP() << "postgres skipped: " << reason;
    }
  }

  // A fresh database, its engine on `connection` (the test database's own when empty),
  // and accounts alice (funded with 1000) and bob.
  void OpenLedger(const std::string& connection = "") {
    absl::StatusOr<std::unique_ptr<Engine>> fresh = OpenFreshPostgresEngine(GetParam(), 4);
    ASSERT_TRUE(fresh.ok()) << fresh.status();
    if (connection.empty()) {
      engine_ = std::move(*fresh);
    } else {
      fresh->reset();
      PostgresOptions options;
      options.connection = connection;
      options.claim_mode = GetParam();
      options.pool_size = 4;
      absl::StatusOr<std::unique_ptr<Engine>> relayed = OpenPostgresEngine(options);
      ASSERT_TRUE(relayed.ok()) << relayed.status();
      engine_ = std::move(*relayed);
    }
    ledger_ = std::make_unique<Ledger>(OpenTestLedger(engine_, {.clock = &clock_}));
    ASSERT_TRUE(ledger_->DefineAsset({kAsset, 0}).ok());
    ASSERT_TRUE(
        ledger_->OpenAccount({.id = "issuance", .asset = kAsset, .allow_negative = true}).ok());
    for (const char* id : {"alice", "bob"}) {
      ASSERT_TRUE(ledger_->OpenAccount({.id = id, .asset = kAsset}).ok());
    }
    ExpectCommitted(Submit("fund-alice", Operation::TopUp("issuance", "alice", kAsset, 1000)));
  }

  absl::StatusOr<Outcome> Submit(const std::string& key, const Operation& operation) {
    return ledger_->Submit(SubmitRequest{key, {}, operation, {}});
  }

  static void ExpectCommitted(const absl::StatusOr<Outcome>& outcome) {
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    EXPECT_EQ(outcome->kind, OutcomeKind::kCommitted) << OutcomeToJson(*outcome).dump();
  }

  Amount BalanceOf(const std::string& id) {
    absl::StatusOr<Account> account = ledger_->GetAccount(id);
    EXPECT_TRUE(account.ok()) << account.status();
    return account.ok() ? account->balance : 0;
  }

  Written TakeWritten() {
    return Written{engine_->ListAccounts("", 10'000).value(),
                   engine_->ListTransactions("", 10'000).value(),
                   engine_->ListKeyRecords(std::nullopt, 10'000).value(),
                   engine_->ListEvents(0, 10'000).value()};
  }

  void ExpectVerified() {
    absl::StatusOr<VerifyReport> report = VerifyLedger(*engine_);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_TRUE(report->ok()) << report->ToText();
  }

  ManualClock clock_;
  std::shared_ptr<Engine> engine_;
  std::unique_ptr<Ledger> ledger_;
};

INSTANTIATE_TEST_SUITE_P(ClaimModes, PostgresPipelinedCommitTest,
                         ::testing::Values(PostgresClaimMode::kAdvisoryLock, PostgresClaimMode::kRow),
                         [](const ::testing::TestParamInfo<PostgresClaimMode>& info) {
                           return info.param == PostgresClaimMode::kRow ? "row" : "advisory";
                         });

// "postgresql://user@127.0.0.1:5432/db?x" with the port replaced; empty when the test
// database's URL names no 127.0.0.1 port (the relay needs one).
std::string WithPort(const std::string& url, int port) {
  const std::string host = "@127.0.0.1:";
  const size_t at = url.find(host);
  if (at == std::string::npos) return "";
  const size_t start = at + host.size();
  size_t end = start;
  while (end < url.size() && std::isdigit(static_cast<unsigned char>(url[end]))) ++end;
  if (end == start) return "";
  return absl::StrCat(url.substr(0, start), port, url.substr(end));
}

// Counted on the wire: the claim (BEGIN with it), the account locks, and the writes
// with COMMIT. Four before issue 29 (the writes and COMMIT apart). The first submit of
// a session also carries the checked statement's Parse, in the same round trip.
TEST_P(PostgresPipelinedCommitTest, ATransferCostsThreeRoundTripsItsWritesAndCommitOne) {
  absl::StatusOr<std::string> url = PostgresTestDsn();
  ASSERT_TRUE(url.ok()) << url.status();
  const size_t at = url->find("@127.0.0.1:");
  ASSERT_NE(at, std::string::npos) << "the relay needs a 127.0.0.1 URL: " << *url;
  const int server_port = std::stoi(url->substr(at + 11));
  absl::StatusOr<std::unique_ptr<load::RoundTripRelay>> relay =
      load::RoundTripRelay::Start("127.0.0.1", server_port);
  ASSERT_TRUE(relay.ok()) << relay.status();
  const std::string relayed = WithPort(*url, (*relay)->port());
  ASSERT_FALSE(relayed.empty()) << *url;
  ASSERT_NO_FATAL_FAILURE(OpenLedger(relayed));

  for (int transfer = 0; transfer < 3; ++transfer) {
    const int64_t before = (*relay)->round_trips();
    ExpectCommitted(Submit(absl::StrCat("transfer-", transfer),
                           Operation::Transfer("alice", "bob", kAsset, 10)));
    EXPECT_EQ((*relay)->round_trips() - before, 3) << "transfer " << transfer;
  }
  EXPECT_EQ(BalanceOf("bob"), 30);
  ExpectVerified();
}

// The write finds alice's row at another version than her lock read (changed in the
// same transaction, past the ledger), so it updates one account of two. The server's
// check refuses the write, the pipeline aborts before COMMIT, and nothing of the
// transaction is committed: no entry, no transaction, the key unused (a submit with it
// then posts once).
TEST_P(PostgresPipelinedCommitTest, AShortWriteIsRefusedBeforeItsCommitAndWritesNothing) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger());
  const Written before = TakeWritten();
  const KeyIdentity identity{.key_namespace = std::string(kDefaultKeyNamespace),
                             .scope = Scope{},
                             .key = "short"};
  absl::StatusOr<std::unique_ptr<StorageTransaction>> storage = engine_->Begin({});
  ASSERT_TRUE(storage.ok()) << storage.status();
  absl::StatusOr<std::optional<KeyRecord>> claimed = (*storage)->ClaimKey(identity);
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  ASSERT_FALSE(claimed->has_value());
  absl::StatusOr<std::vector<Account>> locked = (*storage)->LockAccounts({"alice", "bob"});
  ASSERT_TRUE(locked.ok()) << locked.status();
  ASSERT_TRUE((*storage)
                  ->RunCallerSql("UPDATE accounts SET version = version + 1 WHERE id = 'alice'", {})
                  .ok());
  Transaction transaction;
  transaction.id = NewTransactionId(clock_.Now());
  transaction.kind = OperationKind::kTransfer;
  transaction.created_at = clock_.Now();
  transaction.fingerprint = "fingerprint-short";
  std::vector<Account> updated = *locked;
  for (Account& account : updated) {
    const Amount amount = account.id == "alice" ? -10 : 10;
    account.balance += amount;
    account.version += 1;
    transaction.entries.push_back({account.id, kAsset, amount, account.balance, account.version});
  }
  ASSERT_TRUE((*storage)->WriteTransaction(transaction, updated).ok());
  ASSERT_TRUE((*storage)
                  ->RecordKey({.identity = identity,
                               .fingerprint = "fingerprint-short",
                               .transaction_id = transaction.id,
                               .created_at = clock_.Now(),
                               .expires_at = clock_.Now() + absl::Hours(1)})
                  .ok());
  absl::Status committed = (*storage)->Commit();
  EXPECT_EQ(committed.code(), absl::StatusCode::kInternal) << committed;
  EXPECT_NE(committed.message().find("1/2 accounts"), std::string::npos) << committed;
  EXPECT_FALSE(IsInDoubt(committed)) << committed;
  (*storage)->Rollback();
  storage->reset();

  EXPECT_EQ(TakeWritten(), before);
  absl::StatusOr<std::optional<KeyRecord>> record = engine_->GetKeyRecord(identity);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_FALSE(record->has_value());
  ExpectCommitted(Submit("short", Operation::Transfer("alice", "bob", kAsset, 10)));
  EXPECT_EQ(BalanceOf("bob"), 10);
  ExpectVerified();
}

// The session ends after the write ran, while COMMIT runs (a deferred trigger
// terminates its own backend inside COMMIT, before the commit record): the submit is in
// doubt, nothing was committed, and the resend commits once.
TEST_P(PostgresPipelinedCommitTest, ASessionCutWhileCommitRunsIsInDoubtAndTheResendCommitsOnce) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger());
  ASSERT_TRUE(QueryPostgresValue(R"sql(
    CREATE FUNCTION end_own_session() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_terminate_backend(pg_backend_pid());
      PERFORM pg_sleep(30);  -- the termination lands here, inside COMMIT
      RETURN NULL;
    END $$;
    CREATE CONSTRAINT TRIGGER end_session_at_commit AFTER INSERT ON outbox_events
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION end_own_session())sql")
                  .ok());
  const Written before = TakeWritten();
  const Operation transfer = Operation::Transfer("alice", "bob", kAsset, 40);
  absl::StatusOr<Outcome> first = Submit("cut-at-commit", transfer);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->kind, OutcomeKind::kFaulted) << OutcomeToJson(*first).dump();
  EXPECT_TRUE(first->in_doubt) << OutcomeToJson(*first).dump();
  EXPECT_TRUE(IsInDoubt(first->fault)) << first->fault;
  EXPECT_EQ(TakeWritten(), before);

  ASSERT_TRUE(QueryPostgresValue("DROP TRIGGER end_session_at_commit ON outbox_events").ok());
  ExpectCommitted(Submit("cut-at-commit", transfer));
  absl::StatusOr<Outcome> again = Submit("cut-at-commit", transfer);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->kind, OutcomeKind::kDuplicate);
  EXPECT_EQ(BalanceOf("bob"), 40);
  ExpectVerified();
}

}  // namespace
}  // namespace testing
}  // namespace ledger
