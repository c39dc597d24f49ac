// Holds on the SQLite engine: only what needs SQLite itself. Migration 0002 applied to a
// database that already holds a ledger's data; the unique transactions.hold_id as the
// guard against a second settlement even with the holds row put back to pending through
// SQL; a hold transaction whose holds row was deleted through SQL reading as DataLoss; and
// the schema's constraints on pending amounts and holds. Everything the storage contract
// promises about hold rows on every engine (every read, paging over both sides, LoadHolds
// in more than one statement, pending amounts, a second settlement retryable, hold fields
// that do not fit the kind) is in tests/conformance/holds_storage_suite.cc, run here by
// conformance_sqlite.
#include <sqlite3.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <functional>
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
#include "tests/support/hold_writes.h"
#include "tests/support/history_before_reads_indexes.h"
#include "tests/support/keys_before_one_key_space.h"
#include "tests/support/ledger_before_holds.h"
#include "tests/support/older_migrations.h"
#include "tests/engines/sqlite/sqlite_file_test.h"
#include "tests/support/open_ledger.h"

namespace ledger {
namespace {

using testing::RawConnection;

const absl::Time kNow = absl::FromUnixSeconds(1'767'225'600);
constexpr int kHoldsMigrationVersion = 2;  // schema/sqlite/0002_holds.sql
constexpr int kOneKeySpaceMigrationVersion = 3;  // schema/sqlite/0003_one_key_space.sql
constexpr int kReadsIndexesMigrationVersion = 4;  // schema/sqlite/0004_reads_indexes.sql
// schema/sqlite/0005_running_max_on_accounts.sql
constexpr int kRunningMaxOnAccountsMigrationVersion = 5;
// schema/sqlite/0006_fewer_reads_indexes.sql
constexpr int kFewerReadsIndexesMigrationVersion = 6;

// The tables CopyRowsIntoOlderSchema copies by default, in foreign-key order: accounts
// need assets, entries need accounts and transactions.
const std::vector<std::string> kVersionOneTables = {
    "assets", "accounts", "transactions", "entries", "idempotency_keys", "outbox_events",
    "webhook_events", "work_claims"};

// Creates a database at `path` with only the migrations before `version`: the schema an
// older release left behind.
absl::Status CreateDatabaseBefore(const std::string& path, int version) {
  LEDGER_ASSIGN_OR_RETURN(
      std::unique_ptr<sqlite_internal::Connection> connection,
      sqlite_internal::Connection::Open(sqlite_internal::ConnectionSettings{.path = path}));
  LEDGER_RETURN_IF_ERROR(sqlite_internal::CreateMigrationTable(*connection));
  const std::vector<Migration> older = testing::MigrationsBefore(SqliteMigrations(), version);
  if (older.empty()) return absl::InternalError(absl::StrCat("no migration before ", version));
  return ApplyPendingMigrations(older, {}, [&](const Migration& migration) {
    return sqlite_internal::ApplyMigrationOnce(*connection, migration);
  });
}

// Copies every row of `source` into the older schema at `target`, each table's columns
// as the older schema has them. Today's engine speaks only the newest schema, so this is
// how the test gets a version-1 database filled by a real Ledger: the rows an older
// release would have written, exactly.
std::string CopyRowsIntoOlderSchema(const std::string& source, const std::string& target,
                                    const std::vector<std::string>& tables = kVersionOneTables) {
  RawConnection connection(target);
  if (!connection.ok()) return "cannot open the older database";
  std::string result = connection.Execute(absl::StrCat("ATTACH DATABASE '", source, "' AS source"));
  for (const std::string& table : tables) {
    if (result != "ok") return result;
    const std::vector<std::string> columns = connection.Column(
        absl::StrCat("SELECT name FROM main.pragma_table_info('", table, "')"));
    if (columns.empty()) return absl::StrCat("the older schema has no table ", table);
    const std::string list = absl::StrJoin(columns, ", ");
    result = connection.Execute(absl::StrCat("INSERT INTO main.", table, " (", list, ") SELECT ",
                                             list, " FROM source.", table));
  }
  return result == "ok" ? connection.Execute("DETACH DATABASE source") : result;
}

class SqliteHoldsTest : public testing::SqliteFileTest {
 protected:
  SqliteHoldsTest() : SqliteFileTest("ledger-sqlite-holds-test") {}
};

TEST_F(SqliteHoldsTest, MigratingAPopulatedVersionOneDatabaseKeepsItsRowsAndVerifies) {
  const std::string source_path = (folder_ / "written-by-a-ledger.db").string();
  testing::LedgerRows written;
  {
    std::shared_ptr<Engine> source = Open(source_path);
    ASSERT_NE(source, nullptr);
    Ledger book = testing::OpenTestLedger(source);
    ASSERT_NO_FATAL_FAILURE(testing::WriteLedgerBeforeHolds(book));
    written = testing::ReadLedgerRows(*source);
  }
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
            (std::vector<std::string>{"0001_initial", "0002_holds", "0003_one_key_space",
                                      "0004_reads_indexes", "0005_running_max_on_accounts",
                                      "0006_fewer_reads_indexes"}));
  ASSERT_NO_FATAL_FAILURE(testing::ExpectRowsSurviveTheHoldsMigration(*engine, written));
  testing::ExpectMigratedLedgerTakesHolds(engine, /*clock=*/nullptr);
}

// Issue 30: keys an older release wrote under the operation's kind replay through the
// one default space once 0003 has run (tests/support/keys_before_one_key_space.h), and
// a second run of its SQL copies nothing more.
TEST_F(SqliteHoldsTest, OneKeySpaceMigrationMakesOldPerKindKeysReplay) {
  // The engine writes columns later migrations add (the running maxima, the metadata
  // rows), so it cannot write the schema before 0003: the keys go into a twin database
  // with the latest schema, and its rows are copied, in the older schema's columns, into
  // one migrated up to 0002.
  const std::string source_path = (folder_ / "written-by-a-ledger.db").string();
  ManualClock clock;
  testing::KeysBeforeOneKeySpace before;
  {
    std::shared_ptr<Engine> source = Open(source_path);
    ASSERT_NE(source, nullptr);
    Ledger older = testing::OpenTestLedger(source, {.clock = &clock});
    before = testing::WriteKeysOfPerKindSpaces(older, clock);
  }
  ASSERT_TRUE(CreateDatabaseBefore(path_, kOneKeySpaceMigrationVersion).ok());
  ASSERT_EQ(CopyRowsIntoOlderSchema(source_path, path_,
                                    {"assets", "accounts", "transactions", "holds", "entries",
                                     "idempotency_keys", "outbox_events"}),
            "ok");
  std::shared_ptr<Engine> engine = Open(path_, /*migrate=*/false);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->Migrate().ok());
  RawConnection migrated(path_);
  ASSERT_TRUE(migrated.ok());
  EXPECT_EQ(migrated.Column("SELECT name FROM schema_migrations WHERE version = 3"),
            std::vector<std::string>{"0003_one_key_space"});
  // pay-1, shared (the transfer), hold-1 copied; http-1 was there already.
  EXPECT_EQ(migrated.Column("SELECT key FROM idempotency_keys WHERE namespace = 'operations'"
                            " ORDER BY key"),
            (std::vector<std::string>{"hold-1", "http-1", "pay-1", "shared"}));
  const std::optional<Migration> migration =
      testing::MigrationNumbered(SqliteMigrations(), kOneKeySpaceMigrationVersion);
  ASSERT_TRUE(migration.has_value());
  testing::ExpectMigrationNamesEveryOldSpace(migration->sql);
  EXPECT_EQ(migrated.Execute(std::string(migration->sql)), "ok");
  EXPECT_EQ(migrated.Column("SELECT COUNT(*) FROM idempotency_keys"),
            std::vector<std::string>{"9"});  // 6 written, 3 copied
  Ledger upgraded = testing::OpenTestLedger(engine, {.clock = &clock});
  testing::ExpectOldKeysReplayInTheOneKeySpace(upgraded, before);
}

// The history of tests/support/history_before_reads_indexes.h written through a Ledger on
// the latest schema at `source_path`, then copied into `path`, made with the migrations
// before `version` only (in the older schema's columns: `tables`).
void WriteHistoryIntoOlderSchema(const std::string& source_path,
                                 const std::string& path, int version,
                                 const std::vector<std::string>& tables, ManualClock& clock,
                                 testing::HistoryBeforeReadsIndexes& before,
                                 const std::function<std::shared_ptr<Engine>(const std::string&)>& open) {
  {
    std::shared_ptr<Engine> source = open(source_path);
    ASSERT_NE(source, nullptr);
    Ledger older = testing::OpenTestLedger(source, {.clock = &clock});
    before = testing::WriteHistoryBeforeReadsIndexes(older, clock);
  }
  ASSERT_TRUE(CreateDatabaseBefore(path, version).ok());
  ASSERT_EQ(CopyRowsIntoOlderSchema(source_path, path, tables), "ok");
}

// The schema as sqlite_master holds it: every table, index and trigger with its SQL.
std::vector<std::string> SchemaOf(const std::string& path) {
  RawConnection connection(path);
  return connection.Column(
      "SELECT type || ' ' || name || ': ' || coalesce(sql, '') FROM sqlite_master"
      " WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name");
}

// Issues 27 and 31: migration 0004 computes the running maximum of existing entries and
// indexes existing metadata; 0005 puts each account's latest running maximum on its row,
// and the write path keeps all three afterwards.
TEST_F(SqliteHoldsTest, ReadsIndexesMigrationAnswersOldHistoryByIndex) {
  ManualClock clock;
  testing::HistoryBeforeReadsIndexes before;
  ASSERT_NO_FATAL_FAILURE(WriteHistoryIntoOlderSchema(
      (folder_ / "written-by-a-ledger.db").string(), path_, kReadsIndexesMigrationVersion,
      {"assets", "accounts", "transactions", "entries", "idempotency_keys", "outbox_events"},
      clock, before, [&](const std::string& path) { return Open(path); }));
  std::shared_ptr<Engine> engine = Open(path_, /*migrate=*/false);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->Migrate().ok());
  RawConnection migrated(path_);
  ASSERT_TRUE(migrated.ok());
  EXPECT_EQ(migrated.Column("SELECT name FROM schema_migrations WHERE version >= 4"),
            (std::vector<std::string>{"0004_reads_indexes", "0005_running_max_on_accounts",
                                      "0006_fewer_reads_indexes"}));
  EXPECT_EQ(migrated.Column("SELECT COUNT(*) FROM entries WHERE created_at_running_max IS NULL"),
            std::vector<std::string>{"0"});
  Ledger upgraded = testing::OpenTestLedger(engine, {.clock = &clock});
  testing::ExpectReadsIndexesAfterMigration(upgraded, *engine, clock, before);
}

