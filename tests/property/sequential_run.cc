#include "tests/property/sequential_run.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/clock.h"
#include "base/status.h"
#include "ledger/internal/testing_hooks.h"
#include "ledger/json.h"
#include "tests/property/database_reads.h"
#include "tests/property/model.h"
#include "tests/support/fault_injecting_engine.h"

namespace ledger::property {
namespace {

using testing::FaultInjectingEngine;
using testing::FaultPoint;

constexpr size_t kReverseIdBytesMax = 64;
// Ledger::ExpireHolds's page: a fault fails one page's transaction, not the others.
constexpr size_t kExpireHoldsPage = 100;
constexpr int64_t kHoldsPageSize = 1000;

// Whether a submit that gets as far as `reach` passes `point` (engine.h's call order).
bool Passes(Reach reach, FaultPoint point) {
  switch (point) {
    case FaultPoint::kBegin:
    case FaultPoint::kClaim:
    case FaultPoint::kAfterClaim:
      return reach >= Reach::kClaim;
    case FaultPoint::kLockAccounts:
      return reach >= Reach::kLock;
    case FaultPoint::kWrite:
    case FaultPoint::kAfterWrite:
    case FaultPoint::kCommit:
    case FaultPoint::kCommitReplyLost:
      return reach == Reach::kCommit;
  }
  return false;
}

bool IsRealFault(FaultMode mode) {
  return mode == FaultMode::kKillSession || mode == FaultMode::kKillIdleSessions ||
         mode == FaultMode::kRestartServer;
}

std::string Describe(const absl::StatusOr<Outcome>& result) {
  if (!result.ok()) return absl::StrCat("error ", result.status().ToString());
  std::string text = OutcomeToJson(*result).dump();
  if (result->kind == OutcomeKind::kFaulted)
    absl::StrAppend(&text, " fault=", result->fault.ToString());
  return text;
}

std::string DescribeAccount(const Account& account) {
  return absl::StrCat(account.id, " {asset ", account.asset, ", balance ", account.balance,
                      ", version ", account.version, ", closed ", account.closed, ", floor ",
                      account.BalanceFloor(), ", pending debits ", account.pending_debits,
                      ", pending credits ", account.pending_credits, "}");
}

std::string DescribeHold(const std::optional<Hold>& hold) {
  return hold.has_value() ? HoldToJson(*hold).dump() : "none";
}

class SequentialRun {
 public:
  SequentialRun(const PropertyContext& context, const Universe& universe,
                const SequentialOptions& options)
      : context_(context),
        universe_(universe),
        options_(options),
        model_(options.velocity_limits) {}

  RunResult Run(const std::vector<Step>& steps, const std::vector<int>& indexes) {
    RunResult result;
    std::string problem = Setup();
    if (!problem.empty()) {
      result.violation = Violation{-1, problem};
      return result;
    }
    int executed = 0;
    for (int index : indexes) {
      problem = RunStep(steps[static_cast<size_t>(index)]);
      if (problem.empty()) problem = CheckAccounts();
      if (problem.empty() && ++executed % options_.checkpoint_every == 0) problem = Checkpoint();
      if (!problem.empty()) {
        result.violation = Violation{index, problem};
        break;
      }
    }
    if (!result.violation.has_value()) {
      problem = ResendUnacknowledged();
      if (problem.empty()) problem = CheckAccounts();
      if (problem.empty()) problem = Checkpoint();
      if (problem.empty()) problem = CheckHoldsOneByOne();
      if (!problem.empty()) result.violation = Violation{static_cast<int>(steps.size()), problem};
    }
    result.stats = stats_;
    return result;
  }

 private:
  std::string Setup() {
    absl::StatusOr<std::unique_ptr<Engine>> opened = context_.open_fresh();
    if (!opened.ok())
      return absl::StrCat("could not open a fresh database: ", opened.status().ToString());
    std::shared_ptr<Engine> engine(std::move(*opened));
    if (options_.wrap_engine) engine = options_.wrap_engine(std::move(engine));
    faults_ = std::make_shared<FaultInjectingEngine>(std::move(engine));
    LedgerOptions ledger_options;
    ledger_options.clock = &clock_;
    ledger_options.velocity_limits = options_.velocity_limits;
    absl::StatusOr<Ledger> ledger =
        options_.skip_idempotency
            ? internal::LedgerTestingHooks::OpenWithoutIdempotency(faults_, ledger_options)
            : Ledger::Open(faults_, ledger_options);
    if (!ledger.ok()) return absl::StrCat("opening the ledger: ", ledger.status().ToString());
    ledger_ = std::make_unique<Ledger>(*std::move(ledger));
    absl::StatusOr<std::vector<Account>> opened_accounts = OpenUniverse(*ledger_, universe_);
    if (!opened_accounts.ok()) return absl::StrCat("setup: ", opened_accounts.status().ToString());
    for (const Account& account : *opened_accounts) model_.AddAccount(account);
    for (const std::string& id : universe_.closed_at_setup) model_.ApplyClose(id);
    return "";
  }

