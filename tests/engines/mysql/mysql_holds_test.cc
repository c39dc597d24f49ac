// Holds on the MySQL engine beyond the shared conformance suite: migration 0003 on a
// database that already holds a ledger (and on one where an earlier run of it was cut
// short), the engine's hold rows through every read, and a second settlement of a hold
// failing on the unique hold_id as a retryable error. Each test gets scratch databases of
// its own on the server named by LEDGER_TEST_MYSQL_DSN.
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/status.h"
#include "engines/common/migration.h"
#include "engines/mysql/mysql_connection.h"
#include "engines/mysql/mysql_engine.h"
#include "engines/mysql/mysql_migrations.h"
#include "gtest/gtest.h"
#include "ledger/engine.h"
#include "ledger/hold.h"
#include "ledger/ledger.h"
#include "ledger/operation.h"
#include "ledger/transaction.h"
#include "ledger/verify.h"
#include "tests/conformance/conformance_context.h"
#include "tests/engines/mysql/mysql_test_server.h"
#include "tests/support/open_ledger.h"

namespace ledger::testing {
namespace {

// schema/mysql/0003_holds.sql.
constexpr int kHoldsMigrationVersion = 3;

const absl::Time kStart = absl::FromUnixSeconds(1'767'225'600);  // 2026-01-01

std::vector<Migration> MigrationsBefore(int version) {
  std::vector<Migration> older;
  for (const Migration& migration : MysqlMigrations()) {
    if (migration.version < version) older.push_back(migration);
  }
  return older;
}

std::optional<Migration> HoldsMigration() {
  for (const Migration& migration : MysqlMigrations()) {
    if (migration.version == kHoldsMigrationVersion) return migration;
  }
  return std::nullopt;
}

class MysqlHoldsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string reason = MysqlUnavailableReason(); !reason.empty()) {
      if (RunningInCi()) FAIL() << "mysql is required under CI=true: " << reason;
      GTEST_SKIP() << "mysql skipped: " << reason;
    }
    absl::StatusOr<std::unique_ptr<MysqlTestServer>> server =
        MysqlTestServer::Connect(MysqlTestDsn());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  void TearDown() override {
    for (const std::string& database : databases_) {
      EXPECT_TRUE(server_->DropDatabase(database).ok());
    }
  }

  // A new empty database of this test; returns its name. Its DSN: server_->DsnFor(name).
  std::string Scratch(std::string_view purpose) {
    std::string name = ScratchDatabaseName(server_->base_database(), purpose);
    absl::StatusOr<std::string> dsn = server_->RecreateDatabase(name);
    EXPECT_TRUE(dsn.ok()) << dsn.status();
    databases_.push_back(name);
    return name;
  }

  std::shared_ptr<Engine> Open(const std::string& database, bool migrate = true) {
    MysqlOptions options;
    options.connection = server_->DsnFor(database);
    options.pool_size = 4;
    options.migrate = migrate;
    absl::StatusOr<std::unique_ptr<Engine>> engine = OpenMysqlEngine(options);
    EXPECT_TRUE(engine.ok()) << engine.status();
    return engine.ok() ? std::shared_ptr<Engine>(*std::move(engine)) : nullptr;
  }

  // Applies the migrations before 0003 to `database` through the engine's own runner.
  std::unique_ptr<mysql_internal::MysqlConnection> MigrateBeforeHolds(
      const std::string& database) {
    absl::StatusOr<mysql_internal::MysqlSettings> settings =
        mysql_internal::ParseMysqlUrl(server_->DsnFor(database));
    EXPECT_TRUE(settings.ok()) << settings.status();
    if (!settings.ok()) return nullptr;
    absl::StatusOr<std::unique_ptr<mysql_internal::MysqlConnection>> connection =
        mysql_internal::MysqlConnection::Open(*settings);
    EXPECT_TRUE(connection.ok()) << connection.status();
    if (!connection.ok()) return nullptr;
    absl::Status migrated = mysql_internal::MigrateDatabase(
        **connection, MigrationsBefore(kHoldsMigrationVersion));
    EXPECT_TRUE(migrated.ok()) << migrated;
    return *std::move(connection);
  }

