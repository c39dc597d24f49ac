// Holds on the PostgreSQL engine: only what needs PostgreSQL itself. Migration 0003 on a
// database that already holds a ledger, and its all-or-nothing, rerunnable run; hold rows
// changed through SQL (a hold transaction without its holds row is DataLoss; a hold
// settled behind the engine's back fails the settling UPDATE's count check); and which of
// the two write-batch statements a batch goes out as. Everything the storage contract
// promises about hold rows on every engine (every read, pending amounts, a second
// settlement retryable, hold fields that do not fit the kind) is in
// tests/conformance/holds_storage_suite.cc, run here by conformance_postgres in both claim
// modes. Each test process works in a private database on the server named by
// LEDGER_TEST_POSTGRES_DSN.
#include <cstdint>
#include <functional>
#include <map>
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
#include "engines/postgres/postgres_binary_arrays.h"
#include "engines/postgres/postgres_engine.h"
#include "engines/postgres/postgres_migrations.h"
#include "engines/postgres/postgres_statements.h"
#include "engines/postgres/postgres_write_batch.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ledger/engine.h"
#include "ledger/hold.h"
#include "ledger/json.h"
#include "ledger/ledger.h"
#include "ledger/transaction.h"
#include "pqxx/connection"
#include "pqxx/transaction"
#include "tests/conformance/conformance_context.h"
#include "tests/engines/postgres/postgres_test_database.h"
#include "tests/support/hold_writes.h"
#include "tests/support/ledger_before_holds.h"
#include "tests/support/older_migrations.h"
#include "tests/support/history_before_reads_indexes.h"
#include "tests/support/keys_before_one_key_space.h"
#include "tests/support/open_ledger.h"

namespace ledger::testing {
namespace {

// schema/postgres/0003_holds.sql.
constexpr int kHoldsMigrationVersion = 3;
// schema/postgres/0004_one_key_space.sql.
constexpr int kOneKeySpaceMigrationVersion = 4;
constexpr int kReadsIndexesMigrationVersion = 5;  // schema/postgres/0005_reads_indexes.sql
// schema/postgres/0006_running_max_on_accounts.sql
constexpr int kRunningMaxOnAccountsMigrationVersion = 6;
// schema/postgres/0007_fewer_reads_indexes.sql
constexpr int kFewerReadsIndexesMigrationVersion = 7;
// schema/postgres/0009_fewer_checks_per_submit.sql
constexpr int kFewerChecksPerSubmitMigrationVersion = 9;

const absl::Time kStart = absl::FromUnixSeconds(1'767'225'600);  // 2026-01-01

class PostgresHoldsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string reason = PostgresUnavailableReason(); !reason.empty()) {
      if (RunningInCi()) GTEST_FAIL() << "postgres is required under CI=true: " << reason;
      GTEST_SKIP() << "postgres skipped: " << reason;
    }
  }

  // An emptied private database, fully migrated, and an engine on it.
  static std::shared_ptr<Engine> OpenFresh() {
    absl::StatusOr<std::unique_ptr<Engine>> engine =
        OpenFreshPostgresEngine(PostgresClaimMode::kAdvisoryLock, /*pool_size=*/4);
    EXPECT_TRUE(engine.ok()) << engine.status();
    return engine.ok() ? std::shared_ptr<Engine>(*std::move(engine)) : nullptr;
  }

  // An engine on the private database as it is, migrating it only if asked.
  static std::shared_ptr<Engine> Open(bool migrate) {
    PostgresOptions options;
    options.connection = *PostgresTestDsn();
    options.pool_size = 4;
    options.migrate = migrate;
    absl::StatusOr<std::unique_ptr<Engine>> engine = OpenPostgresEngine(options);
    EXPECT_TRUE(engine.ok()) << engine.status();
    return engine.ok() ? std::shared_ptr<Engine>(*std::move(engine)) : nullptr;
  }

  // Applies the migrations before 0003 to the (emptied) public schema through the
  // engine's own runner.
  static void MigrateBeforeHolds() { ASSERT_TRUE(MigrateBefore(kHoldsMigrationVersion).ok()); }

  // Applies the migrations before `version` through the engine's own runner.
  static absl::Status MigrateBefore(int version) {
    // A session without a watchdog: no reply deadline, the runner's statements only.
    postgres_internal::PostgresSession session;
    return GuardedPqxx([&](pqxx::connection&) {
      session.handle = std::make_unique<postgres_internal::BoundedConnection>(
          *PostgresTestDsn(), absl::Seconds(10));
      return postgres_internal::MigrateDatabase(
          session, MigrationsBefore(PostgresMigrations(), version));
    });
  }

  // Runs `body` on a new connection to the private database; a libpqxx exception
  // becomes an Internal status with its message.
  static absl::Status GuardedPqxx(const std::function<absl::Status(pqxx::connection&)>& body) {
    try {
      pqxx::connection connection(*PostgresTestDsn());
      return body(connection);
    } catch (const std::exception& e) {
      return absl::InternalError(e.what());
    }
  }

  // Runs statements; the status of the last.
  static absl::Status Sql(const std::string& sql) { return QueryPostgresValue(sql).status(); }

  static std::string Text(const std::string& sql) {
    absl::StatusOr<std::string> text = QueryPostgresValue(sql);
    EXPECT_TRUE(text.ok()) << text.status();
    return text.ok() ? *text : "";
  }

