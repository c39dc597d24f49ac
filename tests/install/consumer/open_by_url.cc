// Opens the engine a URL names through the installed package, submits one top-up twice
// under one key and checks the second is a duplicate of the first: the exported targets
// compile, link (drivers included) and run outside the ledger's tree.
#include <iostream>
#include <memory>

#include "engines/common/database_url.h"
#include "engines/open_engine.h"
#include "ledger/json.h"
#include "ledger/ledger.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: open_by_url URL\n";
    return 2;
  }
  absl::StatusOr<std::unique_ptr<ledger::Engine>> engine = ledger::OpenEngine(argv[1]);
  if (!engine.ok()) {
    std::cerr << ledger::RedactDatabaseUrl(argv[1]) << ": " << engine.status() << "\n";
    return 1;
  }
  absl::StatusOr<ledger::Ledger> opened = ledger::Ledger::Open(std::move(*engine));
  if (!opened.ok()) return 1;
  ledger::Ledger& book = *opened;
  if (!book.DefineAsset({"CREDITS", 0}).ok()) return 1;
  if (!book.OpenAccount({.id = "issuance", .asset = "CREDITS", .allow_negative = true}).ok() ||
      !book.OpenAccount({.id = "alice", .asset = "CREDITS"}).ok()) {
    return 1;
  }
  const ledger::SubmitRequest top_up{
      .key = "consumer-1", .operation = ledger::Operation::TopUp("issuance", "alice", "CREDITS", 500)};
  absl::StatusOr<ledger::Outcome> first = book.Submit(top_up);
  absl::StatusOr<ledger::Outcome> again = book.Submit(top_up);
  if (!first.ok() || !again.ok() || first->kind != ledger::OutcomeKind::kCommitted ||
      again->kind != ledger::OutcomeKind::kDuplicate ||
      again->transaction.id != first->transaction.id) {
    std::cerr << "expected committed then duplicate\n";
    return 1;
  }
  std::cout << ledger::TransactionToJson(again->transaction).dump() << "\n";
  return 0;
}