  std::string RunStep(const Step& step) {
    clock_.Advance(step.advance);
    if (step.kind == StepKind::kCloseAccount) return RunClose(step.account_id);
    if (step.kind == StepKind::kExpireHolds) return RunExpireHolds(step.fault);
    return RunSubmit(Resolve(step.request), step.fault);
  }

  SubmitRequest Resolve(const Request& request) const {
    SubmitRequest submit{request.key, request.scope, request.operation, ClaimOptions{}};
    submit.claim.ttl = request.ttl;
    if (request.reverse_target.has_value()) {
      const ReverseTarget& target = *request.reverse_target;
      std::optional<std::string> id =
          model_.TransactionOf({target.key_namespace, target.scope.Encoded(), target.key});
      submit.operation.transaction_id =
          id.value_or(absl::StrCat("missing-", target.key).substr(0, kReverseIdBytesMax));
    }
    if (request.hold_target.has_value()) {
      const HoldTarget& target = *request.hold_target;
      std::optional<std::string> id =
          model_.TransactionOf({target.key_namespace, target.scope.Encoded(), target.key});
      submit.operation.hold_id =
          id.value_or(absl::StrCat("missing-", target.key).substr(0, kReverseIdBytesMax));
    }
    return submit;
  }

  // ---- holds: sweeps, and what the database says they did ----------------------------

  // Ledger::ExpireHolds must record the expiry of exactly the holds the model has lapsed
  // (every page, or none of a page a fault failed; all of one whose COMMIT reply was
  // lost), each with the expire transaction the model predicts.
  std::string RunExpireHolds(const InjectedFault& fault) {
    absl::Time now = clock_.Now();
    std::vector<std::string> lapsed = model_.LapsedHoldIds(now);
    Armed armed;
    Arm(fault, armed);
    absl::StatusOr<int64_t> swept = ledger_->ExpireHolds();
    faults_->Clear();
    stats_.Add("sweeps");
    if (tolerant_) return SweepUntilDone(lapsed, now, std::move(swept));
    if (fault.mode != FaultMode::kNone && armed.reached == lapsed.empty()) {
      return absl::StrCat("the sweep ", armed.reached ? "passed" : "skipped", " fault point ",
                          FaultPointName(fault.point), " with ", lapsed.size(), " lapsed holds");
    }
    absl::StatusOr<size_t> recorded = LearnExpiries(lapsed, now);
    if (!recorded.ok()) return std::string(recorded.status().message());
    stats_.Add("holds expired by sweeps", static_cast<int>(*recorded));
    size_t first_page = std::min(lapsed.size(), kExpireHoldsPage);
    auto mismatch = [&](size_t expected) {
      return absl::StrCat("ExpireHolds with ", lapsed.size(), " lapsed holds [fault: ",
                          FaultModeName(fault.mode), "] answered ",
                          swept.ok() ? absl::StrCat(*swept) : swept.status().ToString(),
                          " and recorded ", *recorded, " expiries; expected ", expected);
    };
    if (fault.mode == FaultMode::kUnavailable && armed.reached) {
      if (swept.ok() || *recorded != 0) return mismatch(0);
      stats_.Add("sweeps faulted");
      return "";
    }
    if (fault.mode == FaultMode::kCommitReplyLost && armed.reached) {
      if (swept.ok() || !IsInDoubt(swept.status()) || *recorded != first_page) {
        return mismatch(first_page);
      }
      stats_.Add("sweeps in doubt");
      return "";
    }
    if (!swept.ok() || *swept != static_cast<int64_t>(lapsed.size()) ||
        *recorded != lapsed.size()) {
      return mismatch(lapsed.size());
    }
    return "";
  }

  // After a real fault any pooled connection may be dead, whatever was injected: the
  // sweep is run again until it answers, and then every lapsed hold must be expired.
  std::string SweepUntilDone(const std::vector<std::string>& lapsed, absl::Time now,
                             absl::StatusOr<int64_t> swept) {
    for (int attempt = 1; !swept.ok() && attempt < options_.resend_attempts_max; ++attempt) {
      stats_.Add("sweeps run again after a fault");
      swept = ledger_->ExpireHolds();
    }
    if (!swept.ok()) return absl::StrCat("ExpireHolds still fails: ", swept.status().ToString());
    absl::StatusOr<size_t> recorded = LearnExpiries(lapsed, now);
    if (!recorded.ok()) return std::string(recorded.status().message());
    stats_.Add("holds expired by sweeps", static_cast<int>(*recorded));
    if (*recorded != lapsed.size()) {
      return absl::StrCat("ExpireHolds recorded ", *recorded, " of ", lapsed.size(),
                          " lapsed holds' expiries");
    }
    return "";
  }