// Issue 27: 0005 fills accounts.entries_running_max from the entries (alice's is her
// latest, at 300 s), drops the triggers of 0004, and leaves the schema a fresh database
// has.
// The write after it (a commit at 250 s, in ExpectReadsIndexesAfterMigration) continues
// from the filled column: were it left NULL, that entry would take 250 s as its running
// maximum and the balance as of 299 s would count it.
TEST_F(SqliteHoldsTest, RunningMaxOnAccountsMigrationContinuesTheHistory) {
  ManualClock clock;
  testing::HistoryBeforeReadsIndexes before;
  // 0004's triggers fill transaction_metadata and the running maxima as the rows go in.
  ASSERT_NO_FATAL_FAILURE(WriteHistoryIntoOlderSchema(
      (folder_ / "written-by-a-ledger.db").string(), path_,
      kRunningMaxOnAccountsMigrationVersion,
      {"assets", "accounts", "transactions", "entries", "idempotency_keys", "outbox_events"},
      clock, before, [&](const std::string& path) { return Open(path); }));
  {
    RawConnection older(path_);
    ASSERT_TRUE(older.ok());
    EXPECT_EQ(older.QueryText("SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger'"), "2");
    EXPECT_EQ(older.QueryText("SELECT COUNT(*) FROM transaction_metadata"), "2");
  }
  std::shared_ptr<Engine> engine = Open(path_, /*migrate=*/false);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->Migrate().ok());
  {
    RawConnection migrated(path_);
    ASSERT_TRUE(migrated.ok());
    EXPECT_EQ(migrated.QueryText("SELECT name FROM schema_migrations WHERE version = 5"),
              "0005_running_max_on_accounts");
    EXPECT_EQ(migrated.QueryText("SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger'"), "0");
    EXPECT_EQ(migrated.QueryText("SELECT entries_running_max FROM accounts WHERE id = 'alice'"),
              absl::StrCat(absl::ToUnixMicros(clock.Now() + absl::Seconds(300))));
    EXPECT_EQ(migrated.QueryText("SELECT entries_running_max IS NULL FROM accounts"
                                 " WHERE id = 'issuance'"),
              "0");
  }
  Ledger upgraded = testing::OpenTestLedger(engine, {.clock = &clock});
  testing::ExpectReadsIndexesAfterMigration(upgraded, *engine, clock, before);
  // The migrated schema is a fresh one's.
  const std::string fresh_path = (folder_ / "fresh.db").string();
  ASSERT_NE(Open(fresh_path), nullptr);
  EXPECT_EQ(SchemaOf(path_), SchemaOf(fresh_path));
}