  std::string Text(const std::string& sql) {
    absl::StatusOr<std::string> text = server_->QueryText(sql);
    EXPECT_TRUE(text.ok()) << text.status();
    return text.ok() ? *text : "";
  }

  // Copies every row of `table` from one database into another, in the columns the
  // target's table has (an older schema's), `order` first.
  void CopyRows(const std::string& from, const std::string& to, const std::string& table,
                const std::string& order = "") {
    const std::string columns = Text(absl::StrCat(
        "SELECT GROUP_CONCAT(CONCAT('`', COLUMN_NAME, '`') ORDER BY ORDINAL_POSITION)"
        " FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '", to, "' AND TABLE_NAME = '",
        table, "'"));
    ASSERT_FALSE(columns.empty()) << table;
    absl::Status copied = server_->Execute(absl::StrCat(
        "INSERT INTO `", to, "`.", table, " (", columns, ") SELECT ", columns, " FROM `", from,
        "`.", table, order.empty() ? "" : " ORDER BY ", order));
    ASSERT_TRUE(copied.ok()) << copied;
  }

  std::unique_ptr<MysqlTestServer> server_;
  std::vector<std::string> databases_;
};

// ------------------------------------------------------------ migrating a populated database

void Commit(Ledger& ledger, const std::string& key, const Operation& operation,
            std::string* transaction_id = nullptr) {
  absl::StatusOr<Outcome> outcome = ledger.Submit(SubmitRequest{key, {}, operation, {}});
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  ASSERT_EQ(outcome->kind, OutcomeKind::kCommitted) << OutcomeToJson(*outcome).dump();
  if (transaction_id != nullptr) *transaction_id = outcome->transaction.id;
}

// A ledger with every operation kind before holds, written through a Ledger.
void WriteLedgerBeforeHolds(Ledger& ledger) {
  ASSERT_TRUE(ledger.DefineAsset({"CREDITS", 0}).ok());
  ASSERT_TRUE(
      ledger.OpenAccount({.id = "issuance", .asset = "CREDITS", .allow_negative = true}).ok());
  ASSERT_TRUE(ledger.OpenAccount({.id = "alice", .asset = "CREDITS"}).ok());
  ASSERT_TRUE(ledger.OpenAccount({.id = "bob", .asset = "CREDITS"}).ok());
  ASSERT_TRUE(
      ledger.OpenAccount({.id = "carol", .asset = "CREDITS", .overdraft_limit = 50}).ok());
  ASSERT_NO_FATAL_FAILURE(Commit(ledger, "fund", Operation::TopUp("issuance", "alice", "CREDITS", 500)));
  std::string transfer;
  ASSERT_NO_FATAL_FAILURE(
      Commit(ledger, "pay", Operation::Transfer("alice", "bob", "CREDITS", 120), &transfer));
  ASSERT_NO_FATAL_FAILURE(Commit(ledger, "undo", Operation::Reverse(transfer)));
  ASSERT_NO_FATAL_FAILURE(
      Commit(ledger, "pay-again", Operation::Transfer("alice", "bob", "CREDITS", 150)));
  ASSERT_NO_FATAL_FAILURE(
      Commit(ledger, "shop", Operation::Spend("bob", "carol", "CREDITS", 40)));
  ASSERT_NO_FATAL_FAILURE(Commit(ledger, "split",
                                 Operation::Post({{"alice", "CREDITS", -30},
                                                  {"bob", "CREDITS", 10},
                                                  {"carol", "CREDITS", 20}})));
  ASSERT_NO_FATAL_FAILURE(
      Commit(ledger, "cash-out", Operation::Payout("carol", "issuance", "CREDITS", 25)));
}

TEST_F(MysqlHoldsTest, PopulatedDatabaseMigratesToHoldsAndStillVerifies) {
  // The new engine cannot write an older schema (it reads and writes the new columns), so
  // a Ledger writes into a twin database with the latest schema, and the rows are copied,
  // in the older schema's columns, into a database migrated only up to 0002.
  const std::string source = Scratch("holds_source");
  const std::string target = Scratch("holds_target");
  ASSERT_NE(MigrateBeforeHolds(target), nullptr);
  ManualClock clock;
  std::shared_ptr<Engine> source_engine = Open(source);
  ASSERT_NE(source_engine, nullptr);
  {
    Ledger ledger = OpenTestLedger(source_engine, {.clock = &clock});
    ASSERT_NO_FATAL_FAILURE(WriteLedgerBeforeHolds(ledger));
  }
  // Parents first; a reversal after the transaction it reverses.
  for (const char* table : {"assets", "accounts"}) CopyRows(source, target, table);
  CopyRows(source, target, "transactions", "reversal_of IS NOT NULL, id");
  for (const char* table : {"entries", "idempotency_keys", "outbox_events"}) {
    CopyRows(source, target, table);
  }
  ASSERT_EQ(Text(absl::StrCat("SELECT COUNT(*) FROM `", target, "`.schema_migrations")),
            std::to_string(kHoldsMigrationVersion - 1));

  std::shared_ptr<Engine> migrated = Open(target, /*migrate=*/false);
  ASSERT_NE(migrated, nullptr);
  ASSERT_TRUE(migrated->Migrate().ok());
  EXPECT_EQ(Text(absl::StrCat("SELECT MAX(version) FROM `", target, "`.schema_migrations")),
            std::to_string(kHoldsMigrationVersion));

  absl::StatusOr<VerifyReport> report = VerifyLedger(*migrated);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << report->ToText();
  absl::StatusOr<VerifyReport> source_report = VerifyLedger(*source_engine);
  ASSERT_TRUE(source_report.ok()) << source_report.status();
  EXPECT_EQ(report->ToJson(), source_report->ToJson());
  EXPECT_EQ(report->transactions, 7);

  // The old rows read back as they were written, with nothing pending and no hold.
  absl::StatusOr<std::vector<Account>> accounts = migrated->ListAccounts("", 100);
  ASSERT_TRUE(accounts.ok()) << accounts.status();
  EXPECT_EQ(*accounts, *source_engine->ListAccounts("", 100));
  ASSERT_EQ(accounts->size(), 4u);
  for (const Account& account : *accounts) {
    EXPECT_EQ(account.pending_debits, 0) << account.id;
    EXPECT_EQ(account.pending_credits, 0) << account.id;
  }
  absl::StatusOr<std::vector<Transaction>> transactions = migrated->ListTransactions("", 100);
  ASSERT_TRUE(transactions.ok()) << transactions.status();
  EXPECT_EQ(*transactions, *source_engine->ListTransactions("", 100));
  for (const Transaction& transaction : *transactions) {
    EXPECT_FALSE(transaction.hold.has_value()) << transaction.id;
    EXPECT_FALSE(transaction.hold_id.has_value()) << transaction.id;
    EXPECT_EQ(*migrated->GetTransaction(transaction.id), transaction);
  }
  EXPECT_EQ(*migrated->ListKeyRecords(std::nullopt, 100),
            *source_engine->ListKeyRecords(std::nullopt, 100));
  EXPECT_TRUE(migrated->ListHolds("", "", 100)->empty());

  // And the migrated ledger takes holds: alice's available balance drops at once.
  Ledger ledger = OpenTestLedger(migrated, {.clock = &clock});
  std::string hold_id;
  ASSERT_NO_FATAL_FAILURE(
      Commit(ledger, "reserve", Operation::Hold("alice", "bob", "CREDITS", 70), &hold_id));
  absl::StatusOr<Account> alice = ledger.GetAccount("alice");
  ASSERT_TRUE(alice.ok()) << alice.status();
  EXPECT_EQ(alice->pending_debits, 70);
  EXPECT_EQ(alice->Available(), alice->balance - 70);
  ASSERT_NO_FATAL_FAILURE(Commit(ledger, "settle", Operation::Capture(hold_id, 50)));
  absl::StatusOr<std::optional<Hold>> hold = migrated->GetHold(hold_id);
  ASSERT_TRUE(hold.ok()) << hold.status();
  ASSERT_TRUE(hold->has_value());
  EXPECT_EQ((*hold)->status, HoldStatus::kCaptured);
  report = VerifyLedger(*migrated);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << report->ToText();
}

// MySQL commits DDL at once, so a migration can stop half-way; the next run must finish
// it. Every prefix of 0003's statements stands for a run cut short there.
TEST_F(MysqlHoldsTest, HoldsMigrationCutShortAnywhereIsCompletedByTheNextRun) {
  const std::optional<Migration> migration = HoldsMigration();
  ASSERT_TRUE(migration.has_value());
  const std::vector<std::string> statements = SplitSqlStatements(migration->sql);
  ASSERT_GT(statements.size(), 2u);
  for (size_t ran = 1; ran <= statements.size(); ++ran) {
    SCOPED_TRACE(absl::StrCat("cut after statement ", ran, " of ", statements.size()));
    const std::string database = Scratch(absl::StrCat("holds_cut_", ran));
    std::unique_ptr<mysql_internal::MysqlConnection> connection = MigrateBeforeHolds(database);
    ASSERT_NE(connection, nullptr);
    for (size_t i = 0; i < ran; ++i) {
      ASSERT_TRUE(connection
                      ->ExecuteText(statements[i], "a statement of 0003",
                                    mysql_internal::ErrorContext::kStandalone)
                      .ok());
    }
    connection.reset();
    std::shared_ptr<Engine> engine = Open(database);  // migrates
    ASSERT_NE(engine, nullptr);
    EXPECT_EQ(Text(absl::StrCat("SELECT COUNT(*) FROM information_schema.COLUMNS"
                                " WHERE TABLE_SCHEMA = '", database, "' AND COLUMN_NAME IN"
                                " ('pending_debits', 'pending_credits', 'hold_id', 'settled_by')")),
              "4");
    EXPECT_TRUE(engine->ListHolds("", "", 10).ok());
  }
}

// ------------------------------------------------------------ the engine's hold rows

// PendingHoldTotals flattened, comparable and printable (DebitUsage has no operator==).
struct Totals {
  Amount lapsed_debits = 0;
  Amount lapsed_credits = 0;
  int64_t reserving_count = 0;
  Amount reserving_amount = 0;

