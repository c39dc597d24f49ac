// Holds on the MySQL engine: only what needs MySQL itself. Migration 0003 on a database
// that already holds a ledger, and on one where an earlier run of it was cut short (MySQL
// commits DDL at once); and a hold transaction whose holds row was deleted through SQL
// reading as DataLoss. Everything the storage contract promises about hold rows on every
// engine (every read, pending amounts, a second settlement retryable, hold fields that do
// not fit the kind) is in tests/conformance/holds_storage_suite.cc, run here by
// conformance_mysql. Each test gets scratch databases of its own on the server named by
// LEDGER_TEST_MYSQL_DSN.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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
#include "ledger/json.h"
#include "ledger/ledger.h"
#include "ledger/operation.h"
#include "ledger/transaction.h"
#include "tests/conformance/conformance_context.h"
#include "tests/engines/mysql/mysql_ledger_test.h"
#include "tests/engines/mysql/mysql_test_server.h"
#include "tests/support/hold_writes.h"
#include "tests/support/history_before_reads_indexes.h"
#include "tests/support/keys_before_one_key_space.h"
#include "tests/support/ledger_before_holds.h"
#include "tests/support/older_migrations.h"
#include "tests/support/open_ledger.h"

namespace ledger::testing {
namespace {

// schema/mysql/0003_holds.sql.
constexpr int kHoldsMigrationVersion = 3;
// schema/mysql/0004_one_key_space.sql.
constexpr int kOneKeySpaceMigrationVersion = 4;
constexpr int kReadsIndexesMigrationVersion = 5;  // schema/mysql/0005_reads_indexes.sql
// schema/mysql/0006_running_max_on_accounts.sql
constexpr int kRunningMaxOnAccountsMigrationVersion = 6;
// schema/mysql/0007_fewer_reads_indexes.sql
constexpr int kFewerReadsIndexesMigrationVersion = 7;
// schema/mysql/0008_write_procedure.sql
constexpr int kWriteProcedureMigrationVersion = 8;

const absl::Time kStart = absl::FromUnixSeconds(1'767'225'600);  // 2026-01-01

class MysqlHoldsTest : public MysqlServerTest {
 protected:
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

  // Applies the migrations before `version` (default: 0003) to `database` through the
  // engine's own runner.
  std::unique_ptr<mysql_internal::MysqlConnection> MigrateBeforeHolds(
      const std::string& database, int version = kHoldsMigrationVersion) {
    absl::StatusOr<mysql_internal::MysqlSettings> settings =
        mysql_internal::ParseMysqlUrl(server_->DsnFor(database));
    EXPECT_TRUE(settings.ok()) << settings.status();
    if (!settings.ok()) return nullptr;
    absl::StatusOr<std::unique_ptr<mysql_internal::MysqlConnection>> connection =
        mysql_internal::MysqlConnection::Open(*settings);
    EXPECT_TRUE(connection.ok()) << connection.status();
    if (!connection.ok()) return nullptr;
    absl::Status migrated = mysql_internal::MigrateDatabase(
        **connection, MigrationsBefore(MysqlMigrations(), version));
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

  std::vector<std::string> databases_;
};

// ------------------------------------------------------------ migrating a populated database

TEST_F(MysqlHoldsTest, PopulatedDatabaseMigratesToHoldsAndStillVerifies) {
  // The new engine cannot write an older schema (it reads and writes the new columns), so
  // a Ledger writes into a twin database with the latest schema, and the rows are copied,
  // in the older schema's columns, into a database migrated only up to 0002.
  const std::string source = Scratch("holds_source");
  const std::string target = Scratch("holds_target");
  ASSERT_NE(MigrateBeforeHolds(target), nullptr);
  ManualClock clock;
  LedgerRows before;
  {
    std::shared_ptr<Engine> source_engine = Open(source);
    ASSERT_NE(source_engine, nullptr);
    Ledger ledger = OpenTestLedger(source_engine, {.clock = &clock});
    ASSERT_NO_FATAL_FAILURE(WriteLedgerBeforeHolds(ledger));
    before = ReadLedgerRows(*source_engine);
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
            std::to_string(MysqlMigrations().size()));
  ASSERT_NO_FATAL_FAILURE(ExpectRowsSurviveTheHoldsMigration(*migrated, before));
  ExpectMigratedLedgerTakesHolds(migrated, &clock);
}

// MySQL commits DDL at once, so a migration can stop half-way; the next run must finish
// it. Every prefix of 0003's statements stands for a run cut short there.
TEST_F(MysqlHoldsTest, HoldsMigrationCutShortAnywhereIsCompletedByTheNextRun) {
  const std::optional<Migration> migration =
      MigrationNumbered(MysqlMigrations(), kHoldsMigrationVersion);
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

// Issue 30: keys an older release wrote under the operation's kind replay through the
// one default space once 0004 has run (tests/support/keys_before_one_key_space.h), and
// a second run of its SQL copies nothing more.
TEST_F(MysqlHoldsTest, OneKeySpaceMigrationMakesOldPerKindKeysReplay) {
  // Written through a twin database with the latest schema (the engine writes columns
  // that 0005 adds), the rows copied into one migrated up to 0003.
  const std::string source = Scratch("key_space_source");
  const std::string database = Scratch("key_space");
  std::unique_ptr<mysql_internal::MysqlConnection> connection =
      MigrateBeforeHolds(database, kOneKeySpaceMigrationVersion);
  ASSERT_NE(connection, nullptr);
  ManualClock clock(kStart);
  KeysBeforeOneKeySpace before;
  {
    std::shared_ptr<Engine> source_engine = Open(source);
    ASSERT_NE(source_engine, nullptr);
    Ledger ledger = OpenTestLedger(source_engine, {.clock = &clock});
    before = WriteKeysOfPerKindSpaces(ledger, clock);
  }
  for (const char* table : {"assets", "accounts", "transactions", "holds", "entries",
                            "idempotency_keys", "outbox_events"}) {
    CopyRows(source, database, table);
  }
  std::shared_ptr<Engine> engine = Open(database, /*migrate=*/false);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->Migrate().ok());
  const std::string table = absl::StrCat("`", database, "`.");
  EXPECT_EQ(Text(absl::StrCat("SELECT name FROM ", table, "schema_migrations WHERE version = 4")),
            "0004_one_key_space");
  // pay-1, shared (the transfer), hold-1 copied; http-1 was there already.
  EXPECT_EQ(Text(absl::StrCat("SELECT GROUP_CONCAT(`key` ORDER BY `key`) FROM ", table,
                              "idempotency_keys WHERE namespace = 'operations'")),
            "hold-1,http-1,pay-1,shared");
  const std::optional<Migration> migration =
      MigrationNumbered(MysqlMigrations(), kOneKeySpaceMigrationVersion);
  ASSERT_TRUE(migration.has_value());
  ExpectMigrationNamesEveryOldSpace(migration->sql);
  for (const std::string& statement : SplitSqlStatements(migration->sql)) {
    ASSERT_TRUE(connection
                    ->ExecuteText(statement, "0004 again", mysql_internal::ErrorContext::kStandalone)
                    .ok());
  }
  ASSERT_TRUE(connection->Commit(mysql_internal::ErrorContext::kStandalone).ok());
  connection.reset();
  EXPECT_EQ(Text(absl::StrCat("SELECT COUNT(*) FROM ", table, "idempotency_keys")),
            "9");  // 6 written, 3 copied
  Ledger upgraded = OpenTestLedger(engine, {.clock = &clock});
  ExpectOldKeysReplayInTheOneKeySpace(upgraded, before);
}

// Issues 27 and 31: migration 0005 computes the running maximum of existing entries and
// indexes existing metadata, and the engine's write path keeps both afterwards.
TEST_F(MysqlHoldsTest, ReadsIndexesMigrationAnswersOldHistoryByIndex) {
  // The engine writes the running maxima and the metadata rows itself, so it cannot write
  // the schema before 0005: the history goes into a twin database with the latest schema,
  // and its rows are copied, in the older schema's columns, into one migrated up to 0004.
  const std::string source = Scratch("reads_indexes_source");
  const std::string database = Scratch("reads_indexes");
  ASSERT_NE(MigrateBeforeHolds(database, kReadsIndexesMigrationVersion), nullptr);
  ManualClock clock(kStart);
  HistoryBeforeReadsIndexes before;
  {
    std::shared_ptr<Engine> source_engine = Open(source);
    ASSERT_NE(source_engine, nullptr);
    Ledger ledger = OpenTestLedger(source_engine, {.clock = &clock});
    before = WriteHistoryBeforeReadsIndexes(ledger, clock);
  }
  for (const char* table : {"assets", "accounts", "transactions", "entries", "idempotency_keys",
                            "outbox_events"}) {
    CopyRows(source, database, table);
  }
  std::shared_ptr<Engine> engine = Open(database, /*migrate=*/false);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->Migrate().ok());
  EXPECT_EQ(Text(absl::StrCat("SELECT name FROM `", database,
                              "`.schema_migrations WHERE version = 5")),
            "0005_reads_indexes");
  Ledger upgraded = OpenTestLedger(engine, {.clock = &clock});
  ExpectReadsIndexesAfterMigration(upgraded, *engine, clock, before);
  const std::string table = absl::StrCat("`", database, "`.");
  EXPECT_EQ(Text(absl::StrCat("SELECT COUNT(*) FROM ", table,
                              "entries WHERE created_at_running_max IS NULL")),
            "0");
  EXPECT_EQ(Text(absl::StrCat("SELECT COUNT(*) FROM information_schema.TRIGGERS"
                              " WHERE TRIGGER_SCHEMA = '", database, "'")),
            "0");
}

// The columns of every table of `database` with their types, its indexes and triggers:
// how many, and the sum of their CRC32s (GROUP_CONCAT would stop at
// group_concat_max_len).
std::string SchemaQuery(const std::string& database) {
  return absl::StrCat(
      "SELECT CONCAT(COUNT(*), ' ', SUM(CRC32(line))) FROM ("
      " SELECT CONCAT('column ', TABLE_NAME, '.', COLUMN_NAME, ' ', COLUMN_TYPE, ' ',"
      "   IS_NULLABLE) AS line FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '",
      database, "'"
      " UNION ALL SELECT CONCAT('index ', TABLE_NAME, '.', INDEX_NAME, ' ', SEQ_IN_INDEX, ' ',"
      "   COLUMN_NAME) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = '", database, "'"
      " UNION ALL SELECT CONCAT('trigger ', TRIGGER_NAME) FROM information_schema.TRIGGERS"
      "   WHERE TRIGGER_SCHEMA = '", database, "') AS schema_lines");
}

// Issue 27: 0006 fills accounts.entries_running_max from the entries (alice's is her
// latest, at 300 s), after which the lock read returns it and the write path continues
// it, and leaves the schema a fresh database has. The write after it (a commit at 250 s,
// in ExpectReadsIndexesAfterMigration) continues from the filled column: were it left
// NULL, that entry would take 250 s as its running maximum and the balance as of 299 s
// would count it.
TEST_F(MysqlHoldsTest, RunningMaxOnAccountsMigrationContinuesTheHistory) {
  const std::string source = Scratch("running_max_source");
  const std::string database = Scratch("running_max");
  ASSERT_NE(MigrateBeforeHolds(database, kRunningMaxOnAccountsMigrationVersion), nullptr);
  ManualClock clock(kStart);
  HistoryBeforeReadsIndexes before;
  {
    std::shared_ptr<Engine> source_engine = Open(source);
    ASSERT_NE(source_engine, nullptr);
    Ledger ledger = OpenTestLedger(source_engine, {.clock = &clock});
    before = WriteHistoryBeforeReadsIndexes(ledger, clock);
  }
  for (const char* table : {"assets", "accounts", "transactions", "transaction_metadata",
                            "entries", "idempotency_keys", "outbox_events"}) {
    CopyRows(source, database, table);
  }
  const std::string table = absl::StrCat("`", database, "`.");
  EXPECT_EQ(Text(absl::StrCat("SELECT COUNT(*) FROM information_schema.COLUMNS"
                              " WHERE TABLE_SCHEMA = '", database,
                              "' AND COLUMN_NAME = 'entries_running_max'")),
            "0");
  std::shared_ptr<Engine> engine = Open(database, /*migrate=*/false);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->Migrate().ok());
  EXPECT_EQ(Text(absl::StrCat("SELECT name FROM ", table, "schema_migrations WHERE version = 6")),
            "0006_running_max_on_accounts");
  EXPECT_EQ(Text(absl::StrCat("SELECT entries_running_max FROM ", table,
                              "accounts WHERE id = 'alice'")),
            absl::StrCat(absl::ToUnixMicros(kStart + absl::Seconds(300))));
  Ledger upgraded = OpenTestLedger(engine, {.clock = &clock});
  ExpectReadsIndexesAfterMigration(upgraded, *engine, clock, before);
  EXPECT_EQ(Text(SchemaQuery(database)), Text(SchemaQuery(source)));
}

// Issue 27: 0007 drops entries_by_account_as_of and transactions_by_time; the engine
// finds the balance as of an instant by a binary search over the primary key and lists
// transactions without a filter by merging the kind index's ranges instead: on a database
// written before it, every as-of answer is the one the dropped index's lookup gave, the
// listing is the (created_at, id) order, and the schema is a fresh database's.
TEST_F(MysqlHoldsTest, FewerReadsIndexesMigrationDropsTwoIndexesAndAnswersAsBefore) {
  const std::string source = Scratch("as_of_source");
  const std::string database = Scratch("as_of");
  ASSERT_NE(MigrateBeforeHolds(database, kFewerReadsIndexesMigrationVersion), nullptr);
  ManualClock clock(kStart);
  HistoryBeforeReadsIndexes before;
  {
    std::shared_ptr<Engine> source_engine = Open(source);
    ASSERT_NE(source_engine, nullptr);
    Ledger ledger = OpenTestLedger(source_engine, {.clock = &clock});
    before = WriteHistoryBeforeReadsIndexes(ledger, clock);
  }
  for (const char* table : {"assets", "accounts", "transactions", "transaction_metadata",
                            "entries", "idempotency_keys", "outbox_events"}) {
    CopyRows(source, database, table);
  }
  const std::string table = absl::StrCat("`", database, "`.");
  const std::string index_count = absl::StrCat(
      "SELECT COUNT(DISTINCT INDEX_NAME) FROM information_schema.STATISTICS"
      " WHERE TABLE_SCHEMA = '", database,
      "' AND INDEX_NAME IN ('entries_by_account_as_of', 'transactions_by_time')");
  EXPECT_EQ(Text(index_count), "2");
  const std::string by_time = Text(absl::StrCat(
      "SELECT GROUP_CONCAT(id ORDER BY created_at, id) FROM ", table, "transactions"));
  const std::vector<absl::Time> instants = InstantsAroundHistory(kStart);
  std::vector<int64_t> by_the_index;
  for (absl::Time at : instants) {
    by_the_index.push_back(
        std::stoll(Text(VersionAsOfByTheDroppedIndexSql(absl::StrCat(table, "entries"), at))));
  }
  std::shared_ptr<Engine> engine = Open(database, /*migrate=*/false);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->Migrate().ok());
  EXPECT_EQ(Text(absl::StrCat("SELECT name FROM ", table, "schema_migrations WHERE version = 7")),
            "0007_fewer_reads_indexes");
  EXPECT_EQ(Text(index_count), "0");
  EXPECT_EQ(VersionsAsOf(*engine, "alice", instants), by_the_index);
  EXPECT_EQ(by_the_index[0], 0);  // an hour before the history
  EXPECT_EQ(by_the_index[1], 5);  // an hour after it
  Ledger upgraded = OpenTestLedger(engine, {.clock = &clock});
  EXPECT_EQ(absl::StrJoin(ListedWithoutAFilter(upgraded), ","), by_time);
  ExpectReadsIndexesAfterMigration(upgraded, *engine, clock, before);
  EXPECT_EQ(Text(SchemaQuery(database)), Text(SchemaQuery(source)));
  // Re-runnable, as every MySQL migration (DDL commits before its schema_migrations row
  // does): run again with the index already gone, it succeeds and changes nothing.
  engine.reset();
  ASSERT_TRUE(
      server_->Execute(absl::StrCat("DELETE FROM ", table, "schema_migrations WHERE version = 7"))
          .ok());
  std::shared_ptr<Engine> again = Open(database, /*migrate=*/false);
  ASSERT_NE(again, nullptr);
  ASSERT_TRUE(again->Migrate().ok());
  EXPECT_EQ(Text(SchemaQuery(database)), Text(SchemaQuery(source)));
}

// The engine writes the running maxima and the metadata rows itself, in the submit's
// transaction, where SQLite and PostgreSQL use triggers: a MariaDB Galera node parses a
// table's trigger bodies each time it opens the table, and in the cluster test a node
// that had rejoined under load failed that parse and then refused every insert into
// entries (error 1064, "Trigger 'entries_keep_running_max' has an error in its body").
// A migrated database has no trigger for a node to parse.
TEST_F(MysqlHoldsTest, MigratedDatabaseHasNoTriggerForAGaleraNodeToParse) {
  const std::string database = Scratch("no_triggers");
  std::shared_ptr<Engine> engine = Open(database);
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(Text(absl::StrCat("SELECT COUNT(*) FROM information_schema.TRIGGERS"
                              " WHERE TRIGGER_SCHEMA = '", database, "'")),
            "0");
}

// Issue 29: 0008 creates the write procedure every submit's writes go through (one CALL,
// committing at its end). On a database migrated to 0007, here one whose default
// character set is latin1, it appears, runs with its caller's rights, and the ledger
// writes through it, text outside latin1 kept byte for byte (its parameters and columns
// are utf8mb4 whatever the database's default); run again, it is replaced.
TEST_F(MysqlHoldsTest, WriteProcedureMigrationCreatesTheProcedureTheLedgerWritesThrough) {
  const std::string database = Scratch("write_procedure");
  ASSERT_TRUE(
      server_->Execute(absl::StrCat("ALTER DATABASE `", database, "` CHARACTER SET latin1")).ok());
  ASSERT_NE(MigrateBeforeHolds(database, kWriteProcedureMigrationVersion), nullptr);
  const std::string procedure = absl::StrCat(
      "SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = '", database,
      "' AND ROUTINE_NAME = 'ledger_write' AND SECURITY_TYPE = 'INVOKER'");
  EXPECT_EQ(Text(procedure), "0");
  std::shared_ptr<Engine> engine = Open(database, /*migrate=*/false);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->Migrate().ok());
  const std::string table = absl::StrCat("`", database, "`.");
  EXPECT_EQ(Text(absl::StrCat("SELECT name FROM ", table, "schema_migrations WHERE version = ",
                              kWriteProcedureMigrationVersion)),
            "0008_write_procedure");
  EXPECT_EQ(Text(procedure), "1");
  ManualClock clock(kStart);
  {
    Ledger ledger = OpenTestLedger(engine, {.clock = &clock});
    ASSERT_TRUE(ledger.DefineAsset({"CREDITS", 0}).ok());
    ASSERT_TRUE(
        ledger.OpenAccount({.id = "issuance", .asset = "CREDITS", .allow_negative = true}).ok());
    ASSERT_TRUE(ledger.OpenAccount({.id = "alice", .asset = "CREDITS"}).ok());
    Operation top_up = Operation::TopUp("issuance", "alice", "CREDITS", 7);
    top_up.metadata = {{"note", "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x99\x82"}};
    absl::StatusOr<Outcome> outcome = ledger.Submit({.key = "k1", .operation = top_up});
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    EXPECT_EQ(outcome->kind, OutcomeKind::kCommitted) << OutcomeToJson(*outcome).dump();
    absl::StatusOr<Transaction> read = ledger.GetTransaction(outcome->transaction.id);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(read->metadata, outcome->transaction.metadata);
  }
  EXPECT_EQ(Text(absl::StrCat("SELECT balance FROM ", table, "accounts WHERE id = 'alice'")), "7");
  engine.reset();
  ASSERT_TRUE(server_->Execute(absl::StrCat("DELETE FROM ", table,
                                            "schema_migrations WHERE version = ",
                                            kWriteProcedureMigrationVersion)).ok());
  std::shared_ptr<Engine> again = Open(database, /*migrate=*/false);
  ASSERT_NE(again, nullptr);
  ASSERT_TRUE(again->Migrate().ok());
  EXPECT_EQ(Text(procedure), "1");
}