  // `write` runs through a Ledger on a fresh database with the latest schema (the engine
  // writes columns later migrations add, so it cannot write an older schema); that schema
  // is then set aside and its rows copied, in the older schema's columns, into a public
  // schema migrated only up to before `version`: `tables` in that order, entries in each
  // account's version order (0005's trigger reads the entry before each).
  static void WriteThenCopyIntoOlderSchema(int version, const std::vector<std::string>& tables,
                                           const std::function<void(Ledger&)>& write,
                                           ManualClock& clock) {
    {
      std::shared_ptr<Engine> source = OpenFresh();
      ASSERT_NE(source, nullptr);
      Ledger ledger = OpenTestLedger(source, {.clock = &clock});
      write(ledger);
    }
    ASSERT_TRUE(Sql("DROP SCHEMA IF EXISTS older_source CASCADE;"
                    " ALTER SCHEMA public RENAME TO older_source; CREATE SCHEMA public")
                    .ok());
    absl::Status older = MigrateBefore(version);
    ASSERT_TRUE(older.ok()) << older;
    for (const std::string& table : tables) {
      if (table == "transactions") {
        CopyRows("older_source", table, "reversal_of IS NOT NULL, id");
      } else if (table == "entries") {
        CopyRows("older_source", table, "account_id, account_version");
      } else {
        CopyRows("older_source", table);
      }
    }
    ASSERT_TRUE(Sql("SELECT setval(pg_get_serial_sequence('outbox_events', 'insert_order'),"
                    " (SELECT max(insert_order) FROM outbox_events))")
                    .ok());
    ASSERT_TRUE(Sql("DROP SCHEMA older_source CASCADE").ok());
  }

  // How many of the columns 0003 adds the public schema has.
  static std::string HoldColumns() {
    return Text(
        "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'public'"
        " AND column_name IN ('pending_debits', 'pending_credits', 'hold_id', 'settled_by')");
  }

  // Copies every row of `table` from schema `from` into the public schema, in the
  // columns the public table has (an older schema's), `order` first. Identity values
  // are copied as they are.
  static void CopyRows(const std::string& from, const std::string& table,
                       const std::string& order = "") {
    const std::string columns = Text(absl::StrCat(
        "SELECT string_agg(quote_ident(column_name), ', ' ORDER BY ordinal_position)"
        " FROM information_schema.columns WHERE table_schema = 'public' AND table_name = '",
        table, "'"));
    ASSERT_FALSE(columns.empty()) << table;
    absl::Status copied = Sql(absl::StrCat("INSERT INTO public.", table, " (", columns,
                                           ") OVERRIDING SYSTEM VALUE SELECT ", columns, " FROM ",
                                           from, ".", table, order.empty() ? "" : " ORDER BY ",
                                           order));
    ASSERT_TRUE(copied.ok()) << copied;
  }
};

// ------------------------------------------------------------ migrating a populated database

TEST_F(PostgresHoldsTest, PopulatedDatabaseMigratesToHoldsAndStillVerifies) {
  // The new engine cannot write an older schema (it reads and writes the new columns), so
  // a Ledger writes on the latest schema, that schema is set aside (renamed), and its rows
  // are copied, in the older schema's columns, into a public schema migrated only up to
  // 0002.
  ManualClock clock;
  LedgerRows before;
  {
    std::shared_ptr<Engine> source = OpenFresh();
    ASSERT_NE(source, nullptr);
    Ledger ledger = OpenTestLedger(source, {.clock = &clock});
    ASSERT_NO_FATAL_FAILURE(WriteLedgerBeforeHolds(ledger));
    before = ReadLedgerRows(*source);
  }
  ASSERT_TRUE(Sql("DROP SCHEMA IF EXISTS holds_source CASCADE;"
                  " ALTER SCHEMA public RENAME TO holds_source; CREATE SCHEMA public")
                  .ok());
  ASSERT_NO_FATAL_FAILURE(MigrateBeforeHolds());
  ASSERT_EQ(HoldColumns(), "0");
  // Parents first; a reversal after the transaction it reverses.
  for (const char* table : {"assets", "accounts"}) CopyRows("holds_source", table);
  CopyRows("holds_source", "transactions", "reversal_of IS NOT NULL, id");
  for (const char* table : {"entries", "idempotency_keys", "outbox_events"}) {
    CopyRows("holds_source", table);
  }
  // The copied events keep their insert order; new ones continue after it.
  ASSERT_TRUE(Sql("SELECT setval(pg_get_serial_sequence('outbox_events', 'insert_order'),"
                  " (SELECT max(insert_order) FROM outbox_events))")
                  .ok());
  ASSERT_TRUE(Sql("DROP SCHEMA holds_source CASCADE").ok());
  ASSERT_EQ(Text("SELECT count(*) FROM schema_migrations"),
            std::to_string(kHoldsMigrationVersion - 1));

  std::shared_ptr<Engine> migrated = Open(/*migrate=*/false);
  ASSERT_NE(migrated, nullptr);
  ASSERT_TRUE(migrated->Migrate().ok());
  EXPECT_EQ(Text("SELECT max(version) FROM schema_migrations"),
            std::to_string(PostgresMigrations().size()));
  EXPECT_EQ(HoldColumns(), "4");
  ASSERT_NO_FATAL_FAILURE(ExpectRowsSurviveTheHoldsMigration(*migrated, before));
  ExpectMigratedLedgerTakesHolds(migrated, &clock);
}