  // Reads back each of `lapsed` (lapsed at `now` in the model): those the database has
  // expired must carry the model's expire transaction, and are applied to the model.
  // Returns how many; a hold settled any other way is a violation.
  absl::StatusOr<size_t> LearnExpiries(const std::vector<std::string>& lapsed, absl::Time now) {
    size_t recorded = 0;
    for (const std::string& id : lapsed) {
      absl::StatusOr<std::optional<Hold>> stored = Retrying<std::optional<Hold>>(
          ReadAttempts(), [&] { return faults_->GetHold(id); });
      if (!stored.ok() || !stored->has_value()) {
        return absl::InternalError(absl::StrCat("hold ", id, " cannot be read after a sweep: ",
                                                stored.status().ToString()));
      }
      const Hold& hold = **stored;
      if (hold.status == HoldStatus::kPending && !hold.settled_by.has_value()) continue;
      if (hold.status != HoldStatus::kExpired || !hold.settled_by.has_value()) {
        return absl::InternalError(absl::StrCat("lapsed hold ", id, " was settled other than by ",
                                                "expiry: ", DescribeHold(hold)));
      }
      absl::StatusOr<std::optional<Transaction>> expiry = Retrying<std::optional<Transaction>>(
          ReadAttempts(), [&] { return faults_->GetTransaction(*hold.settled_by); });
      Transaction expected = model_.PredictExpiry(id, now);
      expected.id = *hold.settled_by;
      if (!expiry.ok() || !expiry->has_value() || **expiry != expected) {
        return absl::InternalError(absl::StrCat(
            "the expiry of hold ", id, " is not the model's expire transaction:\n  stored   ",
            expiry.ok() && expiry->has_value() ? TransactionToJson(**expiry).dump() : "none",
            "\n  expected ", TransactionToJson(expected).dump()));
      }
      model_.ApplyExpiry(id, expected.id, now);
      ++recorded;
    }
    return recorded;
  }

  std::string RunClose(const std::string& account_id) {
    absl::Time now = clock_.Now();
    absl::Status expected = model_.PredictClose(account_id, now);
    // Only lapsed holds left: the close records every lapsed hold's expiry first.
    std::vector<std::string> swept;
    if (expected.ok() && model_.CloseSweeps(account_id)) swept = model_.LapsedHoldIds(now);
    absl::Status actual = ledger_->CloseAccount(account_id);
    for (int attempt = 1;
         tolerant_ && absl::IsUnavailable(actual) && attempt < options_.resend_attempts_max;
         ++attempt) {
      actual = ledger_->CloseAccount(account_id);
    }
    if (actual.code() != expected.code()) {
      return absl::StrCat("close account ", account_id, ": expected ",
                          absl::StatusCodeToString(expected.code()), ", got ", actual.ToString());
    }
    if (actual.ok() && !swept.empty()) {
      absl::StatusOr<size_t> recorded = LearnExpiries(swept, now);
      if (!recorded.ok()) return std::string(recorded.status().message());
      if (*recorded != swept.size()) {
        return absl::StrCat("closing ", account_id, " recorded ", *recorded, " of ",
                            swept.size(), " lapsed holds' expiries");
      }
      stats_.Add("closes that swept lapsed holds");
    }
    if (actual.ok()) model_.ApplyClose(account_id);
    stats_.Add(actual.ok() ? "close" : "close refused");
    return "";
  }

  // ---- submits ------------------------------------------------------------------

  struct Armed {
    bool reached = false;
    bool real_fault_done = false;
    std::string problem;  // a kill or restart that failed
  };

  void Arm(const InjectedFault& fault, Armed& armed) {
    auto mark = [&armed] { armed.reached = true; };
    switch (fault.mode) {
      case FaultMode::kNone:
        return;
      case FaultMode::kUnavailable:
        faults_->SetHook(fault.point, mark);
        faults_->FailAt(fault.point, absl::UnavailableError("injected: connection lost"));
        return;
      case FaultMode::kRetryable:
        faults_->SetHook(fault.point, mark);
        faults_->FailAt(fault.point, RetryableError("injected: deadlock detected"));
        return;
      case FaultMode::kCommitReplyLost:
        faults_->SetHook(FaultPoint::kCommitReplyLost, mark);
        faults_->FailAt(FaultPoint::kCommitReplyLost,
                        absl::UnavailableError("injected: reply lost"));
        return;
      case FaultMode::kKillSession:
      case FaultMode::kKillIdleSessions:
      case FaultMode::kRestartServer:
        faults_->SetHook(fault.point, [this, &armed, mode = fault.mode, point = fault.point] {
          if (armed.reached) return;  // once per submit, not once per internal retry
          armed.reached = true;
          armed.problem = DoRealFault(mode, point);
          armed.real_fault_done = true;
        });
        return;
    }
  }

