// A payout saga to copy: pay a creator's balance out through an outside bank, exactly
// once, even when the process running it crashes between any two steps.
//
//   payout_saga::PayoutSaga saga(book, runner, bank);   // runner over engine.work_claims()
//   absl::StatusOr<payout_saga::PayoutReceipt> receipt = saga.Run(
//       {.payout_id = "payout-7731", .creator = "creator-1", .clearing = "payout-clearing",
//        .asset = "USD", .amount = 2500});
//   // Not OK (a fault, the bank unreachable, a crash): run it again with the SAME payout_id.
//
// The steps, each under a key derived from the payout id, so a rerun finds what the
// crashed run did and goes on from there:
//
//   1. hold     submit kind hold, key "<payout>:hold": the amount leaves the creator's
//               available balance at once (pending debit), nothing is posted yet.
//   2. bank     run idempotently (idempotency/run_idempotently.h), identity
//               ("payout.bank", scope, "<payout>:bank"): the bank is called and its answer
//               stored; a rerun after the answer was stored replays it without calling.
//               The same key goes to the bank, so a rerun after a crash between the
//               bank's reply and the stored answer is deduplicated by the bank itself.
//   3. settle   the bank paid: submit capture, key "<payout>:capture" (the hold posts);
//               the bank refused: submit void, key "<payout>:void" (the hold is released).
//
// Exactly one of capture and void can win for a hold (ledger/hold.h), and the saga only
// submits the one the stored bank answer names, so the money ends captured or released,
// never both. Choose hold_timeout longer than the work lease plus the bank's worst reply
// time: a hold that lapses after the bank paid cannot be captured (the saga reports it).
// Rerun within the keys' ttl (24 h by default, for the submit keys and the bank step
// alike): past it the keys are free again, and a rerun would start a second payout.
//
// Thread-safe if the Ledger, the runner and the bank are; one Run per payout at a time
// (a second concurrent Run of the same payout gets IsInProgress from the bank step).
#ifndef LEDGER_DOCS_PAYOUT_SAGA_H_
#define LEDGER_DOCS_PAYOUT_SAGA_H_

#include <functional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "idempotency/run_idempotently.h"
#include "ledger/amount.h"
#include "ledger/ledger.h"

namespace payout_saga {

struct PayoutRequest {
  std::string payout_id;  // the caller's id of this payout; every key derives from it
  std::string creator;    // the account paid out (debited when captured)
  std::string clearing;   // the payout clearing account (credited when captured)
  std::string asset;
  ledger::Amount amount = 0;
};

enum class BankDecision { kPaid, kRefused };

struct BankAnswer {
  BankDecision decision = BankDecision::kRefused;
  std::string reference;  // the bank's id of the transfer, or of the refusal
};

// The outside bank. SendPayout must deduplicate on `idempotency_key`: called twice with
// the same key it pays at most once and answers the same (most payment APIs do).
class Bank {
 public:
  virtual ~Bank() = default;
  // An error (timeout, unreachable) means "unknown": the saga stops and a rerun asks again.
  virtual absl::StatusOr<BankAnswer> SendPayout(std::string_view idempotency_key,
                                                const PayoutRequest& payout) = 0;
};

// The points between the steps, for the hook below.
enum class PayoutStep {
  kHoldPlaced,         // the hold is committed
  kBankReplied,        // the bank answered; its answer is not stored yet
  kBankAnswerStored,   // the answer is stored: a rerun will not call the bank
  kSettled,            // the capture or void is committed
};

struct PayoutSagaOptions {
  ledger::Scope scope;  // the submit keys' and the bank step's scope. Default: default/default.
  // How long the hold reserves the money if nobody settles it. Default: 24 h.
  absl::Duration hold_timeout = absl::Hours(24);
  // The bank step's lease and replay time (idempotency/run_idempotently.h). Default:
  // a 5 min lease, replayed for 24 h.
  ledger::WorkOptions bank_work;
  // Called after each step. For crash tests (a child process _exit()s in it); leave
  // empty in production.
  std::function<void(PayoutStep)> after_step;
};

enum class PayoutResult {
  kCaptured,  // the bank paid; the hold was captured (posted to the clearing account)
  kReleased,  // the bank refused; the hold was voided, or had lapsed, and nothing moved
};

struct PayoutReceipt {
  PayoutResult result = PayoutResult::kReleased;
  std::string hold_id;
  std::string settlement_id;  // the capture or void transaction; "" when the hold lapsed
  std::string bank_reference;
};

// "<payout>:hold", "<payout>:bank", "<payout>:capture", "<payout>:void".
std::string StepKey(std::string_view payout_id, std::string_view step);

class PayoutSaga {
 public:
  // Not owned; all three must outlive the saga.
  PayoutSaga(ledger::Ledger& ledger, ledger::IdempotentRunner& runner, Bank& bank,
             PayoutSagaOptions options = {});

  // Runs (or, after a crash, finishes) the payout. Errors:
  //   FailedPrecondition   the hold was declined (insufficient funds, closed account, ...):
  //                        nothing is held; the hold key stays unused.
  //   IsInProgress         another Run of this payout holds the bank step right now.
  //   Unavailable, faults  run again with the same payout id: every step resumes.
  //   DataLoss             the bank paid but the hold had lapsed or was settled by someone
  //                        else: the ledger cannot post it; reconcile by hand.
  absl::StatusOr<PayoutReceipt> Run(const PayoutRequest& request);

 private:
  absl::StatusOr<ledger::Outcome> Submit(std::string key, ledger::Operation operation);
  absl::StatusOr<std::string> PlaceHold(const PayoutRequest& request);
  absl::StatusOr<BankAnswer> AskBank(const PayoutRequest& request);
  absl::StatusOr<PayoutReceipt> Settle(const PayoutRequest& request, const std::string& hold_id,
                                       const BankAnswer& answer);
  void Reached(PayoutStep step);

  ledger::Ledger& ledger_;
  ledger::IdempotentRunner& runner_;
  Bank& bank_;
  PayoutSagaOptions options_;
};

}  // namespace payout_saga

#endif  // LEDGER_DOCS_PAYOUT_SAGA_H_