// PostgreSQL DDL is transactional: a run of 0003 that fails part-way leaves nothing
// behind, and a copy applied by hand (no schema_migrations row) does not stop the
// engine's own run, thanks to IF NOT EXISTS.
TEST_F(PostgresHoldsTest, HoldsMigrationIsAllOrNothingAndRerunnable) {
  const std::optional<Migration> migration =
      MigrationNumbered(PostgresMigrations(), kHoldsMigrationVersion);
  ASSERT_TRUE(migration.has_value());
  ASSERT_TRUE(ResetPostgresTestDatabase().ok());
  ASSERT_NO_FATAL_FAILURE(MigrateBeforeHolds());

  absl::Status failed = GuardedPqxx([&](pqxx::connection& connection) -> absl::Status {
    pqxx::work work(connection);
    work.exec(std::string(migration->sql));
    work.exec("SELECT 1 / 0");  // the run breaks after the last statement of 0003
    work.commit();
    return absl::OkStatus();
  });
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(HoldColumns(), "0");
  EXPECT_EQ(Text("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
                 " AND tablename = 'holds'"),
            "0");

  ASSERT_TRUE(GuardedPqxx([&](pqxx::connection& connection) -> absl::Status {
                pqxx::work work(connection);
                work.exec(std::string(migration->sql));
                work.commit();
                return absl::OkStatus();
              }).ok());
  std::shared_ptr<Engine> engine = Open(/*migrate=*/true);
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(HoldColumns(), "4");
  EXPECT_EQ(Text("SELECT max(version) FROM schema_migrations"),
            std::to_string(PostgresMigrations().size()));
  EXPECT_TRUE(engine->ListHolds("", "", 10).ok());
}

// ------------------------------------------------------------ hold rows changed through SQL

// A hold placed straight through the storage contract (tests/support/hold_writes.h), so
// the test can then change its rows behind the engine's back.
class PostgresHoldRowsTest : public PostgresHoldsTest {
 protected:
  void SetUp() override {
    PostgresHoldsTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    engine_ = OpenFresh();
    ASSERT_NE(engine_, nullptr);
    ASSERT_TRUE(engine_->PutAsset({"CREDITS", 0}).ok());
    for (const char* id : {"alice", "bob"}) {
      Account account{.id = id, .asset = "CREDITS"};
      account.created_at = kStart;
      ASSERT_TRUE(engine_->InsertAccount(account).ok()) << id;
    }
  }

  std::shared_ptr<Engine> engine_;
};

// The shared row reader's checks: a hold transaction comes with its terms.
TEST_F(PostgresHoldRowsTest, AHoldTransactionWithoutItsHoldsRowIsDataLoss) {
  const Transaction hold =
      HoldTransaction("hold-1", {"alice", "bob", "CREDITS", 9, std::nullopt}, kStart);
  ASSERT_TRUE(PlaceHold(*engine_, hold).ok());
  ASSERT_TRUE(Sql("DELETE FROM holds WHERE id = 'hold-1'").ok());
  absl::StatusOr<std::optional<Transaction>> read = engine_->GetTransaction("hold-1");
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss) << read.status();
  EXPECT_EQ(engine_->ListTransactions("", 10).status().code(), absl::StatusCode::kDataLoss);
}

// A hold that is no longer pending when its settlement is written, though no other
// transaction names it in hold_id (here: settled behind the engine's back, which only
// SQL can do), fails the settling UPDATE's count check, retryably, and nothing of the
// settlement stays. Through the storage contract alone a hold stops being pending only by
// a settlement naming it: the suite's second-settlement case.
TEST_F(PostgresHoldRowsTest, SettlingAHoldNoLongerPendingIsRetryable) {
  const HoldTerms terms{"alice", "bob", "CREDITS", 30, std::nullopt};
  ASSERT_TRUE(PlaceHold(*engine_, HoldTransaction("hold-1", terms, kStart)).ok());
  ASSERT_TRUE(
      Sql("UPDATE holds SET status = 'voided', settled_by = 'hold-1' WHERE id = 'hold-1'").ok());

  absl::Status settled = SettleHold(
      *engine_, Settlement("capture-1", OperationKind::kCapture, "hold-1", kStart), terms, 30);
  EXPECT_TRUE(IsRetryable(settled)) << settled;
  EXPECT_NE(settled.message().find("hold-1 is not pending"), std::string_view::npos) << settled;
  EXPECT_EQ(*engine_->GetTransaction("capture-1"), std::nullopt);
  absl::StatusOr<std::optional<Account>> alice = engine_->GetAccount("alice");
  ASSERT_TRUE(alice.ok() && alice->has_value()) << alice.status();
  EXPECT_EQ((*alice)->pending_debits, 30);  // the update of the pending amounts rolled back
  EXPECT_EQ((*alice)->balance, 0);
}

// ------------------------------------------------------------ which parts a batch sends

Account AccountWith(const std::string& id, Amount balance, int64_t version, Amount pending_debits,
                    Amount pending_credits) {
  Account account{.id = id, .asset = "CREDITS", .balance = balance, .version = version};
  account.pending_debits = pending_debits;
  account.pending_credits = pending_credits;
  return account;
}