  // Kills sessions or restarts the server; "" when done.
  std::string DoRealFault(FaultMode mode, FaultPoint point) {
    tolerant_ = true;  // from now on a pooled connection may be dead
    if (mode == FaultMode::kRestartServer) {
      if (!context_.restart_server) return "the context cannot restart its server";
      absl::Status restarted = context_.restart_server();
      stats_.Add("server restarts");
      return restarted.ok() ? "" : absl::StrCat("restart failed: ", restarted.ToString());
    }
    const auto& kill = mode == FaultMode::kKillSession ? context_.kill_sessions_in_transaction
                                                       : context_.kill_all_sessions;
    if (!kill) return "the context cannot kill sessions";
    absl::StatusOr<int> killed = kill();
    if (!killed.ok()) return absl::StrCat("kill failed: ", killed.status().ToString());
    stats_.Add("sessions killed", *killed);
    // Worth watching: a kill with no victim proves nothing about that point.
    if (*killed == 0) {
      stats_.Add(absl::StrCat("kills that found no session at ", FaultPointName(point)));
    }
    return "";
  }

  std::string RunSubmit(const SubmitRequest& request, const InjectedFault& fault) {
    Prediction prediction = model_.Predict(request, clock_.Now());
    Armed armed;
    Arm(fault, armed);
    absl::StatusOr<Outcome> result = ledger_->Submit(request);
    faults_->Clear();
    if (!armed.problem.empty()) return armed.problem;
    if (fault.mode == FaultMode::kRestartServer && !armed.real_fault_done) {
      // The submit never reached the point (a replay, a rejection): restart while idle.
      if (std::string problem = DoRealFault(fault.mode, fault.point); !problem.empty()) {
        return problem;
      }
    }
    bool boundary = fault.mode == FaultMode::kUnavailable || fault.mode == FaultMode::kRetryable ||
                    fault.mode == FaultMode::kCommitReplyLost;
    const bool predicted = Passes(prediction.reach, fault.point);
    // A guess is the only way past the predicted path (PropertyContext).
    const bool guessed_past = armed.reached && !predicted && context_.guesses_on_remembered_rows;
    if (guessed_past) stats_.Add(absl::StrCat("guesses past ", FaultPointName(fault.point)));
    if (boundary && !options_.skip_idempotency && armed.reached != predicted && !guessed_past) {
      return absl::StrCat("the pipeline ", armed.reached ? "passed" : "skipped", " fault point ",
                          FaultPointName(fault.point), " for a submit predicted ",
                          DescribePrediction(prediction));
    }
    if (fault.mode == FaultMode::kUnavailable && armed.reached) {
      return ExpectFaulted(request, prediction, result, /*commit_happened=*/false);
    }
    // A guessed COMMIT the database refused committed nothing: the answer is the one
    // decided after it, as predicted.
    if (fault.mode == FaultMode::kCommitReplyLost && armed.reached && !guessed_past) {
      if (!result.ok() || result->kind != OutcomeKind::kFaulted || !result->in_doubt) {
        return absl::StrCat("COMMIT's reply was lost: expected faulted and in doubt, got ",
                            Describe(result));
      }
      return ExpectFaulted(request, prediction, result, /*commit_happened=*/true);
    }
    if (IsRealFault(fault.mode)) {
      bool resend_now = fault.mode != FaultMode::kKillSession;
      return AcceptRealFault(request, prediction, std::move(result), resend_now);
    }
    if (tolerant_) return AcceptRealFault(request, prediction, std::move(result), true);
    return ExpectPrediction(request, prediction, result);
  }

  // A faulted answer. Asks the database whether this attempt committed, as an operator
  // would: a fault that is not in doubt must have written nothing; `commit_happened`
  // says what must be found when the test knows.
  std::string ExpectFaulted(const SubmitRequest& request, const Prediction& prediction,
                            const absl::StatusOr<Outcome>& result,
                            std::optional<bool> commit_happened) {
    if (!result.ok() || result->kind != OutcomeKind::kFaulted) {
      return absl::StrCat("expected faulted, got ", Describe(result));
    }
    stats_.Add(result->in_doubt ? "faulted in doubt" : "faulted");
    unacknowledged_.push_back(request);
    KeyIdentity identity = KeyIdentityOf(request);
    absl::StatusOr<std::optional<KeyRecord>> record = Retrying<std::optional<KeyRecord>>(
        ReadAttempts(), [&] { return FindKeyRecord(*faults_, identity); });
    if (!record.ok()) return absl::StrCat("reading the key records: ", record.status().ToString());
    std::optional<std::string> known = model_.TransactionOf(IdentityOf(request));
    bool committed_now = record->has_value() && (*record)->transaction_id != known.value_or("");
    if (commit_happened.has_value() && *commit_happened != committed_now) {
      return *commit_happened
                 ? absl::StrCat("COMMIT succeeded (its reply was lost) but no key record for ",
                                identity.Encoded(), " is in the database: a commit was lost")
                 : absl::StrCat("the submit faulted before COMMIT (", Describe(result),
                                ") yet its transaction is in the database");
    }
    if (!committed_now) return "";
    if (!result->in_doubt) {
      return absl::StrCat("a fault not in doubt must have written nothing, yet ",
                          identity.Encoded(), " committed: ", Describe(result));
    }
    if (prediction.kind != Expected::kCommitted) {
      return absl::StrCat("a faulted submit committed though the model predicted ",
                          DescribePrediction(prediction));
    }
    return AdoptCommitted(request, prediction, (*record)->transaction_id);
  }

