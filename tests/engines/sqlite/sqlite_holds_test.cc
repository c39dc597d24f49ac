// Holds in the SQLite engine beyond the shared conformance suite: migration 0002 applied
// to a database that already holds a ledger's data, the unique hold_id as the guard
// against a second settlement, and the hold reads straight on the engine (each side of
// an account, paging, lapsed holds, totals, LoadHolds in more than one statement).
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "base/status.h"
#include "engines/common/migration.h"
#include "engines/sqlite/sqlite_connection.h"
#include "engines/sqlite/sqlite_engine.h"
#include "engines/sqlite/sqlite_migrations.h"
#include "gtest/gtest.h"
#include "ledger/engine.h"
#include "ledger/ledger.h"
#include "ledger/operation.h"
#include "ledger/verify.h"
#include "tests/support/open_ledger.h"

namespace ledger {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'767'225'600);
constexpr int kHoldsMigrationVersion = 2;  // schema/sqlite/0002_holds.sql

// A raw SQLite connection of the test's own, like a second process would have.
class RawConnection {
 public:
  explicit RawConnection(const std::string& path) {
    sqlite3* raw = nullptr;
    opened_ = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr);
    database_.reset(raw);
  }
  bool ok() const { return opened_ == SQLITE_OK; }
  // SQLITE_OK, or the error with its message.
  std::string Execute(const std::string& sql) {
    char* error = nullptr;
    const int result = sqlite3_exec(database_.get(), sql.c_str(), nullptr, nullptr, &error);
    std::string answer = result == SQLITE_OK ? "ok" : (error != nullptr ? error : "error");
    sqlite3_free(error);
    return answer;
  }
  // The first column of every row, as text.
  std::vector<std::string> Column(const std::string& sql) {
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(database_.get(), sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
      return {"<prepare failed>"};
    }
    std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> statement(raw, &sqlite3_finalize);
    std::vector<std::string> values;
    while (sqlite3_step(statement.get()) == SQLITE_ROW) {
      const unsigned char* text = sqlite3_column_text(statement.get(), 0);
      values.emplace_back(text == nullptr ? "" : reinterpret_cast<const char*>(text));
    }
    return values;
  }

 private:
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> database_{nullptr, &sqlite3_close_v2};
  int opened_ = SQLITE_ERROR;
};

// Creates a database at `path` with only the migrations before `version`: the schema an
// older release left behind.
absl::Status CreateDatabaseBefore(const std::string& path, int version) {
  LEDGER_ASSIGN_OR_RETURN(
      std::unique_ptr<sqlite_internal::Connection> connection,
      sqlite_internal::Connection::Open(sqlite_internal::ConnectionSettings{.path = path}));
  LEDGER_RETURN_IF_ERROR(sqlite_internal::CreateMigrationTable(*connection));
  std::vector<Migration> older;
  for (const Migration& migration : SqliteMigrations()) {
    if (migration.version < version) older.push_back(migration);
  }
  if (older.empty()) return absl::InternalError("no migration before the holds");
  return ApplyPendingMigrations(older, {}, [&](const Migration& migration) {
    return sqlite_internal::ApplyMigrationOnce(*connection, migration);
  });
}

// Copies every row of `source` into the older schema at `target`, each table's columns
// as the older schema has them. Today's engine speaks only the newest schema, so this is
// how the test gets a version-1 database filled by a real Ledger: the rows an older
// release would have written, exactly.
std::string CopyRowsIntoOlderSchema(const std::string& source, const std::string& target) {
  RawConnection connection(target);
  if (!connection.ok()) return "cannot open the older database";
  std::string result = connection.Execute(absl::StrCat("ATTACH DATABASE '", source, "' AS source"));
  // In foreign-key order: accounts need assets, entries need accounts and transactions.
  for (const char* table : {"assets", "accounts", "transactions", "entries", "idempotency_keys",
                            "outbox_events", "webhook_events", "work_claims"}) {
    if (result != "ok") return result;
    const std::vector<std::string> columns =
        connection.Column(absl::StrCat("SELECT name FROM pragma_table_info('", table, "')"));
    if (columns.empty()) return absl::StrCat("the older schema has no table ", table);
    const std::string list = absl::StrJoin(columns, ", ");
    result = connection.Execute(absl::StrCat("INSERT INTO main.", table, " (", list, ") SELECT ",
                                             list, " FROM source.", table));
  }
  return result == "ok" ? connection.Execute("DETACH DATABASE source") : result;
}

class SqliteHoldsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    folder_ = std::filesystem::temp_directory_path() /
              absl::StrCat("ledger-sqlite-holds-test-", getpid(), "-", test->name());
    std::filesystem::remove_all(folder_);
    std::filesystem::create_directories(folder_);
    path_ = (folder_ / "ledger.db").string();
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(folder_, ignored);
  }

  static std::shared_ptr<Engine> Open(const std::string& path, bool migrate = true) {
    SqliteOptions options;
    options.path = path;
    options.migrate = migrate;
    absl::StatusOr<std::unique_ptr<Engine>> engine = OpenSqliteEngine(options);
    EXPECT_TRUE(engine.ok()) << engine.status();
    return engine.ok() ? std::shared_ptr<Engine>(*std::move(engine)) : nullptr;
  }

  // USD; issuance (may go negative), a wallet and a merchant.
  static void Seed(Engine& engine) {
    ASSERT_TRUE(engine.PutAsset({"USD", 2}).ok());
    for (Account account : {Account{.id = "issuance", .asset = "USD", .allow_negative = true},
                            Account{.id = "merchant", .asset = "USD"},
                            Account{.id = "wallet", .asset = "USD"}}) {
      account.created_at = kNow;
      ASSERT_TRUE(engine.InsertAccount(account).ok()) << account.id;
    }
  }

  // A hold of `amount` from `from` to `to`, lapsing an hour after kNow.
  static Transaction HoldTransaction(const std::string& from, const std::string& to,
                                     Amount amount) {
    Transaction transaction;
    transaction.id = NewTransactionId(kNow);
    transaction.kind = OperationKind::kHold;
    transaction.created_at = kNow;
    transaction.fingerprint = "f00d";
    transaction.hold = HoldTerms{from, to, "USD", amount, kNow + absl::Hours(1)};
    return transaction;
  }

  static Transaction Settlement(OperationKind kind, const std::string& hold_id) {
    Transaction transaction;
    transaction.id = NewTransactionId(kNow);
    transaction.kind = kind;
    transaction.created_at = kNow;
    transaction.fingerprint = kind == OperationKind::kExpire ? "" : "beef";
    transaction.hold_id = hold_id;
    return transaction;
  }

  // One storage transaction: lock the accounts `transaction` touches, add `pending`
  // (debits out of terms.from, credits into terms.to; negative releases) to the pending
  // amounts, write, commit.
  static absl::Status Write(Engine& engine, const Transaction& transaction,
                            const HoldTerms& terms, Amount pending) {
    LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<StorageTransaction> storage,
                            engine.Begin(BeginOptions{}));
    std::vector<std::string> ids = {terms.from, terms.to};
    std::sort(ids.begin(), ids.end());
    LEDGER_ASSIGN_OR_RETURN(std::vector<Account> accounts, storage->LockAccounts(ids));
    for (Account& account : accounts) {
      if (account.id == terms.from) account.pending_debits += pending;
      if (account.id == terms.to) account.pending_credits += pending;
    }
    LEDGER_RETURN_IF_ERROR(storage->WriteTransaction(transaction, accounts));
    return storage->Commit();
  }

  static Hold PendingHold(const Transaction& transaction) {
    return Hold{.id = transaction.id, .terms = *transaction.hold, .created_at = kNow};
  }

  std::filesystem::path folder_;
  std::string path_;
};