// A binary array parameter (engines/postgres/postgres_binary_arrays.h) as the literal
// a reader would write: {"a",NULL} or {1,2}. Its bytes are checked against the
// server's in postgres_binary_arrays_test.cc; here, only what they hold.
std::string LiteralOf(const postgres_internal::BinaryArray& array) {
  size_t offset = 0;
  const auto next = [&](int bytes) {
    uint64_t value = 0;
    for (int i = 0; i < bytes; ++i) {
      value = (value << 8) | static_cast<unsigned char>(array.bytes.at(offset++));
    }
    return value;
  };
  const auto dimensions = static_cast<int32_t>(next(4));
  next(4);  // has-nulls
  const auto element = static_cast<postgres_internal::ArrayElement>(next(4));
  const int32_t length = dimensions == 0 ? 0 : static_cast<int32_t>(next(4));
  if (dimensions != 0) next(4);  // lower bound
  std::vector<std::string> elements;
  for (int32_t i = 0; i < length; ++i) {
    const auto size = static_cast<int32_t>(next(4));
    if (size < 0) {
      elements.push_back("NULL");
    } else if (element == postgres_internal::ArrayElement::kText) {
      elements.push_back(absl::StrCat("\"", array.bytes.substr(offset, size), "\""));
      offset += size;
    } else {
      const uint64_t bits = next(size);
      elements.push_back(absl::StrCat(size == 8 ? static_cast<int64_t>(bits)
                                                : static_cast<int32_t>(bits)));
    }
  }
  EXPECT_EQ(offset, array.bytes.size()) << "bytes left after the last element";
  return absl::StrCat("{", absl::StrJoin(elements, ","), "}");
}