  // The transaction an in-doubt attempt committed: it must be what the model predicted.
  std::string AdoptCommitted(const SubmitRequest& request, const Prediction& prediction,
                             const std::string& transaction_id) {
    absl::StatusOr<std::optional<Transaction>> stored = Retrying<std::optional<Transaction>>(
        ReadAttempts(), [&] { return faults_->GetTransaction(transaction_id); });
    if (!stored.ok() || !stored->has_value()) {
      return absl::StrCat("the key record names transaction ", transaction_id,
                          " which cannot be read: ", stored.status().ToString());
    }
    if (std::string problem = CheckCommittedTransaction(prediction, **stored); !problem.empty()) {
      return problem;
    }
    Commit(request, prediction, transaction_id);
    return "";
  }

  // A real fault may fail the attempt (nothing written unless in doubt) or not matter;
  // with `resend_now` a faulted attempt is resent at once, as a client would.
  std::string AcceptRealFault(const SubmitRequest& request, Prediction prediction,
                              absl::StatusOr<Outcome> result, bool resend_now) {
    for (int attempt = 1;; ++attempt) {
      if (!result.ok() || result->kind != OutcomeKind::kFaulted) {
        return ExpectPrediction(request, prediction, result);
      }
      std::string problem = ExpectFaulted(request, prediction, result, std::nullopt);
      if (!problem.empty() || !resend_now) return problem;
      if (attempt >= options_.resend_attempts_max) {
        return absl::StrCat("still faulted after ", attempt, " resends (the engine does not ",
                            "reconnect?): ", Describe(result));
      }
      stats_.Add("resends after a real fault");
      prediction = model_.Predict(request, clock_.Now());  // an in-doubt attempt may have committed
      result = ledger_->Submit(request);
    }
  }

  std::string ExpectPrediction(const SubmitRequest& request, const Prediction& prediction,
                               const absl::StatusOr<Outcome>& result) {
    auto mismatch = [&] {
      return absl::StrCat("expected ", DescribePrediction(prediction), ", got ", Describe(result));
    };
    switch (prediction.kind) {
      case Expected::kInvalid:
        if (result.ok() || !absl::IsInvalidArgument(result.status())) return mismatch();
        stats_.Add("invalid");
        return "";
      case Expected::kConflict:
        if (result.ok() || !IsConflict(result.status())) return mismatch();
        stats_.Add("conflict");
        return "";
      default:
        break;
    }
    if (!result.ok()) return mismatch();
    const Outcome& outcome = *result;
    switch (prediction.kind) {
      case Expected::kDuplicate:
        if (outcome.kind != OutcomeKind::kDuplicate ||
            outcome.transaction != prediction.transaction) {
          return mismatch();
        }
        stats_.Add("duplicate");
        return "";
      case Expected::kRejected:
        if (outcome.kind != OutcomeKind::kRejected || outcome.reason != prediction.reason) {
          return mismatch();
        }
        stats_.Add(absl::StrCat("rejected: ", View(RejectionReasonName(outcome.reason))));
        if (outcome.reason == RejectionReason::kHoldExpired &&
            model_.holds().at(request.operation.hold_id).status == HoldStatus::kPending) {
          stats_.Add("settlements refused after expires_at, before a sweep");
        }
        declined_.insert({IdentityOf(request), prediction.fingerprint});
        return "";
      case Expected::kCommitted: {
        if (outcome.kind != OutcomeKind::kCommitted) return mismatch();
        if (std::string problem = CheckCommittedTransaction(prediction, outcome.transaction);
            !problem.empty()) {
          return problem;
        }
        Commit(request, prediction, outcome.transaction.id);
        return "";
      }
      default:
        return mismatch();
    }
  }

  std::string CheckCommittedTransaction(const Prediction& prediction, const Transaction& actual) {
    if (actual.id.empty() || seen_transaction_ids_.count(actual.id) > 0) {
      return absl::StrCat("committed transaction id \"", actual.id, "\" is empty or reused");
    }
    Transaction without_id = actual;
    without_id.id.clear();
    if (without_id != prediction.transaction) {
      return absl::StrCat("committed transaction differs from the model's:\n  got      ",
                          TransactionToJson(without_id).dump(), "\n  expected ",
                          TransactionToJson(prediction.transaction).dump());
    }
    return "";
  }

  void Commit(const SubmitRequest& request, const Prediction& prediction, const std::string& id) {
    if (model_.TransactionOf(IdentityOf(request)).has_value())
      stats_.Add("committed again after key expiry");
    if (declined_.count({IdentityOf(request), prediction.fingerprint}) > 0) {
      stats_.Add("committed on a retry after a rejection");
    }
    seen_transaction_ids_.insert(id);
    model_.ApplyCommit(request, prediction, id, clock_.Now(), request.claim.ttl);
    stats_.Add("committed");
    OperationKind kind = request.operation.kind;
    if (kind == OperationKind::kHold || kind == OperationKind::kCapture ||
        kind == OperationKind::kVoid) {
      stats_.Add(absl::StrCat("committed: ", View(OperationKindName(kind)),
                              request.operation.capture_amount.has_value() ? " (an amount)" : ""));
    }
  }

