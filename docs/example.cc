// The example from docs/api.md: open a ledger, fund a wallet, spend with a fee, and
// show that a retry with the same key replays instead of posting twice; then pay out
// through a hold that is captured, after which a void of it is rejected.
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
  if (alice->balance != 400) return 1;

  // A payout in two phases (docs/api.md "Holds"): the hold reserves 70 at once, the
  // capture posts it when the bank confirms; a void would have released it instead.
  absl::StatusOr<ledger::Outcome> held = book.Submit(
      {.key = "payout-17:hold",
       .operation = ledger::Operation::Hold("alice", "creator", "CREDITS", 70)});
  if (!held.ok() || held->kind != ledger::OutcomeKind::kCommitted) return 1;
  alice = book.GetAccount("alice");
  std::cout << "alice after the hold: balance " << alice->balance << ", available "
            << alice->Available() << "\n";  // 400, 330: reserved, not posted
  if (alice->balance != 400 || alice->Available() != 330) return 1;
  std::string hold_id = held->transaction.id;  // a hold is the transaction that placed it
  absl::StatusOr<ledger::Outcome> captured = book.Submit(
      {.key = "payout-17:capture", .operation = ledger::Operation::Capture(hold_id)});
  absl::StatusOr<ledger::Outcome> voided = book.Submit(
      {.key = "payout-17:void", .operation = ledger::Operation::Void(hold_id)});
  if (!captured.ok() || !voided.ok()) return 1;
  std::cout << "capture: " << ledger::OutcomeKindName(captured->kind) << ", then void: "
            << ledger::OutcomeKindName(voided->kind) << " ("
            << ledger::RejectionReasonName(voided->reason) << ")\n";  // hold_captured
  alice = book.GetAccount("alice");
  std::cout << "alice: " << alice->balance << " CREDITS\n";  // 330: the capture posted once
  return alice->balance == 330 && alice->Available() == 330 &&
                 voided->reason == ledger::RejectionReason::kHoldCaptured
             ? 0
             : 1;
}