// Each batch's write statement holds only the parts it has rows for: a plain transfer
// its transaction, entries, accounts, key record and event; metadata, a hold placed or
// settled, a change of pending amounts, a key over an expired record or a claim no item
// committed add their parts. Each entry carries its account's running maximum, and each
// account its latest (engines/common/entry_running_max.h). No server needed.
TEST(PostgresWriteBatchTest, EachBatchSendsOnlyThePartsItHasRowsFor) {
  using postgres_internal::LockedAccount;
  using postgres_internal::PostgresWriteBatch;
  using postgres_internal::WriteParameter;
  using postgres_internal::WritePart;
  using postgres_internal::WriteParts;
  const std::map<std::string, LockedAccount> locked = {{"alice", {3, 40, 0}},
                                                      {"bob", {7, 0, 40}}};
  Transaction transfer{.id = "t-1", .kind = OperationKind::kTransfer, .created_at = kStart};
  transfer.entries = {{"alice", "CREDITS", -5, 95, 4}, {"bob", "CREDITS", 5, 5, 8}};
  const KeyRecord key{.identity = {.key_namespace = "operations", .scope = Scope{}, .key = "k"},
                      .fingerprint = "f",
                      .transaction_id = "t-1",
                      .created_at = kStart,
                      .expires_at = kStart + absl::Hours(24)};
  const OutboxEvent event{.transaction_id = "t-1", .type = "transaction.committed", .payload = "{}"};
  const WriteParts submit = WriteParts()
                                .With(WritePart::kTransactions)
                                .With(WritePart::kEntries)
                                .With(WritePart::kAccounts)
                                .With(WritePart::kNewKeys)
                                .With(WritePart::kEvents);
  // The parameter of `batch` named `parameter`, as an array literal.
  const auto parameter = [](const PostgresWriteBatch& batch, WriteParameter named) {
    return LiteralOf(
        batch.Parameters()[postgres_internal::WriteParameterIndex(named, batch.Parts())]);
  };

  // What LockAccounts would note: alice's latest entry an hour after this transfer (a
  // clock stepped back), bob without one.
  const absl::Time later = kStart + absl::Hours(1);
  const auto noted = [&](PostgresWriteBatch& batch) {
    batch.NoteLocked("alice", later);
    batch.NoteLocked("bob", std::nullopt);
  };
  const auto add_transfer = [&](PostgresWriteBatch& batch, const Transaction& transaction,
                                std::vector<Account> accounts) {
    noted(batch);
    ASSERT_TRUE(batch.AddTransaction(transaction, accounts, locked).ok());
  };
  const std::vector<Account> transferred = {AccountWith("alice", 95, 4, 40, 0),
                                            AccountWith("bob", 5, 8, 0, 40)};

  PostgresWriteBatch plain;  // an advisory-mode submit: its key record goes with the write
  add_transfer(plain, transfer, transferred);
  plain.AddKeyRecord(key, /*claim_found_row=*/false);
  plain.AddEvent(event);
  EXPECT_EQ(plain.Parts(), submit);
  // One transaction: its rows inline, one scalar per column and row (WriteShape).
  EXPECT_EQ(plain.Statement().name,
            absl::StrCat("write_batch_", absl::Hex(submit.bits()), "_rows_1_2_2_1_1"));
  EXPECT_EQ(plain.Statement().parameter_count, 6 + 9 * 2 + 5 * 2 + 7 + 4 + 5);
  // 6 + 9 + 5 + 7 + 4 arrays and the expected counts.
  EXPECT_EQ(plain.Parameters().size(), 32u);
  EXPECT_EQ(LiteralOf(plain.Parameters().back()), "{1,2,2,1,1}");
  const std::string maxima =
      absl::StrCat("{", absl::ToUnixMicros(later), ",", absl::ToUnixMicros(kStart), "}");
  EXPECT_EQ(parameter(plain, WriteParameter::kEntryRunningMaxima), maxima);
  EXPECT_EQ(parameter(plain, WriteParameter::kAccountEntriesRunningMax), maxima);  // alice, bob
  for (const std::string_view absent :
       {"new_metadata", "replaced_keys", "dropped_claims", "new_holds", "settled_holds",
        "pending_debits", "hold_id"}) {
    EXPECT_EQ(plain.Statement().sql.find(absent), std::string::npos) << absent;
  }

  // Transfers between alice and bob, one after another: 2 entries each, 2 accounts in
  // all. Up to four keep every part within kInlineRowsMax rows: inline; a fifth makes
  // 10 entries: arrays, one per column.
  PostgresWriteBatch several;
  add_transfer(several, transfer, transferred);
  for (int next = 2; next <= 5; ++next) {
    Transaction more = transfer;
    more.id = absl::StrCat("t-", next);
    const Amount alice_balance = 100 - 5 * next;
    more.entries = {{"alice", "CREDITS", -5, alice_balance, 3 + next},
                    {"bob", "CREDITS", 5, 5 * next, 7 + next}};
    ASSERT_TRUE(several
                    .AddTransaction(more,
                                    {AccountWith("alice", alice_balance, 3 + next, 40, 0),
                                     AccountWith("bob", 5 * next, 7 + next, 0, 40)},
                                    locked)
                    .ok());
    const bool within = 2 * next <= PostgresWriteBatch::kInlineRowsMax;
    EXPECT_EQ(several.Shape().inline_rows.has_value(), within) << next << " transfers";
    EXPECT_EQ(several.Statement().name,
              within ? absl::StrCat("write_batch_", absl::Hex(several.Parts().bits()), "_rows_",
                                    next, "_", 2 * next, "_2")
                     : absl::StrCat("write_batch_", absl::Hex(several.Parts().bits())))
        << next << " transfers";
    EXPECT_EQ(several.Statement().sql.find("VALUES") != std::string::npos, within);
  }

  PostgresWriteBatch row_mode;  // the row claim inserted the key's final record
  add_transfer(row_mode, transfer, transferred);
  row_mode.AddEvent(event);
  EXPECT_EQ(row_mode.Parts(),
            WriteParts().With(WritePart::kTransactions).With(WritePart::kEntries)
                .With(WritePart::kAccounts).With(WritePart::kEvents));

  Transaction tagged = transfer;
  tagged.metadata = R"({"order":"o-1","count":3})";  // one string member indexed
  PostgresWriteBatch with_metadata;
  add_transfer(with_metadata, tagged, transferred);
  EXPECT_EQ(with_metadata.Parts(),
            WriteParts().With(WritePart::kTransactions).With(WritePart::kMetadata)
                .With(WritePart::kEntries).With(WritePart::kAccounts));
  EXPECT_EQ(parameter(with_metadata, WriteParameter::kMetadataNames), "{\"order\"}");
  EXPECT_EQ(with_metadata.Expected()[WritePart::kMetadata], 1);

  PostgresWriteBatch replacing;  // the claim found an expired record under the key
  add_transfer(replacing, transfer, transferred);
  replacing.AddKeyRecord(key, /*claim_found_row=*/true);
  EXPECT_TRUE(replacing.Parts().Has(WritePart::kReplacedKeys));
  EXPECT_FALSE(replacing.Parts().Has(WritePart::kNewKeys));
  EXPECT_EQ(parameter(replacing, WriteParameter::kReplacedKeys), "{\"k\"}");

  PostgresWriteBatch rejected;  // row mode: the batch's only item was rejected
  rejected.DropUnusedClaim(key.identity);
  EXPECT_EQ(rejected.Parts(), WriteParts().With(WritePart::kDroppedClaims));
  std::vector<std::string> rejected_literals;
  for (const postgres_internal::BinaryArray& array : rejected.Parameters()) {
    rejected_literals.push_back(LiteralOf(array));
  }
  EXPECT_EQ(rejected_literals,
            (std::vector<std::string>{"{\"operations\"}", "{\"default/default\"}", "{\"k\"}", "{1}"}));

  PostgresWriteBatch pending_changed;  // not written by any kind today, stored all the same
  add_transfer(pending_changed, transfer, {AccountWith("alice", 95, 4, 39, 0)});
  EXPECT_EQ(pending_changed.Parts(),
            WriteParts().With(WritePart::kTransactions).With(WritePart::kEntries)
                .With(WritePart::kAccounts).With(WritePart::kPendingAmounts));
  EXPECT_EQ(parameter(pending_changed, WriteParameter::kAccountPendingDebits), "{39}");

  Transaction hold{.id = "h-1", .kind = OperationKind::kHold, .created_at = kStart};
  hold.hold = HoldTerms{"alice", "bob", "CREDITS", 10, kStart + absl::Hours(1)};
  PostgresWriteBatch placing;
  ASSERT_TRUE(placing
                  .AddTransaction(hold,
                                  {AccountWith("alice", 100, 3, 50, 0),
                                   AccountWith("bob", 0, 7, 0, 50)},
                                  locked)
                  .ok());
  EXPECT_EQ(placing.Parts(),
            WriteParts().With(WritePart::kTransactions).With(WritePart::kAccounts)
                .With(WritePart::kNewHolds).With(WritePart::kPendingAmounts));
  EXPECT_EQ(placing.Statement().sql.find("hold_id"), std::string::npos);  // no settlement
  EXPECT_EQ(parameter(placing, WriteParameter::kAccountPendingDebits), "{50,0}");  // by id
  EXPECT_EQ(parameter(placing, WriteParameter::kAccountPendingCredits), "{0,50}");
  EXPECT_EQ(parameter(placing, WriteParameter::kHoldIds), "{\"h-1\"}");
  EXPECT_EQ(parameter(placing, WriteParameter::kHoldExpiresAt),
            absl::StrCat("{", absl::ToUnixMicros(kStart + absl::Hours(1)), "}"));
  EXPECT_EQ(placing.Expected()[WritePart::kNewHolds], 1);
  EXPECT_EQ(placing.Expected()[WritePart::kSettledHolds], 0);

  Transaction expire{.id = "e-1", .kind = OperationKind::kExpire, .created_at = kStart};
  expire.hold_id = "h-0";
  PostgresWriteBatch settling;
  ASSERT_TRUE(settling
                  .AddTransaction(expire,
                                  {AccountWith("alice", 100, 3, 30, 0),
                                   AccountWith("bob", 0, 7, 0, 30)},
                                  locked)
                  .ok());
  EXPECT_EQ(settling.Parts(),
            WriteParts().With(WritePart::kTransactions).With(WritePart::kAccounts)
                .With(WritePart::kSettledHolds).With(WritePart::kPendingAmounts));
  EXPECT_EQ(parameter(settling, WriteParameter::kTransactionHoldIds), "{\"h-0\"}");
  EXPECT_EQ(parameter(settling, WriteParameter::kSettledHoldIds), "{\"h-0\"}");
  EXPECT_EQ(parameter(settling, WriteParameter::kSettledHoldStatuses), "{\"expired\"}");
  EXPECT_EQ(parameter(settling, WriteParameter::kSettledHoldSettledBy), "{\"e-1\"}");
  EXPECT_EQ(settling.Expected()[WritePart::kSettledHolds], 1);
  postgres_internal::WriteBatchCounts applied = settling.Expected();
  applied[WritePart::kSettledHolds] = 0;
  const absl::Status check = settling.CheckApplied(applied);
  EXPECT_TRUE(IsRetryable(check)) << check;

  // A kind that cannot settle a hold is refused before anything is buffered.
  Transaction wrong = expire;
  wrong.kind = OperationKind::kTransfer;
  PostgresWriteBatch refused;
  EXPECT_EQ(refused.AddTransaction(wrong, {}, locked).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(refused.empty());
}

// Issue 30: keys an older release wrote under the operation's kind replay through the
// one default space once 0004 has run (tests/support/keys_before_one_key_space.h), and
// a second run of its SQL copies nothing more.
TEST_F(PostgresHoldsTest, OneKeySpaceMigrationMakesOldPerKindKeysReplay) {
  ManualClock clock(kStart);
  KeysBeforeOneKeySpace before;
  ASSERT_NO_FATAL_FAILURE(WriteThenCopyIntoOlderSchema(
      kOneKeySpaceMigrationVersion,
      {"assets", "accounts", "transactions", "holds", "entries", "idempotency_keys",
       "outbox_events"},
      [&](Ledger& ledger) { before = WriteKeysOfPerKindSpaces(ledger, clock); }, clock));
  std::shared_ptr<Engine> engine = Open(/*migrate=*/false);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->Migrate().ok());
  EXPECT_EQ(Text("SELECT name FROM schema_migrations WHERE version = 4"), "0004_one_key_space");
  // pay-1, shared (the transfer), hold-1 copied; http-1 was there already.
  EXPECT_EQ(Text("SELECT string_agg(key, ',' ORDER BY key) FROM idempotency_keys"
                 " WHERE namespace = 'operations'"),
            "hold-1,http-1,pay-1,shared");
  const std::optional<Migration> migration =
      MigrationNumbered(PostgresMigrations(), kOneKeySpaceMigrationVersion);
  ASSERT_TRUE(migration.has_value());
  ExpectMigrationNamesEveryOldSpace(migration->sql);
  ASSERT_TRUE(Sql(std::string(migration->sql)).ok());
  EXPECT_EQ(Text("SELECT count(*) FROM idempotency_keys"), "9");  // 6 written, 3 copied
  Ledger upgraded = OpenTestLedger(engine, {.clock = &clock});
  ExpectOldKeysReplayInTheOneKeySpace(upgraded, before);
}