// Issue 27: 0006 drops entries_by_account_as_of and transactions_by_time; the engine
// finds the balance as of an instant by a binary search over the primary key and lists
// transactions without a filter by merging the kind index's ranges instead: on a database
// written before it, every as-of answer is the one the dropped index's lookup gave, the
// listing is the (created_at, id) order, and the schema is a fresh database's.
TEST_F(SqliteHoldsTest, FewerReadsIndexesMigrationDropsTwoIndexesAndAnswersAsBefore) {
  ManualClock clock;
  const absl::Time start = clock.Now();
  testing::HistoryBeforeReadsIndexes before;
  ASSERT_NO_FATAL_FAILURE(WriteHistoryIntoOlderSchema(
      (folder_ / "written-by-a-ledger.db").string(), path_, kFewerReadsIndexesMigrationVersion,
      {"assets", "accounts", "transactions", "transaction_metadata", "entries",
       "idempotency_keys", "outbox_events"},
      clock, before, [&](const std::string& path) { return Open(path); }));
  const std::vector<absl::Time> instants = testing::InstantsAroundHistory(start);
  std::vector<int64_t> by_the_index;
  std::vector<std::string> by_time;
  {
    RawConnection older(path_);
    ASSERT_TRUE(older.ok());
    EXPECT_EQ(older.QueryText("SELECT COUNT(*) FROM sqlite_master WHERE name IN"
                              " ('entries_by_account_as_of', 'transactions_by_time')"),
              "2");
    by_time = older.Column("SELECT id FROM transactions ORDER BY created_at, id");
    for (absl::Time at : instants) {
      by_the_index.push_back(
          std::stoll(older.QueryText(testing::VersionAsOfByTheDroppedIndexSql("entries", at))));
    }
  }
  std::shared_ptr<Engine> engine = Open(path_, /*migrate=*/false);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->Migrate().ok());
  {
    RawConnection migrated(path_);
    ASSERT_TRUE(migrated.ok());
    EXPECT_EQ(migrated.QueryText("SELECT name FROM schema_migrations WHERE version = 6"),
              "0006_fewer_reads_indexes");
    EXPECT_EQ(migrated.QueryText("SELECT COUNT(*) FROM sqlite_master WHERE name IN"
                                 " ('entries_by_account_as_of', 'transactions_by_time')"),
              "0");
  }
  EXPECT_EQ(testing::VersionsAsOf(*engine, "alice", instants), by_the_index);
  EXPECT_EQ(by_the_index[0], 0);  // an hour before the history
  EXPECT_EQ(by_the_index[1], 5);  // an hour after it
  Ledger upgraded = testing::OpenTestLedger(engine, {.clock = &clock});
  EXPECT_EQ(testing::ListedWithoutAFilter(upgraded), by_time);
  testing::ExpectReadsIndexesAfterMigration(upgraded, *engine, clock, before);
  const std::string fresh_path = (folder_ / "fresh.db").string();
  ASSERT_NE(Open(fresh_path), nullptr);
  EXPECT_EQ(SchemaOf(path_), SchemaOf(fresh_path));
}