// ------------------------------------------------------------ a hold row corrupted through SQL

// A hold placed straight through the storage contract (tests/support/hold_writes.h), so
// the test can then break its rows behind the engine's back.
class MysqlHoldRowsTest : public MysqlHoldsTest {
 protected:
  void SetUp() override {
    MysqlHoldsTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    database_ = Scratch("holds_rows");
    engine_ = Open(database_);
    ASSERT_NE(engine_, nullptr);
    ASSERT_TRUE(engine_->PutAsset({"CREDITS", 0}).ok());
    for (const char* id : {"alice", "bob"}) {
      Account account{.id = id, .asset = "CREDITS"};
      account.created_at = kStart;
      ASSERT_TRUE(engine_->InsertAccount(account).ok()) << id;
    }
  }

  std::string database_;
  std::shared_ptr<Engine> engine_;
};

// The shared row reader's checks: a hold transaction comes with its terms.
TEST_F(MysqlHoldRowsTest, AHoldTransactionWithoutItsHoldsRowIsDataLoss) {
  const Transaction hold =
      HoldTransaction("hold-1", {"alice", "bob", "CREDITS", 9, std::nullopt}, kStart);
  ASSERT_TRUE(PlaceHold(*engine_, hold).ok());
  ASSERT_TRUE(server_->Execute(absl::StrCat("DELETE FROM `", database_,
                                            "`.holds WHERE id = 'hold-1'")).ok());
  absl::StatusOr<std::optional<Transaction>> read = engine_->GetTransaction("hold-1");
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss) << read.status();
  EXPECT_EQ(engine_->ListTransactions("", 10).status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace ledger::testing