// Issues 27 and 31: migration 0005 computes the running maximum of existing entries and
// indexes existing metadata; 0006 puts each account's latest running maximum on its row,
// and the write path keeps all three afterwards.
TEST_F(PostgresHoldsTest, ReadsIndexesMigrationAnswersOldHistoryByIndex) {
  ManualClock clock(kStart);
  HistoryBeforeReadsIndexes before;
  ASSERT_NO_FATAL_FAILURE(WriteThenCopyIntoOlderSchema(
      kReadsIndexesMigrationVersion,
      {"assets", "accounts", "transactions", "entries", "idempotency_keys", "outbox_events"},
      [&](Ledger& ledger) { before = WriteHistoryBeforeReadsIndexes(ledger, clock); }, clock));
  std::shared_ptr<Engine> engine = Open(/*migrate=*/false);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->Migrate().ok());
  EXPECT_EQ(Text("SELECT string_agg(name, ',' ORDER BY version) FROM schema_migrations"
                 " WHERE version >= 5"),
            "0005_reads_indexes,0006_running_max_on_accounts,0007_fewer_reads_indexes,"
            "0008_write_check_function,0009_fewer_checks_per_submit");
  EXPECT_EQ(Text("SELECT count(*) FROM entries WHERE created_at_running_max IS NULL"), "0");
  Ledger upgraded = OpenTestLedger(engine, {.clock = &clock});
  ExpectReadsIndexesAfterMigration(upgraded, *engine, clock, before);
}

// The public schema's tables, columns, indexes, triggers and functions, as text.
std::string SchemaText() {
  absl::StatusOr<std::string> text = QueryPostgresValue(
      "SELECT string_agg(line, E'\\n' ORDER BY line) FROM ("
      " SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' '"
      "   || is_nullable || ' ' || coalesce(column_default, '') AS line"
      " FROM information_schema.columns WHERE table_schema = 'public'"
      " UNION ALL SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'public'"
      " UNION ALL SELECT 'trigger ' || trigger_name FROM information_schema.triggers"
      "   WHERE trigger_schema = 'public'"
      " UNION ALL SELECT 'function ' || routine_name FROM information_schema.routines"
      "   WHERE routine_schema = 'public') AS schema_lines");
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? *text : "";
}