  // Every request whose last answer was a fault is resent under its key: each must now
  // commit exactly once (or replay the commit its in-doubt attempt made).
  std::string ResendUnacknowledged() {
    std::vector<SubmitRequest> pending = std::move(unacknowledged_);
    unacknowledged_.clear();
    for (const SubmitRequest& request : pending) {
      stats_.Add("final resends");
      Prediction prediction = model_.Predict(request, clock_.Now());
      absl::StatusOr<Outcome> result = ledger_->Submit(request);
      std::string problem = tolerant_
                                ? AcceptRealFault(request, prediction, std::move(result), true)
                                : ExpectPrediction(request, prediction, result);
      if (!problem.empty()) return absl::StrCat("final resend of ", request.key, ": ", problem);
    }
    return "";
  }

  // ---- database checks ----------------------------------------------------------

  int ReadAttempts() const { return tolerant_ ? options_.resend_attempts_max : 1; }

  // Every account equals the model's; per-asset totals are zero; nobody below the floor.
  std::string CheckAccounts() {
    absl::StatusOr<std::vector<Account>> accounts =
        Retrying<std::vector<Account>>(ReadAttempts(), [&] { return ReadAllAccounts(*faults_); });
    if (!accounts.ok()) return absl::StrCat("reading accounts: ", accounts.status().ToString());
    const auto& expected = model_.accounts();
    if (accounts->size() != expected.size()) {
      return absl::StrCat(accounts->size(), " accounts in the database, the model has ",
                          expected.size());
    }
    for (const Account& account : *accounts) {
      auto it = expected.find(account.id);
      if (it == expected.end() || !(it->second.account == account)) {
        return absl::StrCat(
            "account differs: database ", DescribeAccount(account), ", model ",
            it == expected.end() ? "has none" : DescribeAccount(it->second.account));
      }
    }
    if (std::string problem = CheckConservationAndSolvency(*accounts); !problem.empty())
      return problem;
    return model_.CheckOwnInvariants(clock_.Now());
  }

  // Every hold as stored, and every account as the ledger shows it now (lapsed holds
  // released), against the model; nobody's available balance below the floor.
  std::string CompareHoldsAndAvailable() {
    absl::StatusOr<std::vector<Hold>> holds =
        Retrying<std::vector<Hold>>(ReadAttempts(), [&] { return ReadAllHolds(*faults_); });
    if (!holds.ok()) return absl::StrCat("reading holds: ", holds.status().ToString());
    const auto& expected = model_.holds();
    for (const Hold& hold : *holds) {
      auto it = expected.find(hold.id);
      if (it == expected.end() || it->second != hold) {
        return absl::StrCat("hold differs: database ", DescribeHold(hold), ", model ",
                            it == expected.end() ? "has none" : DescribeHold(it->second));
      }
    }
    if (holds->size() != expected.size()) {
      return absl::StrCat(holds->size(), " holds in the database, the model has ", expected.size());
    }
    absl::Time now = clock_.Now();
    absl::StatusOr<std::vector<Account>> accounts = Retrying<std::vector<Account>>(
        ReadAttempts(), [&] { return ReadAllAccountsNow(*ledger_); });
    if (!accounts.ok()) return absl::StrCat("listing accounts: ", accounts.status().ToString());
    for (const Account& account : *accounts) {
      Account reserving = model_.AccountAsOf(account.id, now);
      if (account != reserving) {
        return absl::StrCat("account as of now differs: ledger ", DescribeAccount(account),
                            ", model ", DescribeAccount(reserving));
      }
      if (account.Available() < account.BalanceFloor()) {
        return absl::StrCat("account ", account.id, " has an available balance of ",
                            account.Available(), ", below its floor ", account.BalanceFloor());
      }
    }
    return "";
  }