// The search relies on versions 1..N without a gap (the posting invariants): an entry
// deleted behind the engine's back stops it short, which it reports as data loss naming
// the account instead of answering a wrong balance.
TEST_F(SqliteHoldsTest, AsOfSearchReportsAMissingVersionAsDataLoss) {
  ManualClock clock;
  std::shared_ptr<Engine> engine = Open(path_);
  ASSERT_NE(engine, nullptr);
  {
    Ledger ledger = testing::OpenTestLedger(engine, {.clock = &clock});
    testing::WriteHistoryBeforeReadsIndexes(ledger, clock);  // alice: versions 1..5
  }
  const absl::Time after = clock.Now() + absl::Hours(1);
  absl::StatusOr<std::optional<HistoryEntry>> found = engine->EntryAsOf("alice", after);
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->entry.account_version, 5);
  {
    RawConnection raw(path_);
    ASSERT_TRUE(raw.ok());
    // The search's first probe of versions 0..5.
    ASSERT_EQ(raw.Execute("DELETE FROM entries WHERE account_id = 'alice' AND account_version = 3"),
              "ok");
  }
  found = engine->EntryAsOf("alice", after);
  EXPECT_EQ(found.status().code(), absl::StatusCode::kDataLoss) << found.status();
  EXPECT_TRUE(absl::StrContains(found.status().message(), "account alice")) << found.status();
  // Another account's search is unaffected.
  found = engine->EntryAsOf("issuance", after);
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->entry.account_version, 5);
}

