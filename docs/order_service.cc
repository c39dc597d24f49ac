// The order service of docs/unit-of-work.md: the order row, its payment, the payment's
// key record and outbox event commit in ONE database transaction (Ledger::Transact), so
// a crash between them cannot leave an order without its payment or the other way round.
// The test command runs it on SQLite and on PostgreSQL:
//
//   docs_order_service sqlite:/tmp/orders.db
//   docs_order_service --url-from-env LEDGER_TEST_POSTGRES_DSN order_service
//
// (the last argument: a PostgreSQL schema of its own, ?schema=, so the example's ledger
// and orders table live beside whatever else the test server holds)
//
// Prints what each step decided and ends with "verify: OK"; any surprise exits 1.
#include <cstdlib>
#include <iostream>
#include <string>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "engines/open_engine.h"
#include "ledger/ledger.h"
#include "ledger/unit_of_work.h"

namespace {

// The application's table, beside the ledger's. The payment's idempotency key is the
// order id, so a resent order finds its payment (duplicate) and skips its own writes.
constexpr char kCreateOrders[] =
    "CREATE TABLE IF NOT EXISTS orders ("
    " id VARCHAR(64) PRIMARY KEY,"
    " customer VARCHAR(64) NOT NULL,"
    " amount BIGINT NOT NULL,"
    " payment_transaction_id VARCHAR(64) NOT NULL)";

struct Order {
  std::string id;
  std::string customer;
  ledger::Amount amount = 0;
};

// Places the order: pays for it and records it, together. Returns the payment's
// transaction id once committed (also when the order was placed before).
absl::StatusOr<std::string> PlaceOrder(ledger::Ledger& book, const Order& order,
                                       bool stock_available = true) {
  std::string transaction_id;
  absl::Status placed = book.Transact([&](ledger::UnitOfWork& unit) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(
        ledger::Outcome paid,
        unit.Submit({.key = order.id,  // the order id is the payment's key
                     .operation = ledger::Operation::Transfer(order.customer, "merchant",
                                                              "CREDITS", order.amount)}));
    transaction_id = paid.transaction.id;
    switch (paid.kind) {
      case ledger::OutcomeKind::kDuplicate:  // placed before: its row is there, skip ours
        return absl::OkStatus();
      case ledger::OutcomeKind::kCommitted:  // decided, durable once Transact returns OK
        break;
      default:  // rejected: nothing is written, the key stays unused
        return absl::FailedPreconditionError(
            absl::StrCat("payment refused: ", std::string(ledger::RejectionReasonName(paid.reason))));
    }
    if (!stock_available) {  // any error from here on rolls the payment back too
      return absl::ResourceExhaustedError("out of stock");
    }
    return unit
        .Execute(absl::StrCat("INSERT INTO orders (id, customer, amount, payment_transaction_id)"
                              " VALUES (",
                              unit.Placeholder(1), ", ", unit.Placeholder(2), ", ",
                              unit.Placeholder(3), ", ", unit.Placeholder(4), ")"),
                 {order.id, order.customer, order.amount, transaction_id})
        .status();
  });
  if (!placed.ok()) return placed;
  return transaction_id;
}

// The outbox relay: reads the committed events after `after_sequence`, a page at a time,
// and for each the order it paid for, in one read-only unit (the same connection sees
// both); prints the orders' events. Returns the last sequence read.
absl::StatusOr<int64_t> RelayOutbox(ledger::Ledger& book, int64_t after_sequence) {
  while (true) {
    LEDGER_ASSIGN_OR_RETURN(std::vector<ledger::OutboxEvent> events,
                            book.ListEvents(after_sequence, 100));
    if (events.empty()) return after_sequence;
    for (const ledger::OutboxEvent& event : events) {
      LEDGER_RETURN_IF_ERROR(book.Transact([&](ledger::UnitOfWork& unit) -> absl::Status {
        LEDGER_ASSIGN_OR_RETURN(
            ledger::SqlRows rows,
            unit.Query(absl::StrCat("SELECT id, amount FROM orders WHERE payment_transaction_id = ",
                                    unit.Placeholder(1)),
                       {event.transaction_id}));
        if (!rows.rows.empty()) {
          std::cout << "outbox #" << event.sequence << " " << event.type << " "
                    << event.transaction_id << " -> order " << *rows.rows[0][0] << " ("
                    << *rows.rows[0][1] << ")\n";
        }
        return absl::OkStatus();
      }));
      after_sequence = event.sequence;
    }
  }
}

absl::StatusOr<int64_t> CountOrders(ledger::Ledger& book, const std::string& id) {
  int64_t count = -1;
  LEDGER_RETURN_IF_ERROR(book.Transact([&](ledger::UnitOfWork& unit) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(
        ledger::SqlRows rows,
        unit.Query(absl::StrCat("SELECT COUNT(*) FROM orders WHERE id = ", unit.Placeholder(1)),
                   {id}));
    count = std::stoll(*rows.rows.at(0).at(0));
    return absl::OkStatus();
  }));
  return count;
}