  // At the end: each hold through Engine::GetHold (as stored) and Ledger::GetHold (as of
  // now), and each account's Ledger::ListHolds.
  std::string CheckHoldsOneByOne() {
    absl::Time now = clock_.Now();
    std::map<std::string, std::vector<Hold>> by_account;
    for (const auto& [id, hold] : model_.holds()) {
      absl::StatusOr<std::optional<Hold>> stored =
          Retrying<std::optional<Hold>>(ReadAttempts(), [&] { return faults_->GetHold(id); });
      if (!stored.ok() || *stored != hold) {
        return absl::StrCat("Engine::GetHold(", id, ") is ",
                            stored.ok() ? DescribeHold(*stored) : stored.status().ToString(),
                            ", the model's ", DescribeHold(hold));
      }
      Hold as_of_now = model_.HoldAsOf(id, now);
      absl::StatusOr<Hold> shown =
          Retrying<Hold>(ReadAttempts(), [&] { return ledger_->GetHold(id); });
      if (!shown.ok() || *shown != as_of_now) {
        return absl::StrCat("Ledger::GetHold(", id, ") is ",
                            shown.ok() ? DescribeHold(*shown) : shown.status().ToString(),
                            ", the model's ", DescribeHold(as_of_now));
      }
      by_account[hold.terms.from].push_back(as_of_now);
      by_account[hold.terms.to].push_back(as_of_now);
    }
    for (const auto& [account_id, expected] : by_account) {
      absl::StatusOr<std::vector<Hold>> listed = Retrying<std::vector<Hold>>(
          ReadAttempts(), [&] { return ledger_->ListHolds(account_id, "", kHoldsPageSize); });
      if (!listed.ok() || *listed != expected) {
        return absl::StrCat("Ledger::ListHolds(", account_id, ") returned ",
                            listed.ok() ? absl::StrCat(listed->size(), " holds")
                                        : listed.status().ToString(),
                            ", the model has ", expected.size());
      }
    }
    stats_.Add("holds read one by one", static_cast<int>(model_.holds().size()));
    return "";
  }

  // The whole database against the model.
  std::string Checkpoint() {
    stats_.Add("checkpoints");
    absl::StatusOr<std::vector<Transaction>> transactions = Retrying<std::vector<Transaction>>(
        ReadAttempts(), [&] { return ReadAllTransactions(*faults_); });
    if (!transactions.ok())
      return absl::StrCat("reading transactions: ", transactions.status().ToString());
    if (std::string problem = CompareTransactions(*transactions); !problem.empty()) return problem;
    absl::StatusOr<std::vector<KeyRecord>> keys = Retrying<std::vector<KeyRecord>>(
        ReadAttempts(), [&] { return ReadAllKeyRecords(*faults_); });
    if (!keys.ok()) return absl::StrCat("reading key records: ", keys.status().ToString());
    if (std::string problem = CompareKeys(*keys); !problem.empty()) return problem;
    absl::StatusOr<std::vector<OutboxEvent>> events =
        Retrying<std::vector<OutboxEvent>>(ReadAttempts(), [&] { return ReadAllEvents(*faults_); });
    if (!events.ok()) return absl::StrCat("reading outbox events: ", events.status().ToString());
    std::set<std::string> evented;
    for (const OutboxEvent& event : *events) evented.insert(event.transaction_id);
    if (events->size() != transactions->size() || evented.size() != transactions->size()) {
      return absl::StrCat(events->size(), " outbox events (", evented.size(), " transactions) for ",
                          transactions->size(), " transactions");
    }
    if (std::string problem = CompareHoldsAndAvailable(); !problem.empty()) return problem;
    return RunVerify(*faults_);
  }

  std::string CompareTransactions(const std::vector<Transaction>& transactions) {
    const auto& expected = model_.transactions();
    for (const Transaction& transaction : transactions) {
      auto it = expected.find(transaction.id);
      if (it == expected.end()) {
        return absl::StrCat(
            "the database holds a transaction the model never saw commit ",
            "(posted twice, or a fault that wrote): ", TransactionToJson(transaction).dump());
      }
      if (it->second != transaction) {
        return absl::StrCat("stored transaction differs from the one returned:\n  stored   ",
                            TransactionToJson(transaction).dump(), "\n  returned ",
                            TransactionToJson(it->second).dump());
      }
    }
    if (transactions.size() != expected.size()) {
      return absl::StrCat(transactions.size(), " transactions in the database, ", expected.size(),
                          " acknowledged or resolved: a commit was lost");
    }
    return "";
  }

  std::string CompareKeys(const std::vector<KeyRecord>& keys) {
    const auto& expected = model_.keys();
    for (const KeyRecord& record : keys) {
      auto it = expected.find(IdentityOf(record.identity));
      if (it == expected.end()) {
        return absl::StrCat("key record ", record.identity.Encoded(), " was never committed");
      }
      if (it->second.transaction_id != record.transaction_id ||
          it->second.fingerprint != record.fingerprint ||
          it->second.expires_at != record.expires_at) {
        return absl::StrCat("key record ", record.identity.Encoded(), " names ",
                            record.transaction_id, ", the model ", it->second.transaction_id);
      }
    }
    if (keys.size() != expected.size()) {
      return absl::StrCat(keys.size(), " key records in the database, ", expected.size(),
                          " keys committed");
    }
    return "";
  }