  static Totals Of(const absl::StatusOr<PendingHoldTotals>& totals) {
    EXPECT_TRUE(totals.ok()) << totals.status();
    if (!totals.ok()) return {.lapsed_debits = -1};
    return {totals->lapsed_debits, totals->lapsed_credits, totals->reserving_since.count,
            totals->reserving_since.amount};
  }
  friend bool operator==(const Totals&, const Totals&) = default;
  friend std::ostream& operator<<(std::ostream& out, const Totals& totals) {
    return out << "lapsed " << totals.lapsed_debits << " out, " << totals.lapsed_credits
               << " in; reserving " << totals.reserving_count << " holds, "
               << totals.reserving_amount;
  }
};

// Hold and settlement transactions written straight through the storage contract, each
// locking its accounts first as the pipeline does.
class MysqlHoldRowsTest : public MysqlHoldsTest {
 protected:
  void SetUp() override {
    MysqlHoldsTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    database_ = Scratch("holds_rows");
    engine_ = Open(database_);
    ASSERT_NE(engine_, nullptr);
    ASSERT_TRUE(engine_->PutAsset({"CREDITS", 0}).ok());
    for (const char* id : {"alice", "bob", "carol"}) {
      Account account{.id = id, .asset = "CREDITS", .overdraft_limit = 1000};
      account.created_at = kStart;
      ASSERT_TRUE(engine_->InsertAccount(account).ok()) << id;
    }
  }