// Issue 27: 0006 fills accounts.entries_running_max from the entries (alice's is her
// latest, at 300 s), drops 0005's triggers and their functions, and leaves the schema a
// fresh database has. The write after it (a commit at 250 s, in
// ExpectReadsIndexesAfterMigration) continues from the filled column: were it left NULL,
// that entry would take 250 s as its running maximum and the balance as of 299 s would
// count it.
TEST_F(PostgresHoldsTest, RunningMaxOnAccountsMigrationContinuesTheHistory) {
  ManualClock clock(kStart);
  HistoryBeforeReadsIndexes before;
  // 0005's triggers fill transaction_metadata and the running maxima as the rows go in.
  ASSERT_NO_FATAL_FAILURE(WriteThenCopyIntoOlderSchema(
      kRunningMaxOnAccountsMigrationVersion,
      {"assets", "accounts", "transactions", "entries", "idempotency_keys", "outbox_events"},
      [&](Ledger& ledger) { before = WriteHistoryBeforeReadsIndexes(ledger, clock); }, clock));
  EXPECT_EQ(Text("SELECT count(*) FROM information_schema.triggers"
                 " WHERE trigger_schema = 'public'"),
            "2");
  EXPECT_EQ(Text("SELECT count(*) FROM transaction_metadata"), "2");
  std::shared_ptr<Engine> engine = Open(/*migrate=*/false);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->Migrate().ok());
  EXPECT_EQ(Text("SELECT name FROM schema_migrations WHERE version = 6"),
            "0006_running_max_on_accounts");
  // The triggers and their functions are gone; what remains is 0008's write check and
  // 0009's guard, which runs on no submit's statement.
  EXPECT_EQ(Text("SELECT string_agg(DISTINCT action_statement, ',') FROM information_schema.triggers"
                 " WHERE trigger_schema = 'public'"),
            "EXECUTE FUNCTION ledger_refuse_removal()");
  EXPECT_EQ(Text("SELECT string_agg(routine_name, ',' ORDER BY routine_name)"
                 " FROM information_schema.routines"
                 " WHERE routine_schema = 'public' AND routine_name LIKE 'ledger_%'"),
            "ledger_check_write_counts,ledger_refuse_removal");
  EXPECT_EQ(Text("SELECT entries_running_max FROM accounts WHERE id = 'alice'"),
            absl::StrCat(absl::ToUnixMicros(kStart + absl::Seconds(300))));
  Ledger upgraded = OpenTestLedger(engine, {.clock = &clock});
  ExpectReadsIndexesAfterMigration(upgraded, *engine, clock, before);
  const std::string migrated = SchemaText();
  engine.reset();
  ASSERT_NE(OpenFresh(), nullptr);
  EXPECT_EQ(SchemaText(), migrated);
}

// Issue 27: 0007 drops entries_by_account_as_of and transactions_by_time; the engine
// finds the balance as of an instant by a binary search over the primary key and lists
// transactions without a filter by merging the kind index's ranges instead: on a database
// written before it, every as-of answer is the one the dropped index's lookup gave, the
// listing is the (created_at, id) order, and the schema is a fresh database's.
TEST_F(PostgresHoldsTest, FewerReadsIndexesMigrationDropsTwoIndexesAndAnswersAsBefore) {
  ManualClock clock(kStart);
  HistoryBeforeReadsIndexes before;
  ASSERT_NO_FATAL_FAILURE(WriteThenCopyIntoOlderSchema(
      kFewerReadsIndexesMigrationVersion,
      {"assets", "accounts", "transactions", "transaction_metadata", "entries",
       "idempotency_keys", "outbox_events"},
      [&](Ledger& ledger) { before = WriteHistoryBeforeReadsIndexes(ledger, clock); }, clock));
  const std::string index_count =
      "SELECT count(*) FROM pg_indexes WHERE schemaname = 'public'"
      " AND indexname IN ('entries_by_account_as_of', 'transactions_by_time')";
  EXPECT_EQ(Text(index_count), "2");
  const std::string by_time =
      Text("SELECT string_agg(id, ',' ORDER BY created_at, id) FROM transactions");
  const std::vector<absl::Time> instants = InstantsAroundHistory(kStart);
  std::vector<int64_t> by_the_index;
  for (absl::Time at : instants) {
    by_the_index.push_back(std::stoll(Text(VersionAsOfByTheDroppedIndexSql("entries", at))));
  }
  std::shared_ptr<Engine> engine = Open(/*migrate=*/false);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->Migrate().ok());
  EXPECT_EQ(Text("SELECT name FROM schema_migrations WHERE version = 7"),
            "0007_fewer_reads_indexes");
  EXPECT_EQ(Text(index_count), "0");
  EXPECT_EQ(VersionsAsOf(*engine, "alice", instants), by_the_index);
  EXPECT_EQ(by_the_index[0], 0);  // an hour before the history
  EXPECT_EQ(by_the_index[1], 5);  // an hour after it
  Ledger upgraded = OpenTestLedger(engine, {.clock = &clock});
  EXPECT_EQ(absl::StrJoin(ListedWithoutAFilter(upgraded), ","), by_time);
  ExpectReadsIndexesAfterMigration(upgraded, *engine, clock, before);
  const std::string migrated = SchemaText();
  engine.reset();
  ASSERT_NE(OpenFresh(), nullptr);
  EXPECT_EQ(SchemaText(), migrated);
}