  const PropertyContext& context_;
  const Universe& universe_;
  SequentialOptions options_;
  ManualClock clock_{ClockStart()};
  std::shared_ptr<FaultInjectingEngine> faults_;
  std::unique_ptr<Ledger> ledger_;
  LedgerModel model_;
  RunStats stats_;
  std::vector<SubmitRequest> unacknowledged_;
  std::set<std::string> seen_transaction_ids_;
  std::set<std::pair<IdentityTuple, std::string>>
      declined_;           // (identity, fingerprint) rejected once
  bool tolerant_ = false;  // a real fault happened: pooled connections may be dead
};

std::vector<int> AllIndexes(size_t count) {
  std::vector<int> indexes(count);
  for (size_t i = 0; i < count; ++i) indexes[i] = static_cast<int>(i);
  return indexes;
}

// What a failure is about, without the numbers and ids that vary from run to run: the
// message up to its first digit, quote or brace.
std::string FailureClass(const Violation& violation) {
  size_t end = violation.message.find_first_of("0123456789\"{");
  return absl::StrCat(violation.step_index, ":", violation.message.substr(0, end));
}

// Drops the steps after the failing one: they cannot matter.
void TruncateAfter(std::vector<int>& indexes, int failing_index) {
  auto end = std::upper_bound(indexes.begin(), indexes.end(), failing_index);
  if (end != indexes.end() && failing_index >= 0) indexes.erase(end, indexes.end());
}

}  // namespace

std::vector<VelocityLimit> PropertyVelocityLimits() {
  return {VelocityLimit{.window = absl::Hours(1), .debit_count_max = 5, .debit_amount_max = 4000}};
}

std::string RunStats::ToText() const {
  std::vector<std::string> parts;
  for (const auto& [what, count] : counts) parts.push_back(absl::StrCat(what, "=", count));
  return absl::StrJoin(parts, ", ");
}

RunResult RunSequential(const PropertyContext& context, const Universe& universe,
                        const std::vector<Step>& steps, const std::vector<int>& indexes,
                        const SequentialOptions& options) {
  SequentialRun run(context, universe, options);
  return run.Run(steps, indexes.empty() ? AllIndexes(steps.size()) : indexes);
}

ShrinkResult Shrink(const PropertyContext& context, const Universe& universe,
                    const std::vector<Step>& steps, const std::vector<int>& indexes,
                    const Violation& violation, const SequentialOptions& options,
                    absl::Duration time_max) {
  absl::Time deadline = absl::Now() + time_max;
  ShrinkResult result;
  result.indexes = indexes.empty() ? AllIndexes(steps.size()) : indexes;
  result.violation = violation;
  TruncateAfter(result.indexes, violation.step_index);
  size_t chunk = std::max<size_t>(1, result.indexes.size() / 2);
  while (chunk >= 1 && !result.indexes.empty()) {
    bool removed = false;
    for (size_t start = 0; start < result.indexes.size();) {
      if (absl::Now() >= deadline) {
        result.out_of_time = true;
        return result;
      }
      std::vector<int> candidate = result.indexes;
      candidate.erase(
          candidate.begin() + static_cast<ptrdiff_t>(start),
          candidate.begin() + static_cast<ptrdiff_t>(std::min(start + chunk, candidate.size())));
      ++result.runs;
      RunResult run = candidate.empty()
                          ? RunResult{}
                          : RunSequential(context, universe, steps, candidate, options);
      // Only the same failure at the same step counts: shrinking must not wander off to
      // another violation that happens to be easier to reach.
      if (run.violation.has_value() && FailureClass(*run.violation) == FailureClass(violation)) {
        result.indexes = std::move(candidate);
        result.violation = *run.violation;
        TruncateAfter(result.indexes, run.violation->step_index);
        removed = true;
      } else {
        start += chunk;
      }
    }
    if (chunk == 1 && !removed) break;
    if (!removed) chunk /= 2;
    chunk = std::max<size_t>(1, std::min(chunk, result.indexes.size() / 2));
  }
  return result;
}

std::string FailureReport(const std::string& engine_name, const std::string& test_name,
                          uint64_t seed, const std::vector<Step>& steps, const Violation& original,
                          const std::optional<ShrinkResult>& shrunk) {
  auto where = [&](int index) {
    if (index < 0) return std::string("during setup");
    if (index >= static_cast<int>(steps.size()))
      return std::string("at the final resend/checkpoint");
    return absl::StrCat("at step #", index);
  };
  std::string text = absl::StrCat("PROPERTY VIOLATED on ", engine_name, ", seed ", seed, ", ",
                                  where(original.step_index), " of ", steps.size(), ":\n  ",
                                  original.message, "\n");
  absl::StrAppend(&text, "replay the whole run:\n  ", ReplayCommand(test_name, seed), "\n");
  if (!shrunk.has_value()) return text;
  absl::StrAppend(&text, "shrunk to ", shrunk->indexes.size(), " steps in ", shrunk->runs, " runs",
                  shrunk->out_of_time ? " (time budget ran out)" : "", "; it fails ",
                  where(shrunk->violation.step_index), " with:\n  ", shrunk->violation.message,
                  "\nsteps:\n");
  for (int index : shrunk->indexes) {
    absl::StrAppend(&text, "  ", DescribeStep(index, steps[static_cast<size_t>(index)]), "\n");
  }
  absl::StrAppend(&text, "replay the shrunk steps:\n  ",
                  ReplayCommand(test_name, seed, shrunk->indexes), "\n");
  return text;
}

}  // namespace ledger::property
