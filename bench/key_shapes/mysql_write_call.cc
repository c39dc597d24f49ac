// A uniform transfer's single submit on MariaDB/MySQL, written three ways on the engine's
// own schema, to size the "writes as a stored procedure" design before the engine takes
// it (docs/engines/mysql.md, "Possible next steps"; driven by mysql_write_call.sh):
//
//   statements   what the engine sends today: the key's record, the accounts' lock, then
//                the transaction, the entries, the accounts (guarded by what the lock
//                read) and the event as four prepared statements, and COMMIT: 7 round trips
//   call         the same claim and lock, then one prepared `CALL ledger_write_json(doc,
//                0)` taking the four writes' rows as one JSON document, and COMMIT: 4
//   call-commit  the same CALL committing at its end: 3
//   two-calls    the claim and the lock as one CALL too (ledger_claim_lock, the accounts
//                its result set), then the committing CALL: 2
//
// Every thread has its own session and runs transfers between two random accounts of
// bench-user-000000 .. bench-user-<accounts - 1> until --seconds have passed. Prints
// "mode clients committed per_second failed client_cpu_us_per_op". Any failed transfer
// (none is expected: the locks are taken in id order and every key is new) makes the
// exit status 1. The password comes from MYSQL_PWD, never from the command line.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <stdexcept>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <cppconn/connection.h>
#include <cppconn/exception.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <mysql_driver.h>

#include "CLI/CLI.hpp"

namespace {

enum class Mode { kStatements, kCall, kCallCommit, kTwoCalls };

struct Options {
  std::string host = "127.0.0.1";
  int port = 3306;
  std::string user = "root";
  std::string database;
  Mode mode = Mode::kStatements;
  int clients = 1;
  int seconds = 5;
  int accounts = 10000;
};

struct Counters {
  std::atomic<long> committed{0};
  std::atomic<long> failed{0};
  std::atomic<bool> stop{false};
};

constexpr const char* kFingerprint =
    "e5657029d5438b3477aa63f2fa320521d0aaa5649b16cf91900ef66b2d2386f8";

std::string AccountId(int index) {
  char id[32];
  std::snprintf(id, sizeof id, "bench-user-%06d", index);
  return id;
}

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// One side of the transfer: what the lock read and what the write leaves.
struct Leg {
  std::string account;
  int64_t balance = 0;
  int64_t version = 0;
  int64_t amount = 0;  // negative on the debited side
};

struct Transfer {
  std::string key;
  std::string transaction_id;
  int64_t now = 0;
  Leg legs[2];
};

class Session {
 public:
  Session(sql::Driver& driver, const Options& options) : mode_(options.mode) {
    sql::ConnectOptionsMap connect;
    connect["hostName"] = "tcp://" + options.host + ":" + std::to_string(options.port);
    connect["userName"] = options.user;
    const char* password = std::getenv("MYSQL_PWD");
    connect["password"] = std::string(password == nullptr ? "" : password);
    connect["schema"] = options.database;
    connect["OPT_CHARSET_NAME"] = std::string("utf8mb4");
    connection_.reset(driver.connect(connect));
    connection_->setAutoCommit(false);
    std::unique_ptr<sql::Statement>(connection_->createStatement())
        ->execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
    claim_ = Prepare(
        "INSERT INTO idempotency_keys (namespace, scope, `key`, fingerprint, state, "
        "transaction_id, created_at, expires_at) VALUES ('operations', 'bench/write_call', ?, ?, "
        "'committed', ?, ?, ?)");
    lock_ = Prepare(
        "SELECT id, balance, version FROM accounts FORCE INDEX (PRIMARY) WHERE id IN (?, ?) "
        "ORDER BY id FOR UPDATE");
    transaction_ = Prepare(
        "INSERT INTO transactions (id, kind, created_at, metadata, reversal_of, fingerprint, "
        "hold_id) VALUES (?, 'transfer', ?, '{}', NULL, ?, NULL)");
    entries_ = Prepare(
        "INSERT INTO entries (account_id, account_version, transaction_id, entry_index, asset, "
        "amount, balance_after, created_at, created_at_running_max) VALUES "
        "(?, ?, ?, 0, 'BENCH', ?, ?, ?, ?), (?, ?, ?, 1, 'BENCH', ?, ?, ?, ?)");
    accounts_ = Prepare(
        "UPDATE accounts SET balance = CASE id WHEN ? THEN ? WHEN ? THEN ? END, "
        "version = CASE id WHEN ? THEN ? WHEN ? THEN ? END, "
        "entries_running_max = COALESCE(CASE id WHEN ? THEN ? WHEN ? THEN ? END, "
        "entries_running_max) WHERE id IN (?, ?) AND (id, balance, version, pending_debits, "
        "pending_credits) IN ((?, ?, ?, 0, 0), (?, ?, ?, 0, 0))");
    event_ = Prepare(
        "INSERT INTO outbox_events (transaction_id, type, payload, created_at) "
        "VALUES (?, 'transaction.committed', '', ?)");
    call_ = Prepare("CALL ledger_write_json(?, ?)");
    claim_lock_ = Prepare("CALL ledger_claim_lock(?, ?, ?, ?, ?, ?, ?)");
  }