  static Transaction HoldTransaction(const std::string& id, HoldTerms terms,
                                     absl::Time created_at) {
    Transaction transaction{.id = id, .kind = OperationKind::kHold, .created_at = created_at};
    transaction.fingerprint = "fingerprint-" + id;
    transaction.hold = std::move(terms);
    return transaction;
  }

  static Transaction Settlement(const std::string& id, OperationKind kind,
                                const std::string& hold_id, absl::Time created_at) {
    Transaction transaction{.id = id, .kind = kind, .created_at = created_at};
    transaction.fingerprint = kind == OperationKind::kExpire ? "" : "fingerprint-" + id;
    transaction.hold_id = hold_id;
    return transaction;
  }

  // Locks the accounts, lets `change` update them and writes `transaction`; returns the
  // first failure, of the write or of the commit.
  absl::Status Write(const Transaction& transaction, std::vector<std::string> sorted_ids,
                     const std::function<void(std::vector<Account>&)>& change) {
    LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<StorageTransaction> storage, engine_->Begin({}));
    LEDGER_ASSIGN_OR_RETURN(std::vector<Account> accounts, storage->LockAccounts(sorted_ids));
    change(accounts);
    LEDGER_RETURN_IF_ERROR(storage->WriteTransaction(transaction, accounts));
    return storage->Commit();
  }