absl::Status Run(const std::string& url) {
  LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<ledger::Engine> engine, ledger::OpenEngine(url));
  LEDGER_ASSIGN_OR_RETURN(ledger::Ledger book, ledger::Ledger::Open(std::move(engine)));
  // Each run uses accounts and orders of its own, so it can run again on one database.
  const std::string run = absl::StrCat(getpid(), "-", absl::ToUnixMicros(absl::Now()));
  const std::string customer = "customer-" + run;
  LEDGER_RETURN_IF_ERROR(book.DefineAsset({"CREDITS", 0}));
  for (const ledger::AccountSpec& spec :
       {ledger::AccountSpec{.id = "issuance", .asset = "CREDITS", .allow_negative = true},
        ledger::AccountSpec{.id = "merchant", .asset = "CREDITS"},
        ledger::AccountSpec{.id = customer, .asset = "CREDITS"}}) {
    absl::StatusOr<ledger::Account> opened = book.OpenAccount(spec);
    if (!opened.ok() && !absl::IsAlreadyExists(opened.status())) return opened.status();
  }
  LEDGER_RETURN_IF_ERROR(book.Transact([&](ledger::UnitOfWork& unit) {
    return unit.Execute(kCreateOrders).status();
  }));
  LEDGER_ASSIGN_OR_RETURN(
      ledger::Outcome funded,
      book.Submit({.key = "top-up-" + run,
                   .operation = ledger::Operation::TopUp("issuance", customer, "CREDITS", 100)}));
  if (funded.kind != ledger::OutcomeKind::kCommitted) {
    return absl::InternalError(absl::StrCat("top-up not committed: ", funded.detail));
  }
  LEDGER_ASSIGN_OR_RETURN(int64_t seen, RelayOutbox(book, 0));

  const Order first{"order-" + run + "-1", customer, 30};
  LEDGER_ASSIGN_OR_RETURN(std::string paid, PlaceOrder(book, first));
  std::cout << first.id << ": paid by " << paid << "\n";
  // A resend (the client timed out, the COMMIT was in doubt): the same payment, no second row.
  LEDGER_ASSIGN_OR_RETURN(std::string resent, PlaceOrder(book, first));
  LEDGER_ASSIGN_OR_RETURN(int64_t rows, CountOrders(book, first.id));
  std::cout << first.id << " resent: paid by " << resent << ", " << rows << " order row\n";
  if (resent != paid || rows != 1) return absl::InternalError("the resend paid or wrote twice");

  // Out of stock after the payment was decided: the payment rolls back with the order.
  const Order second{"order-" + run + "-2", customer, 50};
  absl::StatusOr<std::string> refused = PlaceOrder(book, second, /*stock_available=*/false);
  LEDGER_ASSIGN_OR_RETURN(rows, CountOrders(book, second.id));
  std::cout << second.id << ": " << refused.status().message() << ", " << rows
            << " order row\n";
  if (refused.ok() || rows != 0) return absl::InternalError("the failed order left a trace");
  // Its key is unused: once stock is back, the same order goes through.
  LEDGER_ASSIGN_OR_RETURN(paid, PlaceOrder(book, second));
  std::cout << second.id << " again: paid by " << paid << "\n";

  // More than the customer has left: rejected, nothing written.
  const Order third{"order-" + run + "-3", customer, 500};
  absl::StatusOr<std::string> rejected = PlaceOrder(book, third);
  std::cout << third.id << ": " << rejected.status().message() << "\n";
  if (rejected.ok()) return absl::InternalError("an unpaid order was placed");

  LEDGER_ASSIGN_OR_RETURN(seen, RelayOutbox(book, seen));
  LEDGER_ASSIGN_OR_RETURN(ledger::Account account, book.GetAccount(customer));
  std::cout << customer << ": " << account.balance << " CREDITS\n";
  if (account.balance != 20) return absl::InternalError("the customer paid a wrong amount");
  LEDGER_ASSIGN_OR_RETURN(ledger::VerifyReport report, book.Verify());
  std::cout << "verify: " << (report.ok() ? "OK" : report.ToText()) << "\n";
  return report.ok() ? absl::OkStatus() : absl::DataLossError("verify failed");
}

}  // namespace

int main(int argc, char** argv) {
  std::string url = argc > 1 ? argv[1] : "sqlite:orders.db";
  if (argc > 2 && url == "--url-from-env") {
    const char* value = std::getenv(argv[2]);
    if (value == nullptr || *value == '\0') {
      const char* ci = std::getenv("CI");
      std::cerr << argv[2] << " is not set: no server to run on\n";
      return ci != nullptr && std::string(ci) == "true" ? 1 : 77;  // 77: ctest's skip
    }
    url = value;
    if (argc > 3) url += absl::StrCat(url.find('?') == std::string::npos ? "?" : "&", "schema=", argv[3]);
  }
  absl::Status status = Run(url);
  if (!status.ok()) {
    std::cerr << status << "\n";
    return 1;
  }
  return 0;
}