  // Claims the key and locks both accounts; fills in what the lock read.
  void ClaimAndLock(Transfer& transfer) {
    std::unique_ptr<sql::ResultSet> rows;
    if (mode_ == Mode::kTwoCalls) {
      SetClaim(*claim_lock_, transfer);
      claim_lock_->setString(6, transfer.legs[0].account);
      claim_lock_->setString(7, transfer.legs[1].account);
      if (!claim_lock_->execute()) throw std::runtime_error("the claim's CALL returned no rows");
      rows.reset(claim_lock_->getResultSet());
      ReadLocked(*rows, transfer);
      rows.reset();
      while (claim_lock_->getMoreResults()) {
      }
      return;
    }
    SetClaim(*claim_, transfer);
    claim_->executeUpdate();
    lock_->setString(1, transfer.legs[0].account);
    lock_->setString(2, transfer.legs[1].account);
    rows.reset(lock_->executeQuery());
    ReadLocked(*rows, transfer);
  }

  static void SetClaim(sql::PreparedStatement& statement, const Transfer& transfer) {
    statement.setString(1, transfer.key);
    statement.setString(2, kFingerprint);
    statement.setString(3, transfer.transaction_id);
    statement.setInt64(4, transfer.now);
    statement.setInt64(5, transfer.now + 86'400'000'000);
  }

  static void ReadLocked(sql::ResultSet& rows, Transfer& transfer) {
    int read = 0;
    while (rows.next()) {
      for (Leg& leg : transfer.legs) {
        if (leg.account == rows.getString(1)) {
          leg.balance = rows.getInt64(2);
          leg.version = rows.getInt64(3);
          ++read;
        }
      }
    }
    if (read != 2) throw std::runtime_error("an account is missing");
  }

  void Write(const Transfer& transfer) {
    if (mode_ == Mode::kStatements) {
      WriteStatements(transfer);
    } else {
      call_->setString(1, Document(transfer));
      call_->setInt(2, mode_ == Mode::kCall ? 0 : 1);
      call_->execute();
      while (call_->getMoreResults()) {
      }
    }
    if (mode_ == Mode::kStatements || mode_ == Mode::kCall) connection_->commit();
  }

  void Rollback() {
    try {
      connection_->rollback();
    } catch (const sql::SQLException&) {
    }
  }

 private:
  std::unique_ptr<sql::PreparedStatement> Prepare(const char* sql) {
    return std::unique_ptr<sql::PreparedStatement>(connection_->prepareStatement(sql));
  }

  void WriteStatements(const Transfer& transfer) {
    transaction_->setString(1, transfer.transaction_id);
    transaction_->setInt64(2, transfer.now);
    transaction_->setString(3, kFingerprint);
    transaction_->executeUpdate();
    int p = 1;
    for (const Leg& leg : transfer.legs) {
      entries_->setString(p++, leg.account);
      entries_->setInt64(p++, leg.version + 1);
      entries_->setString(p++, transfer.transaction_id);
      entries_->setInt64(p++, leg.amount);
      entries_->setInt64(p++, leg.balance + leg.amount);
      entries_->setInt64(p++, transfer.now);
      entries_->setInt64(p++, transfer.now);
    }
    entries_->executeUpdate();
    p = 1;
    for (int column = 0; column < 3; ++column) {
      for (const Leg& leg : transfer.legs) {
        accounts_->setString(p++, leg.account);
        accounts_->setInt64(p++, column == 0   ? leg.balance + leg.amount
                                 : column == 1 ? leg.version + 1
                                               : transfer.now);
      }
    }
    for (const Leg& leg : transfer.legs) accounts_->setString(p++, leg.account);
    for (const Leg& leg : transfer.legs) {
      accounts_->setString(p++, leg.account);
      accounts_->setInt64(p++, leg.balance);
      accounts_->setInt64(p++, leg.version);
    }
    if (accounts_->executeUpdate() != 2) throw std::runtime_error("an account changed");
    event_->setString(1, transfer.transaction_id);
    event_->setInt64(2, transfer.now);
    event_->executeUpdate();
  }

  // The four writes' rows, as ledger_write_json reads them (mysql_write_call.sql). The
  // ids are the benchmark's own ASCII, so no JSON escaping is needed.
  static std::string Document(const Transfer& t) {
    const std::string now = std::to_string(t.now);
    std::string doc = "{\"t\":[[\"" + t.transaction_id + "\"," + now + ",\"" + kFingerprint +
                      "\"]],\"e\":[";
    for (int i = 0; i < 2; ++i) {
      const Leg& leg = t.legs[i];
      doc += (i ? ",[\"" : "[\"") + leg.account + "\"," + std::to_string(leg.version + 1) +
             ",\"" + t.transaction_id + "\"," + std::to_string(i) + "," +
             std::to_string(leg.amount) + "," + std::to_string(leg.balance + leg.amount) + "," +
             now + "]";
    }
    doc += "],\"a\":[";
    for (int i = 0; i < 2; ++i) {
      const Leg& leg = t.legs[i];
      doc += (i ? ",[\"" : "[\"") + leg.account + "\"," +
             std::to_string(leg.balance + leg.amount) + "," + std::to_string(leg.version + 1) +
             "," + std::to_string(leg.balance) + "," + std::to_string(leg.version) + "," + now +
             "]";
    }
    return doc + "],\"ev\":[[\"" + t.transaction_id + "\"," + now + "]]}";
  }

  Mode mode_;
  std::unique_ptr<sql::Connection> connection_;
  std::unique_ptr<sql::PreparedStatement> claim_, lock_, transaction_, entries_, accounts_,
      event_, call_, claim_lock_;
};

void RunClient(sql::Driver& driver, const Options& options, int client, Counters& counters) {
  Session session(driver, options);
  std::mt19937_64 random(static_cast<uint64_t>(getpid()) * 1000 + client);
  const std::string prefix =
      "wc-" + std::to_string(getpid()) + "-" + std::to_string(client) + "-";
  for (long n = 0; !counters.stop.load(); ++n) {
    const int x = static_cast<int>(random() % options.accounts);
    const int y = (x + 1 + static_cast<int>(random() % (options.accounts - 1))) % options.accounts;
    const int64_t amount = 1 + static_cast<int64_t>(random() % 100);
    Transfer transfer{.key = prefix + std::to_string(n),
                      .transaction_id = prefix + std::to_string(n),
                      .now = NowMicros(),
                      .legs = {{.account = AccountId(x), .amount = -amount},
                               {.account = AccountId(y), .amount = amount}}};
    try {
      session.ClaimAndLock(transfer);
      session.Write(transfer);
      ++counters.committed;
    } catch (const std::exception& error) {
      if (counters.failed++ < 3) std::fprintf(stderr, "transfer failed: %s\n", error.what());
      session.Rollback();
    }
  }
}

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{"A transfer's writes on MariaDB as statements or as one CALL"};
  app.add_option("--host", options.host);
  app.add_option("--port", options.port);
  app.add_option("--user", options.user);
  app.add_option("--database", options.database)->required();
  std::string mode = "statements";
  app.add_option("--mode", mode)->check(
      CLI::IsMember({"statements", "call", "call-commit", "two-calls"}));
  app.add_option("--clients", options.clients)->check(CLI::Range(1, 256));
  app.add_option("--seconds", options.seconds)->check(CLI::Range(1, 600));
  app.add_option("--accounts", options.accounts)->check(CLI::Range(2, 10'000'000));
  CLI11_PARSE(app, argc, argv);
  options.mode = mode == "call"          ? Mode::kCall
                 : mode == "call-commit" ? Mode::kCallCommit
                 : mode == "two-calls"   ? Mode::kTwoCalls
                                         : Mode::kStatements;

  sql::Driver* driver = sql::mysql::get_mysql_driver_instance();
  Counters counters;
  const double cpu_before = CpuSeconds();
  std::vector<std::thread> clients;
  for (int client = 0; client < options.clients; ++client) {
    clients.emplace_back([&, client] { RunClient(*driver, options, client, counters); });
  }
  std::this_thread::sleep_for(std::chrono::seconds(options.seconds));
  counters.stop = true;
  for (std::thread& client : clients) client.join();
  const long committed = counters.committed.load();
  std::printf("%s %d %ld %.0f %ld %.0f\n", mode.c_str(),
              options.clients, committed, static_cast<double>(committed) / options.seconds,
              counters.failed.load(),
              committed > 0 ? (CpuSeconds() - cpu_before) * 1e6 / committed : 0.0);
  return committed > 0 && counters.failed.load() == 0 ? 0 : 1;
}