  // Places a hold: pending on both sides.
  absl::Status Place(const Transaction& hold) {
    const HoldTerms& terms = *hold.hold;
    return Write(hold, Sorted(terms.from, terms.to), [&](std::vector<Account>& accounts) {
      for (Account& account : accounts) {
        if (account.id == terms.from) account.pending_debits += terms.amount;
        if (account.id == terms.to) account.pending_credits += terms.amount;
      }
    });
  }

  // Settles a hold: releases it, and a capture posts `captured` of it (its entries are
  // added to `written` once the locked accounts are known, before Write writes it).
  absl::Status Settle(const Transaction& settlement, const HoldTerms& terms,
                      Amount captured = 0) {
    Transaction written = settlement;
    return Write(written, Sorted(terms.from, terms.to), [&](std::vector<Account>& accounts) {
      for (Account& account : accounts) {
        const bool from = account.id == terms.from;
        (from ? account.pending_debits : account.pending_credits) -= terms.amount;
        if (captured == 0) continue;
        account.balance += from ? -captured : captured;
        account.version += 1;
        written.entries.push_back({account.id, terms.asset, from ? -captured : captured,
                                   account.balance, account.version});
      }
    });
  }

  static std::vector<std::string> Sorted(const std::string& a, const std::string& b) {
    return a < b ? std::vector<std::string>{a, b} : std::vector<std::string>{b, a};
  }

  static std::vector<std::string> Ids(const absl::StatusOr<std::vector<Hold>>& holds) {
    EXPECT_TRUE(holds.ok()) << holds.status();
    std::vector<std::string> ids;
    if (holds.ok()) {
      for (const Hold& hold : *holds) ids.push_back(hold.id);
    }
    return ids;
  }

  std::string database_;
  std::shared_ptr<Engine> engine_;
};

