// The payout saga of docs/idempotent-work.md; the part between the "docs:" markers is
// quoted there word for word (payout_saga_test checks it).
#include "docs/payout_saga.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "nlohmann/json.hpp"

namespace payout_saga {
namespace {

constexpr char kBankStepNamespace[] = "payout.bank";

std::string AnswerToText(const BankAnswer& answer) {
  nlohmann::json json = {{"decision", answer.decision == BankDecision::kPaid ? "paid" : "refused"},
                         {"reference", answer.reference}};
  return json.dump();
}

absl::StatusOr<BankAnswer> AnswerFromText(const std::string& text) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("decision") || !json.contains("reference") ||
      !json["decision"].is_string() || !json["reference"].is_string()) {
    return absl::DataLossError(
        absl::StrCat("stored bank answer is not one the saga wrote: ", text));
  }
  std::string decision = json["decision"].get<std::string>();
  if (decision != "paid" && decision != "refused") {
    return absl::DataLossError(absl::StrCat("stored bank decision \"", decision, "\" is unknown"));
  }
  return BankAnswer{decision == "paid" ? BankDecision::kPaid : BankDecision::kRefused,
                    json["reference"].get<std::string>()};
}

}  // namespace

std::string StepKey(std::string_view payout_id, std::string_view step) {
  return absl::StrCat(ledger::View(payout_id), ":", ledger::View(step));
}

PayoutSaga::PayoutSaga(ledger::Ledger& ledger, ledger::IdempotentRunner& runner, Bank& bank,
                       PayoutSagaOptions options)
    : ledger_(ledger), runner_(runner), bank_(bank), options_(std::move(options)) {}

// docs:payout-saga-begin
absl::StatusOr<PayoutReceipt> PayoutSaga::Run(const PayoutRequest& request) {
  // 1. Reserve the money: "<payout>:hold". A rerun replays the hold placed before.
  LEDGER_ASSIGN_OR_RETURN(std::string hold_id, PlaceHold(request));
  Reached(PayoutStep::kHoldPlaced);
  // 2. Ask the bank once: a rerun replays the stored answer instead of calling again.
  LEDGER_ASSIGN_OR_RETURN(BankAnswer answer, AskBank(request));
  Reached(PayoutStep::kBankAnswerStored);
  // 3. Post or release, as the bank answered: "<payout>:capture" or "<payout>:void".
  LEDGER_ASSIGN_OR_RETURN(PayoutReceipt receipt, Settle(request, hold_id, answer));
  Reached(PayoutStep::kSettled);
  return receipt;
}

absl::StatusOr<BankAnswer> PayoutSaga::AskBank(const PayoutRequest& request) {
  ledger::KeyIdentity identity{kBankStepNamespace, options_.scope,
                               StepKey(request.payout_id, "bank")};
  nlohmann::json payload = {{"creator", request.creator},
                            {"asset", request.asset},
                            {"amount", ledger::FormatAmount(request.amount)}};
  LEDGER_ASSIGN_OR_RETURN(
      std::string stored,
      runner_.Run(identity, payload, options_.bank_work, [&]() -> absl::StatusOr<std::string> {
        // The key goes to the bank too: if we crash after its reply but before the
        // answer is stored, the rerun's call is deduplicated by the bank.
        LEDGER_ASSIGN_OR_RETURN(BankAnswer answer, bank_.SendPayout(identity.key, request));
        Reached(PayoutStep::kBankReplied);
        return AnswerToText(answer);
      }));
  return AnswerFromText(stored);
}
// docs:payout-saga-end

absl::StatusOr<ledger::Outcome> PayoutSaga::Submit(std::string key, ledger::Operation operation) {
  ledger::SubmitRequest submit{
      .key = std::move(key), .scope = options_.scope, .operation = std::move(operation)};
  LEDGER_ASSIGN_OR_RETURN(ledger::Outcome outcome, ledger_.Submit(submit));
  // A fault left the key unused (or in doubt): rerunning the saga resends the same key.
  if (outcome.kind == ledger::OutcomeKind::kFaulted) {
    return ledger::Annotate(outcome.fault, submit.key);
  }
  return outcome;
}

absl::StatusOr<std::string> PayoutSaga::PlaceHold(const PayoutRequest& request) {
  ledger::Operation hold = ledger::Operation::Hold(request.creator, request.clearing,
                                                   request.asset, request.amount);
  hold.timeout = options_.hold_timeout;
  hold.metadata = {{"payout_id", request.payout_id}};
  LEDGER_ASSIGN_OR_RETURN(ledger::Outcome outcome,
                          Submit(StepKey(request.payout_id, "hold"), std::move(hold)));
  if (outcome.kind == ledger::OutcomeKind::kRejected) {
    return absl::FailedPreconditionError(
        absl::StrCat("payout ", request.payout_id, " declined: ",
                     ledger::View(ledger::RejectionReasonName(outcome.reason)), ": ",
                     outcome.detail));
  }
  return outcome.transaction.id;  // committed now, or the replay of the earlier commit
}

absl::StatusOr<PayoutReceipt> PayoutSaga::Settle(const PayoutRequest& request,
                                                 const std::string& hold_id,
                                                 const BankAnswer& answer) {
  bool paid = answer.decision == BankDecision::kPaid;
  ledger::Operation settle =
      paid ? ledger::Operation::Capture(hold_id) : ledger::Operation::Void(hold_id);
  settle.metadata = {{"payout_id", request.payout_id}, {"bank_reference", answer.reference}};
  LEDGER_ASSIGN_OR_RETURN(
      ledger::Outcome outcome,
      Submit(StepKey(request.payout_id, paid ? "capture" : "void"), std::move(settle)));
  PayoutReceipt receipt{.result = paid ? PayoutResult::kCaptured : PayoutResult::kReleased,
                        .hold_id = hold_id,
                        .bank_reference = answer.reference};
  if (outcome.kind != ledger::OutcomeKind::kRejected) {
    receipt.settlement_id = outcome.transaction.id;
    return receipt;
  }
  // A refused payout whose hold lapsed (or was voided) is released all the same.
  bool released_anyway = outcome.reason == ledger::RejectionReason::kHoldExpired ||
                         outcome.reason == ledger::RejectionReason::kHoldVoided;
  if (!paid && released_anyway) return receipt;
  return absl::DataLossError(absl::StrCat(
      "payout ", request.payout_id, ": the bank ", paid ? "paid" : "refused", " (",
      answer.reference, ") but ", paid ? "capturing" : "voiding", " hold ", hold_id,
      " was rejected: ", ledger::View(ledger::RejectionReasonName(outcome.reason)), ": ",
      outcome.detail, "; reconcile by hand"));
}

void PayoutSaga::Reached(PayoutStep step) {
  if (options_.after_step) options_.after_step(step);
}

}  // namespace payout_saga