// A database holding a hold of 300 from wallet to merchant (USD), placed straight through
// the storage contract (tests/support/hold_writes.h), for the tests that then go behind
// the engine's back with SQL.
class SqliteHoldRowsTest : public SqliteHoldsTest {
 protected:
  void SetUp() override {
    SqliteHoldsTest::SetUp();
    engine_ = Open(path_);
    ASSERT_NE(engine_, nullptr);
    ASSERT_TRUE(engine_->PutAsset({"USD", 2}).ok());
    for (const char* id : {"merchant", "wallet"}) {
      ASSERT_TRUE(
          engine_->InsertAccount(Account{.id = id, .asset = "USD", .created_at = kNow}).ok());
    }
    ASSERT_TRUE(testing::PlaceHold(*engine_, hold_).ok());
  }

  const Transaction hold_ = testing::HoldTransaction(
      "hold-1", {"wallet", "merchant", "USD", 300, kNow + absl::Hours(1)}, kNow);
  std::shared_ptr<Engine> engine_;
};

// Two guards stop a second settlement, and both answer the same: the hold is no longer
// pending, and its hold_id is taken (transactions.hold_id is unique). With the holds row
// put back to pending through SQL, only the unique index is left to stop it.
// (That a second settlement is retryable and writes nothing on every engine is the
// conformance suite's HoldStorageSecondSettlementOfAHoldIsRetryableAndWritesNothing.)
TEST_F(SqliteHoldRowsTest, SecondSettlementOfAHoldIsRetryableAndWritesNothing) {
  const Transaction voided = testing::Settlement("void-1", OperationKind::kVoid, hold_.id, kNow);
  ASSERT_TRUE(testing::SettleHold(*engine_, voided, *hold_.hold).ok());

  for (bool pending_again : {false, true}) {
    SCOPED_TRACE(pending_again ? "holds row pending again" : "holds row voided");
    if (pending_again) {
      RawConnection raw(path_);
      ASSERT_TRUE(raw.ok());
      ASSERT_EQ(raw.Execute("UPDATE holds SET status = 'pending', settled_by = NULL"), "ok");
    }
    const Transaction capture =
        testing::Settlement(pending_again ? "capture-2" : "capture-1", OperationKind::kCapture,
                            hold_.id, kNow);
    absl::Status clash = testing::SettleHold(*engine_, capture, *hold_.hold);
    EXPECT_TRUE(IsRetryable(clash)) << clash;
    EXPECT_TRUE(absl::StrContains(clash.message(), "transactions.hold_id")) << clash;
    EXPECT_FALSE(engine_->GetTransaction(capture.id)->has_value());
  }
  EXPECT_EQ(engine_->GetAccount("wallet").value()->pending_debits, 0);
  absl::StatusOr<std::optional<Transaction>> settlement = engine_->GetTransaction(voided.id);
  ASSERT_TRUE(settlement.ok()) << settlement.status();
  EXPECT_EQ(*settlement, voided);
}

TEST_F(SqliteHoldRowsTest, HoldTransactionWhoseHoldsRowIsGoneReadsAsDataLoss) {
  RawConnection raw(path_);  // foreign keys are off on a raw connection
  ASSERT_TRUE(raw.ok());
  ASSERT_EQ(raw.Execute("DELETE FROM holds"), "ok");
  absl::StatusOr<std::optional<Transaction>> read = engine_->GetTransaction(hold_.id);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss) << read.status();
  EXPECT_EQ(engine_->ListTransactions("", 10).status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(SqliteHoldRowsTest, SchemaRefusesNegativePendingAmountsAndInconsistentHolds) {
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