// Everything a first-release ledger could hold, through the Ledger's own submits.
void FillThroughALedger(std::shared_ptr<Engine> engine) {
  Ledger book = testing::OpenTestLedger(std::move(engine));
  ASSERT_TRUE(book.DefineAsset({"USD", 2}).ok());
  for (AccountSpec spec : {AccountSpec{.id = "issuance", .asset = "USD", .allow_negative = true},
                           AccountSpec{.id = "platform", .asset = "USD"},
                           AccountSpec{.id = "merchant", .asset = "USD"},
                           AccountSpec{.id = "wallet", .asset = "USD", .overdraft_limit = 50}}) {
    ASSERT_TRUE(book.OpenAccount(spec).ok()) << spec.id;
  }
  const std::vector<std::pair<std::string, Operation>> operations = {
      {"top-up-1", Operation::TopUp("issuance", "wallet", "USD", 10'000)},
      {"spend-1", Operation::Spend("wallet", "merchant", "USD", 2'500, Fee{"platform", 100})},
      {"transfer-1", Operation::Transfer("merchant", "wallet", "USD", 400)},
      {"payout-1", Operation::Payout("merchant", "issuance", "USD", 1'000)},
  };
  std::string transfer_id;
  for (const auto& [key, operation] : operations) {
    absl::StatusOr<Outcome> outcome =
        book.Submit(SubmitRequest{.key = key, .operation = operation});
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    ASSERT_EQ(outcome->kind, OutcomeKind::kCommitted) << OutcomeToJson(*outcome).dump();
    if (key == "transfer-1") transfer_id = outcome->transaction.id;
  }
  absl::StatusOr<Outcome> reversal =
      book.Submit(SubmitRequest{.key = "reverse-1", .operation = Operation::Reverse(transfer_id)});
  ASSERT_TRUE(reversal.ok()) << reversal.status();
  ASSERT_EQ(reversal->kind, OutcomeKind::kCommitted) << OutcomeToJson(*reversal).dump();
}

struct Contents {
  std::vector<Account> accounts;
  std::vector<Transaction> transactions;
  std::vector<KeyRecord> keys;
  std::vector<OutboxEvent> events;
};

Contents ReadContents(Engine& engine) {
  return Contents{engine.ListAccounts("", 1000).value(), engine.ListTransactions("", 1000).value(),
                  engine.ListKeyRecords(std::nullopt, 1000).value(),
                  engine.ListEvents(0, 1000).value()};
}

TEST_F(SqliteHoldsTest, MigratingAPopulatedVersionOneDatabaseKeepsItsRowsAndVerifies) {
  const std::string source_path = (folder_ / "written-by-a-ledger.db").string();
  Contents written;
  {
    std::shared_ptr<Engine> source = Open(source_path);
    ASSERT_NE(source, nullptr);
    FillThroughALedger(source);
    if (HasFatalFailure()) return;
    written = ReadContents(*source);
  }
  ASSERT_EQ(written.accounts.size(), 4u);
  ASSERT_EQ(written.transactions.size(), 5u);
  ASSERT_EQ(written.keys.size(), 5u);
  ASSERT_TRUE(CreateDatabaseBefore(path_, kHoldsMigrationVersion).ok());
  ASSERT_EQ(CopyRowsIntoOlderSchema(source_path, path_), "ok");
  {
    RawConnection older(path_);
    ASSERT_TRUE(older.ok());
    EXPECT_EQ(older.Column("SELECT version FROM schema_migrations"), std::vector<std::string>{"1"});
    EXPECT_EQ(older.Column("SELECT name FROM pragma_table_info('accounts')"
                           " WHERE name LIKE 'pending%'"),
              std::vector<std::string>{});
  }

  std::shared_ptr<Engine> engine = Open(path_, /*migrate=*/false);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->Migrate().ok());

  RawConnection migrated(path_);
  ASSERT_TRUE(migrated.ok());
  EXPECT_EQ(migrated.Column("SELECT name FROM schema_migrations ORDER BY version"),
            (std::vector<std::string>{"0001_initial", "0002_holds"}));
  absl::StatusOr<VerifyReport> report = VerifyLedger(*engine);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << report->ToText();
  EXPECT_EQ(report->accounts, 4);
  EXPECT_EQ(report->transactions, 5);
  EXPECT_EQ(report->key_records, 5);

  // The old rows read back as written: nothing pending, no hold fields, no holds.
  const Contents read = ReadContents(*engine);
  EXPECT_EQ(read.accounts, written.accounts);
  EXPECT_EQ(read.transactions, written.transactions);
  EXPECT_EQ(read.keys, written.keys);
  EXPECT_EQ(read.events, written.events);
  for (const Account& account : read.accounts) {
    EXPECT_EQ(account.pending_debits, 0) << account.id;
    EXPECT_EQ(account.pending_credits, 0) << account.id;
  }
  for (const Transaction& transaction : read.transactions) {
    EXPECT_FALSE(transaction.hold.has_value()) << transaction.id;
    EXPECT_FALSE(transaction.hold_id.has_value()) << transaction.id;
  }
  EXPECT_TRUE(engine->ListHolds("", "", 10)->empty());

  // And the migrated file takes holds: one captured, one voided, then verified again.
  Ledger book = testing::OpenTestLedger(engine);
  absl::StatusOr<Outcome> held = book.Submit(
      SubmitRequest{.key = "payout-2:hold",
                    .operation = Operation::Hold("wallet", "merchant", "USD", 700)});
  ASSERT_TRUE(held.ok()) << held.status();
  ASSERT_EQ(held->kind, OutcomeKind::kCommitted) << OutcomeToJson(*held).dump();
  absl::StatusOr<Account> wallet = book.GetAccount("wallet");
  ASSERT_TRUE(wallet.ok()) << wallet.status();
  EXPECT_EQ(wallet->pending_debits, 700);
  absl::StatusOr<Outcome> captured = book.Submit(
      SubmitRequest{.key = "payout-2:capture",
                    .operation = Operation::Capture(held->transaction.id, 300)});
  ASSERT_TRUE(captured.ok()) << captured.status();
  ASSERT_EQ(captured->kind, OutcomeKind::kCommitted) << OutcomeToJson(*captured).dump();
  absl::StatusOr<Outcome> second = book.Submit(
      SubmitRequest{.key = "payout-3:hold",
                    .operation = Operation::Hold("wallet", "merchant", "USD", 200)});
  ASSERT_TRUE(second.ok() && second->kind == OutcomeKind::kCommitted);
  absl::StatusOr<Outcome> voided = book.Submit(SubmitRequest{
      .key = "payout-3:void", .operation = Operation::Void(second->transaction.id)});
  ASSERT_TRUE(voided.ok()) << voided.status();
  ASSERT_EQ(voided->kind, OutcomeKind::kCommitted) << OutcomeToJson(*voided).dump();
  absl::StatusOr<VerifyReport> after = VerifyLedger(*engine);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_TRUE(after->ok()) << after->ToText();
  EXPECT_EQ(after->transactions, 9);
}

TEST_F(SqliteHoldsTest, SecondSettlementOfAHoldIsRetryableAndWritesNothing) {
  std::shared_ptr<Engine> engine = Open(path_);
  ASSERT_NE(engine, nullptr);
  Seed(*engine);
  const Transaction hold = HoldTransaction("wallet", "merchant", 300);
  ASSERT_TRUE(Write(*engine, hold, *hold.hold, 300).ok());
  const Transaction voided = Settlement(OperationKind::kVoid, hold.id);
  ASSERT_TRUE(Write(*engine, voided, *hold.hold, -300).ok());

  // Both guards answer the same: the hold is no longer pending, and its hold_id is taken.
  // With the holds row put back to pending, only the unique hold_id is left to stop it.
  for (bool pending_again : {false, true}) {
    if (pending_again) {
      RawConnection raw(path_);
      ASSERT_TRUE(raw.ok());
      ASSERT_EQ(raw.Execute("UPDATE holds SET status = 'pending', settled_by = NULL"), "ok");
    }
    const Transaction capture = Settlement(OperationKind::kCapture, hold.id);
    absl::Status clash = Write(*engine, capture, *hold.hold, -300);
    EXPECT_TRUE(IsRetryable(clash)) << clash;
    EXPECT_TRUE(absl::StrContains(clash.message(), "transactions.hold_id")) << clash;
    EXPECT_FALSE(engine->GetTransaction(capture.id)->has_value());
  }
  EXPECT_EQ(engine->GetAccount("wallet").value()->pending_debits, 0);
  absl::StatusOr<std::optional<Transaction>> settlement = engine->GetTransaction(voided.id);
  ASSERT_TRUE(settlement.ok()) << settlement.status();
  EXPECT_EQ(*settlement, voided);
}

TEST_F(SqliteHoldsTest, HoldReadsBackFromEveryReadAndItsSettlementReleasesIt) {
  std::shared_ptr<Engine> engine = Open(path_);
  ASSERT_NE(engine, nullptr);
  Seed(*engine);
  const Transaction hold = HoldTransaction("wallet", "merchant", 300);
  ASSERT_TRUE(Write(*engine, hold, *hold.hold, 300).ok());
  const Hold pending = PendingHold(hold);
  const absl::Time later = kNow + absl::Hours(2);  // past expires_at

  EXPECT_EQ(engine->GetHold(hold.id).value(), pending);
  EXPECT_EQ(engine->GetTransaction(hold.id).value(), hold);
  EXPECT_EQ(engine->ListTransactions("", 10).value(), std::vector<Transaction>{hold});
  EXPECT_EQ(engine->GetAccount("wallet").value()->pending_debits, 300);
  EXPECT_EQ(engine->GetAccount("merchant").value()->pending_credits, 300);
  EXPECT_FALSE(engine->CloseAccountIfZeroBalance("merchant").value());  // a hold is pending
  for (const char* account : {"wallet", "merchant", ""}) {
    EXPECT_EQ(engine->ListHolds(account, "", 10).value(), std::vector<Hold>{pending}) << account;
  }
  EXPECT_TRUE(engine->ListHolds("issuance", "", 10)->empty());
  EXPECT_TRUE(engine->ListHolds("wallet", hold.id, 10)->empty());
  EXPECT_TRUE(engine->ListLapsedHolds(kNow, 10)->empty());
  EXPECT_EQ(engine->ListLapsedHolds(later, 10).value(), std::vector<Hold>{pending});
  EXPECT_EQ(engine->HoldTotals("wallet", kNow, kNow).value(),
            (PendingHoldTotals{.reserving_since = {1, 300}}));
  EXPECT_EQ(engine->HoldTotals("wallet", kNow, kNow + absl::Seconds(1)).value(),
            (PendingHoldTotals{}));  // placed before the window
  EXPECT_EQ(engine->HoldTotals("wallet", later, kNow).value(),
            (PendingHoldTotals{.lapsed_debits = 300}));
  EXPECT_EQ(engine->HoldTotals("merchant", later, kNow).value(),
            (PendingHoldTotals{.lapsed_credits = 300}));
  {
    std::unique_ptr<StorageTransaction> storage = engine->Begin(BeginOptions{}).value();
    EXPECT_EQ(storage->LoadHolds({"missing", hold.id}).value(), std::vector<Hold>{pending});
    EXPECT_EQ(storage->LoadHoldTotals("wallet", later, kNow).value(),
              (PendingHoldTotals{.lapsed_debits = 300}));
  }

  const Transaction expired = Settlement(OperationKind::kExpire, hold.id);
  ASSERT_TRUE(Write(*engine, expired, *hold.hold, -300).ok());
  Hold settled = pending;
  settled.status = HoldStatus::kExpired;
  settled.settled_by = expired.id;
  EXPECT_EQ(engine->GetHold(hold.id).value(), settled);
  EXPECT_EQ(engine->GetTransaction(expired.id).value(), expired);
  EXPECT_TRUE(engine->ListLapsedHolds(later, 10)->empty());
  EXPECT_EQ(engine->HoldTotals("wallet", later, kNow).value(),
            (PendingHoldTotals{}));
  EXPECT_EQ(engine->GetAccount("wallet").value()->pending_debits, 0);
  EXPECT_TRUE(engine->CloseAccountIfZeroBalance("merchant").value());
}

TEST_F(SqliteHoldsTest, WriteRefusesHoldFieldsThatDoNotFitTheKindAndWritesNothing) {
  std::shared_ptr<Engine> engine = Open(path_);
  ASSERT_NE(engine, nullptr);
  Seed(*engine);
  Transaction terms_on_a_void = HoldTransaction("wallet", "merchant", 300);
  terms_on_a_void.kind = OperationKind::kVoid;
  Transaction hold_without_terms = HoldTransaction("wallet", "merchant", 300);
  hold_without_terms.hold.reset();
  Transaction transfer_naming_a_hold = Settlement(OperationKind::kTransfer, "some-hold");
  for (const Transaction& bad : {terms_on_a_void, hold_without_terms, transfer_naming_a_hold}) {
    absl::Status refused = Write(*engine, bad, HoldTerms{"wallet", "merchant"}, 0);
    EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << refused;
    EXPECT_FALSE(engine->GetTransaction(bad.id)->has_value());
  }
  EXPECT_TRUE(engine->ListHolds("", "", 10)->empty());
}

TEST_F(SqliteHoldsTest, HoldTransactionWhoseHoldsRowIsGoneReadsAsDataLoss) {
  std::shared_ptr<Engine> engine = Open(path_);
  ASSERT_NE(engine, nullptr);
  Seed(*engine);
  const Transaction hold = HoldTransaction("wallet", "merchant", 300);
  ASSERT_TRUE(Write(*engine, hold, *hold.hold, 300).ok());
  RawConnection raw(path_);  // foreign keys are off on a raw connection
  ASSERT_TRUE(raw.ok());
  ASSERT_EQ(raw.Execute("DELETE FROM holds"), "ok");
  absl::StatusOr<std::optional<Transaction>> read = engine->GetTransaction(hold.id);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss) << read.status();
  EXPECT_EQ(engine->ListTransactions("", 10).status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(SqliteHoldsTest, HoldsPageByIdOverBothSidesAndLoadInSeveralStatements) {
  std::shared_ptr<Engine> engine = Open(path_);
  ASSERT_NE(engine, nullptr);
  Seed(*engine);
  ASSERT_TRUE(
      engine->InsertAccount(Account{.id = "other", .asset = "USD", .created_at = kNow}).ok());
  // More than kHoldsPerSelectMax holds: wallet pays out of half and receives the rest.
  constexpr int kHolds = 37;
  std::vector<Hold> of_wallet;
  std::vector<std::string> ids;
  for (int i = 0; i < kHolds; ++i) {
    const Transaction hold = i % 2 == 0 ? HoldTransaction("wallet", "merchant", 10 + i)
                                        : HoldTransaction("other", "wallet", 10 + i);
    ASSERT_TRUE(Write(*engine, hold, *hold.hold, hold.hold->amount).ok());
    of_wallet.push_back(PendingHold(hold));
    ids.push_back(hold.id);
  }
  const Transaction unrelated = HoldTransaction("other", "merchant", 5);
  ASSERT_TRUE(Write(*engine, unrelated, *unrelated.hold, 5).ok());
  auto by_id = [](const Hold& a, const Hold& b) { return a.id < b.id; };
  std::sort(of_wallet.begin(), of_wallet.end(), by_id);

  std::vector<Hold> paged;
  std::string after;
  while (true) {
    absl::StatusOr<std::vector<Hold>> page = engine->ListHolds("wallet", after, 5);
    ASSERT_TRUE(page.ok()) << page.status();
    if (page->empty()) break;
    EXPECT_LE(page->size(), 5u);
    paged.insert(paged.end(), page->begin(), page->end());
    after = page->back().id;
  }
  EXPECT_EQ(paged, of_wallet);
  EXPECT_EQ(engine->ListHolds("", "", 100)->size(), static_cast<size_t>(kHolds + 1));

  std::unique_ptr<StorageTransaction> storage = engine->Begin(BeginOptions{}).value();
  absl::StatusOr<std::vector<Hold>> loaded = storage->LoadHolds(ids);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  std::sort(loaded->begin(), loaded->end(), by_id);
  EXPECT_EQ(*loaded, of_wallet);
}

TEST_F(SqliteHoldsTest, SchemaRefusesNegativePendingAmountsAndInconsistentHolds) {
  std::shared_ptr<Engine> engine = Open(path_);
  ASSERT_NE(engine, nullptr);
  Seed(*engine);
  const Transaction hold = HoldTransaction("wallet", "merchant", 300);
  ASSERT_TRUE(Write(*engine, hold, *hold.hold, 300).ok());
  RawConnection raw(path_);
  ASSERT_TRUE(raw.ok());
  EXPECT_NE(raw.Execute("UPDATE accounts SET pending_debits = -1 WHERE id = 'wallet'"), "ok");
  EXPECT_NE(raw.Execute("UPDATE accounts SET pending_credits = -1 WHERE id = 'merchant'"), "ok");
  EXPECT_NE(raw.Execute("UPDATE holds SET status = 'captured'"), "ok");  // settled by nothing
  EXPECT_NE(raw.Execute("UPDATE holds SET status = 'lost'"), "ok");
  EXPECT_NE(raw.Execute("UPDATE holds SET amount = 0"), "ok");
}

}  // namespace
}  // namespace ledger