TEST_F(MysqlHoldRowsTest, HoldsReadBackThroughEveryRead) {
  const HoldTerms one{"alice", "bob", "CREDITS", 30, kStart + absl::Hours(1)};
  const HoldTerms two{"bob", "alice", "CREDITS", 5, std::nullopt};
  const HoldTerms three{"alice", "carol", "CREDITS", 7, kStart + absl::Minutes(10)};
  ASSERT_TRUE(Place(HoldTransaction("hold-1", one, kStart)).ok());
  ASSERT_TRUE(Place(HoldTransaction("hold-2", two, kStart + absl::Seconds(30))).ok());
  ASSERT_TRUE(Place(HoldTransaction("hold-3", three, kStart + absl::Minutes(1))).ok());

  absl::StatusOr<std::optional<Hold>> hold = engine_->GetHold("hold-1");
  ASSERT_TRUE(hold.ok()) << hold.status();
  EXPECT_EQ(*hold, (Hold{.id = "hold-1", .terms = one, .created_at = kStart}));
  EXPECT_EQ(*engine_->GetHold("nope"), std::nullopt);
  absl::StatusOr<std::optional<Transaction>> placed = engine_->GetTransaction("hold-2");
  ASSERT_TRUE(placed.ok() && placed->has_value()) << placed.status();
  EXPECT_EQ((*placed)->hold, two);  // no expiry stays none
  EXPECT_FALSE((*placed)->hold_id.has_value());
  EXPECT_TRUE((*placed)->entries.empty());

  // Both sides of an account, in id order, strictly after after_id, at most limit.
  using Names = std::vector<std::string>;
  EXPECT_EQ(Ids(engine_->ListHolds("alice", "", 10)), (Names{"hold-1", "hold-2", "hold-3"}));
  EXPECT_EQ(Ids(engine_->ListHolds("alice", "hold-1", 10)), (Names{"hold-2", "hold-3"}));
  EXPECT_EQ(Ids(engine_->ListHolds("alice", "", 2)), (Names{"hold-1", "hold-2"}));
  EXPECT_EQ(Ids(engine_->ListHolds("bob", "", 10)), (Names{"hold-1", "hold-2"}));
  EXPECT_EQ(Ids(engine_->ListHolds("carol", "", 10)), (Names{"hold-3"}));
  EXPECT_EQ(Ids(engine_->ListHolds("", "hold-1", 1)), (Names{"hold-2"}));
  // Lapsed: pending and expires_at <= now, by (expires_at, id); none never lapses.
  EXPECT_EQ(Ids(engine_->ListLapsedHolds(kStart + absl::Minutes(10), 10)), (Names{"hold-3"}));
  EXPECT_EQ(Ids(engine_->ListLapsedHolds(kStart + absl::Hours(2), 10)),
            (Names{"hold-3", "hold-1"}));
  EXPECT_TRUE(Ids(engine_->ListLapsedHolds(kStart + absl::Minutes(9), 10)).empty());

  // Totals, outside and inside a transaction alike.
  const absl::Time now = kStart + absl::Minutes(15);
  const Totals alice{.lapsed_debits = 7, .lapsed_credits = 0, .reserving_count = 1,
                     .reserving_amount = 30};
  EXPECT_EQ(Totals::Of(engine_->HoldTotals("alice", now, kStart)), alice);
  // hold-1 was placed before `since`: it reserves, but not for the velocity window.
  EXPECT_EQ(Totals::Of(engine_->HoldTotals("alice", now, kStart + absl::Seconds(1))),
            (Totals{.lapsed_debits = 7}));
  EXPECT_EQ(Totals::Of(engine_->HoldTotals("bob", kStart + absl::Hours(2), kStart)),
            (Totals{.lapsed_credits = 30, .reserving_count = 1, .reserving_amount = 5}));
  {
    absl::StatusOr<std::unique_ptr<StorageTransaction>> storage = engine_->Begin({});
    ASSERT_TRUE(storage.ok()) << storage.status();
    ASSERT_TRUE((*storage)->LockAccounts({"alice"}).ok());
    EXPECT_EQ(Totals::Of((*storage)->LoadHoldTotals("alice", now, kStart)), alice);
    EXPECT_EQ(Ids((*storage)->LoadHolds({"hold-3", "nope", "hold-1"})).size(), 2u);
    EXPECT_TRUE(Ids((*storage)->LoadHolds({})).empty());
  }

  // Capture part of hold-1 and void hold-3; hold-2 stays pending (it never lapses).
  ASSERT_TRUE(Settle(Settlement("capture-1", OperationKind::kCapture, "hold-1",
                                kStart + absl::Minutes(2)),
                     one, 20)
                  .ok());
  ASSERT_TRUE(Settle(Settlement("void-3", OperationKind::kVoid, "hold-3",
                                kStart + absl::Minutes(3)),
                     three)
                  .ok());
  EXPECT_EQ(*engine_->GetHold("hold-1"),
            (Hold{.id = "hold-1", .terms = one, .created_at = kStart,
                  .status = HoldStatus::kCaptured, .settled_by = "capture-1"}));
  EXPECT_EQ((*engine_->GetHold("hold-3"))->status, HoldStatus::kVoided);
  absl::StatusOr<std::optional<Transaction>> capture = engine_->GetTransaction("capture-1");
  ASSERT_TRUE(capture.ok() && capture->has_value()) << capture.status();
  EXPECT_EQ((*capture)->hold_id, "hold-1");
  EXPECT_FALSE((*capture)->hold.has_value());
  EXPECT_EQ((*capture)->entries.size(), 2u);
  absl::StatusOr<std::vector<Transaction>> listed = engine_->ListTransactions("", 10);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 5u);
  for (const Transaction& transaction : *listed) {
    EXPECT_EQ(*engine_->GetTransaction(transaction.id), transaction);
  }
  EXPECT_TRUE(Ids(engine_->ListLapsedHolds(kStart + absl::Hours(2), 10)).empty());
  EXPECT_EQ(Totals::Of(engine_->HoldTotals("alice", kStart + absl::Hours(2), kStart)),
            Totals{});

  // The pending amounts as written, and closing waits for them.
  absl::StatusOr<std::optional<Account>> account = engine_->GetAccount("alice");
  ASSERT_TRUE(account.ok() && account->has_value()) << account.status();
  EXPECT_EQ((*account)->pending_debits, 0);
  EXPECT_EQ((*account)->pending_credits, 5);
  EXPECT_EQ((*account)->balance, -20);
  EXPECT_FALSE(*engine_->CloseAccountIfZeroBalance("bob"));  // owes hold-2, balance 20
  EXPECT_EQ((*engine_->GetAccount("carol"))->pending_credits, 0);
  EXPECT_TRUE(*engine_->CloseAccountIfZeroBalance("carol"));
}

