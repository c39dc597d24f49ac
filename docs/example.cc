// The example from docs/api.md: open a ledger, fund a wallet, spend with a fee, and
// show that a retry with the same key replays instead of posting twice.
#include <iostream>

#include "engines/memory/memory_engine.h"
#include "ledger/ledger.h"

int main() {
  absl::StatusOr<ledger::Ledger> opened = ledger::Ledger::Open(ledger::OpenMemoryEngine());
  if (!opened.ok()) {
    std::cerr << opened.status() << "\n";  // bad options: InvalidArgument naming the field
    return 1;
  }
  ledger::Ledger& book = *opened;
  if (!book.DefineAsset({"CREDITS", 0}).ok()) return 1;
  for (ledger::AccountSpec spec : {ledger::AccountSpec{.id = "issuance", .asset = "CREDITS",
                                                       .allow_negative = true},
                                   ledger::AccountSpec{.id = "alice", .asset = "CREDITS"},
                                   ledger::AccountSpec{.id = "creator", .asset = "CREDITS"},
                                   ledger::AccountSpec{.id = "platform", .asset = "CREDITS"}}) {
    if (!book.OpenAccount(spec).ok()) return 1;
  }

  ledger::SubmitRequest top_up{.key = "payment-8812",
                               .operation = ledger::Operation::TopUp("issuance", "alice", "CREDITS", 500)};
  ledger::SubmitRequest spend{
      .key = "tip-1001",
      .operation = ledger::Operation::Spend("alice", "creator", "CREDITS", 100,
                                            ledger::Fee{"platform", 10})};
  for (const ledger::SubmitRequest* request : {&top_up, &spend, &spend}) {  // spend is retried
    absl::StatusOr<ledger::Outcome> outcome = book.Submit(*request);
    if (!outcome.ok()) {
      std::cerr << outcome.status() << "\n";
      return 1;
    }
    std::cout << request->key << ": " << ledger::OutcomeKindName(outcome->kind) << " "
              << outcome->transaction.id << "\n";
  }
  absl::StatusOr<ledger::Account> alice = book.GetAccount("alice");
  std::cout << "alice: " << alice->balance << " CREDITS\n";  // 400: the spend posted once
  return alice->balance == 400 ? 0 : 1;
}