// Issue 29: 0009 drops the foreign keys of the rows the checked write inserts (entries,
// transaction_metadata) and indexes the nullable reversal_of and sequence only where they
// are set. On a database written before it: the history reads as before, the parents the
// keys protected still cannot be removed (nor can an account without entries, or by
// TRUNCATE), the lookups of the now partial indexes still use them in a generic plan, a
// second reversal is still refused, and the schema is a fresh database's.
TEST_F(PostgresHoldsTest, FewerChecksPerSubmitMigrationKeepsTheGuardsAndTheLookups) {
  ManualClock clock(kStart);
  HistoryBeforeReadsIndexes before;
  ASSERT_NO_FATAL_FAILURE(WriteThenCopyIntoOlderSchema(
      kFewerChecksPerSubmitMigrationVersion,
      {"assets", "accounts", "transactions", "transaction_metadata", "entries",
       "idempotency_keys", "outbox_events"},
      [&](Ledger& ledger) { before = WriteHistoryBeforeReadsIndexes(ledger, clock); }, clock));
  const std::string foreign_keys =
      "SELECT count(*) FROM pg_constraint WHERE contype = 'f'"
      " AND conrelid IN ('entries'::regclass, 'transaction_metadata'::regclass)";
  EXPECT_EQ(Text(foreign_keys), "3");
  std::shared_ptr<Engine> engine = Open(/*migrate=*/false);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->Migrate().ok());
  EXPECT_EQ(Text("SELECT name FROM schema_migrations WHERE version = 9"),
            "0009_fewer_checks_per_submit");
  EXPECT_EQ(Text(foreign_keys), "0");
  EXPECT_EQ(Text("SELECT string_agg(indexname, ',' ORDER BY indexname) FROM pg_indexes"
                 " WHERE schemaname = 'public' AND tablename IN ('transactions', 'outbox_events')"
                 " AND indexdef LIKE '%UNIQUE%WHERE%IS NOT NULL%'"),
            "outbox_events_by_sequence,transactions_by_hold_id,transactions_by_reversal_of");

  Ledger upgraded = OpenTestLedger(engine, {.clock = &clock});
  ASSERT_TRUE(upgraded.OpenAccount({.id = "carol", .asset = "CREDITS"}).ok());
  const std::string counts =
      "SELECT (SELECT count(*) FROM accounts) || '/' || (SELECT count(*) FROM transactions)"
      " || '/' || (SELECT count(*) FROM entries)";
  const std::string counted = Text(counts);
  for (const char* removal :
       {"DELETE FROM accounts WHERE id = 'alice'", "DELETE FROM accounts WHERE id = 'carol'",
        "UPDATE accounts SET id = 'alicia' WHERE id = 'alice'", "TRUNCATE accounts CASCADE",
        "DELETE FROM transactions", "UPDATE transactions SET id = id || '-renamed'",
        "TRUNCATE transactions CASCADE"}) {
    absl::Status refused = Sql(removal);
    EXPECT_FALSE(refused.ok()) << removal;
    EXPECT_THAT(refused.message(), ::testing::HasSubstr("are never removed or renumbered"))
        << removal;
  }
  EXPECT_EQ(Text(counts), counted);

  // With sequential scans priced out, a plan uses a partial index only if its predicate
  // implies IS NOT NULL, as each lookup's does (a generic plan: $1 unknown).
  const auto generic_plan = [&](const std::string& types, const std::string& query,
                                const std::string& arguments) {
    return Text(absl::StrCat("SET plan_cache_mode = force_generic_plan; SET enable_seqscan = off;"
                             " PREPARE lookup(", types, ") AS ", query,
                             "; EXPLAIN (FORMAT JSON) EXECUTE lookup(", arguments, ")"));
  };
  EXPECT_THAT(generic_plan("text", "SELECT EXISTS (SELECT 1 FROM transactions WHERE reversal_of = $1)",
                           "'x'"),
              ::testing::HasSubstr("transactions_by_reversal_of"));
  EXPECT_THAT(generic_plan("bigint, bigint",
                           "SELECT sequence FROM outbox_events WHERE sequence > $1"
                           " ORDER BY sequence LIMIT $2",
                           "0, 10"),
              ::testing::HasSubstr("outbox_events_by_sequence"));
  EXPECT_THAT(generic_plan("bigint", "SELECT max(sequence) + $1 FROM outbox_events", "0"),
              ::testing::HasSubstr("outbox_events_by_sequence"));

  ExpectReadsIndexesAfterMigration(upgraded, *engine, clock, before);
  const absl::StatusOr<Outcome> reversed =
      upgraded.Submit({.key = "reverse-once", .operation = Operation::Reverse(before.order_a.front())});
  ASSERT_TRUE(reversed.ok()) << reversed.status();
  ASSERT_EQ(reversed->kind, OutcomeKind::kCommitted) << OutcomeToJson(*reversed).dump();
  const absl::StatusOr<Outcome> again =
      upgraded.Submit({.key = "reverse-twice", .operation = Operation::Reverse(before.order_a.front())});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->kind, OutcomeKind::kRejected) << OutcomeToJson(*again).dump();
  const std::string migrated = SchemaText();
  engine.reset();
  ASSERT_NE(OpenFresh(), nullptr);
  EXPECT_EQ(SchemaText(), migrated);
}

}  // namespace
}  // namespace ledger::testing