TEST_F(MysqlHoldRowsTest, PendingAmountsKeepAnAccountOpen) {
  const HoldTerms terms{"alice", "bob", "CREDITS", 9, std::nullopt};
  ASSERT_TRUE(Place(HoldTransaction("hold-1", terms, kStart)).ok());
  EXPECT_FALSE(*engine_->CloseAccountIfZeroBalance("alice"));  // pending debits
  EXPECT_FALSE(*engine_->CloseAccountIfZeroBalance("bob"));    // pending credits
  ASSERT_TRUE(Settle(Settlement("void-1", OperationKind::kVoid, "hold-1", kStart), terms).ok());
  EXPECT_TRUE(*engine_->CloseAccountIfZeroBalance("alice"));
  EXPECT_TRUE(*engine_->CloseAccountIfZeroBalance("bob"));
}

// The shared row reader's checks: a hold transaction comes with its terms.
TEST_F(MysqlHoldRowsTest, AHoldTransactionWithoutItsHoldsRowIsDataLoss) {
  const HoldTerms terms{"alice", "bob", "CREDITS", 9, std::nullopt};
  ASSERT_TRUE(Place(HoldTransaction("hold-1", terms, kStart)).ok());
  ASSERT_TRUE(server_->Execute(absl::StrCat("DELETE FROM `", database_,
                                            "`.holds WHERE id = 'hold-1'")).ok());
  absl::StatusOr<std::optional<Transaction>> read = engine_->GetTransaction("hold-1");
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss) << read.status();
  EXPECT_EQ(engine_->ListTransactions("", 10).status().code(), absl::StatusCode::kDataLoss);
}

// A hold is settled once: a second capture, void or expire of it fails on the unique
// hold_id, retryable like a taken reversal_of (the rerun re-reads the hold and rejects).
TEST_F(MysqlHoldRowsTest, SecondSettlementOfAHoldIsRetryable) {
  const HoldTerms terms{"alice", "bob", "CREDITS", 30, kStart + absl::Hours(1)};
  ASSERT_TRUE(Place(HoldTransaction("hold-1", terms, kStart)).ok());
  ASSERT_TRUE(Settle(Settlement("void-1", OperationKind::kVoid, "hold-1", kStart), terms).ok());

  for (OperationKind kind : {OperationKind::kCapture, OperationKind::kVoid,
                             OperationKind::kExpire}) {
    const std::string id = absl::StrCat("second-", View(OperationKindName(kind)));
    SCOPED_TRACE(id);
    absl::Status settled = Settle(Settlement(id, kind, "hold-1", kStart + absl::Hours(2)), terms,
                                  kind == OperationKind::kCapture ? 30 : 0);
    EXPECT_TRUE(IsRetryable(settled)) << settled;
    EXPECT_EQ(*engine_->GetTransaction(id), std::nullopt);  // rolled back: nothing stays
  }
  EXPECT_EQ(*engine_->GetHold("hold-1"),
            (Hold{.id = "hold-1", .terms = terms, .created_at = kStart,
                  .status = HoldStatus::kVoided, .settled_by = "void-1"}));
  absl::StatusOr<std::optional<Account>> alice = engine_->GetAccount("alice");
  ASSERT_TRUE(alice.ok() && alice->has_value()) << alice.status();
  EXPECT_EQ((*alice)->pending_debits, 0);
  EXPECT_EQ((*alice)->balance, 0);
}

}  // namespace
}  // namespace ledger::testing
