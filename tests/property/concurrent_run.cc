#include "tests/property/concurrent_run.h"

#include <atomic>
#include <random>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/barrier.h"
#include "absl/synchronization/mutex.h"
#include "base/clock.h"
#include "base/status.h"
#include "idempotency/fingerprint.h"
#include "ledger/json.h"
#include "tests/property/database_reads.h"
#include "tests/property/order_rows.h"
#include "tests/support/fault_injecting_engine.h"

namespace ledger::property {
namespace {

using testing::FaultInjectingEngine;
using testing::FaultPoint;

constexpr size_t kReversibleIdsPerPhase = 40;
// Few holds, so several clients race on each.
constexpr size_t kRacedHoldsPerPhase = 12;
// Client 0 moves the clock this far mid-phase, past every short hold timeout placed
// before (the generator's are 20-90 s), and sweeps; client 1 sweeps too.
constexpr absl::Duration kConcurrentClockMove = absl::Minutes(2);
constexpr int kBoundaryFaultPercent = 8;
constexpr int kKillPercent = 4;

bool IsHoldRefusal(RejectionReason reason) {
  return reason == RejectionReason::kHoldNotFound || reason == RejectionReason::kHoldCaptured ||
         reason == RejectionReason::kHoldVoided || reason == RejectionReason::kHoldExpired ||
         reason == RejectionReason::kCaptureExceedsHold;
}

HoldStatus StatusSetBy(OperationKind kind) {
  if (kind == OperationKind::kCapture) return HoldStatus::kCaptured;
  if (kind == OperationKind::kVoid) return HoldStatus::kVoided;
  return HoldStatus::kExpired;
}

std::string Describe(const absl::StatusOr<Outcome>& result) {
  if (!result.ok()) return absl::StrCat("error ", result.status().ToString());
  std::string text = OutcomeToJson(*result).dump();
  if (result->kind == OutcomeKind::kFaulted)
    absl::StrAppend(&text, " fault=", result->fault.ToString());
  return text;
}

}  // namespace

Attempt MakeAttempt(const Request& request) {
  Attempt attempt;
  attempt.request = SubmitRequest{request.key, request.scope, request.operation, ClaimOptions{}};
  attempt.request.claim.ttl = request.ttl;
  attempt.fingerprint = Fingerprint(OperationPayload(request.operation)).value();
  return attempt;
}

// ---- ConcurrencyChecker ---------------------------------------------------------

std::string ConcurrencyChecker::Learn(const IdentityTuple& identity, const std::string& fingerprint,
                                      const Transaction& transaction, bool acknowledged_commit) {
  if (transaction.fingerprint != fingerprint) {
    return absl::StrCat("key ", IdentityText(identity), " answered with a transaction of ",
                        "another payload: ", TransactionToJson(transaction).dump());
  }
  auto [it, inserted] = known_.try_emplace(identity, Known{fingerprint, transaction, 0, batch_});
  if (!inserted && it->second.transaction != transaction) {
    return absl::StrCat("key ", IdentityText(identity), " posted twice: answered with ",
                        TransactionToJson(it->second.transaction).dump(), " and with ",
                        TransactionToJson(transaction).dump());
  }
  if (acknowledged_commit && ++it->second.commit_acknowledgements > 1) {
    return absl::StrCat("key ", IdentityText(identity), " was acknowledged as committed ",
                        it->second.commit_acknowledgements, " times");
  }
  auto [owner, fresh] = by_transaction_id_.try_emplace(transaction.id, identity);
  if (fresh && transaction.hold.has_value()) hold_ids_.push_back(transaction.id);
  if (!fresh && owner->second != identity) {
    return absl::StrCat("transaction ", transaction.id,
                        " answered for two keys: ", IdentityText(owner->second), " and ",
                        IdentityText(identity));
  }
  return "";
}

std::string ConcurrencyChecker::TakeAnswers(const std::vector<Attempt>& attempts,
                                            bool faults_allowed) {
  ++batch_;
  for (const Attempt& attempt : attempts) {
    IdentityTuple identity = IdentityOf(attempt.request);
    const absl::StatusOr<Outcome>& result = attempt.result;
    std::string problem;
    if (!result.ok()) {
      if (IsConflict(result.status())) {
        conflicts_.push_back({identity, attempt.fingerprint});
        stats_.Add("conflict");
      } else if (IsInProgress(result.status())) {
        unacknowledged_.push_back(attempt);
        stats_.Add("in progress");
      } else {
        problem =
            absl::StrCat("unexpected error for ", IdentityText(identity), ": ", Describe(result));
      }
    } else {
      switch (result->kind) {
        case OutcomeKind::kCommitted:
          stats_.Add("committed");
          if (result->transaction.hold.has_value() || result->transaction.hold_id.has_value()) {
            stats_.Add(absl::StrCat("committed: ",
                                    View(OperationKindName(result->transaction.kind))));
          }
          problem = CheckSettlesTheNamedHold(attempt);
          if (problem.empty()) {
            problem = Learn(identity, attempt.fingerprint, result->transaction, true);
          }
          break;
        case OutcomeKind::kDuplicate:
          stats_.Add("duplicate");
          problem = Learn(identity, attempt.fingerprint, result->transaction, false);
          break;
        case OutcomeKind::kRejected:
          stats_.Add(absl::StrCat("rejected: ", View(RejectionReasonName(result->reason))));
          if (IsHoldRefusal(result->reason)) {
            const Operation& op = attempt.request.operation;
            refused_settlements_.push_back({op.hold_id, result->reason, op.capture_amount});
          }
          // A key committed before this batch: a retry of it must replay, never reject.
          if (auto known = known_.find(identity);
              known != known_.end() && known->second.learned_in_batch < batch_ &&
              known->second.fingerprint == attempt.fingerprint) {
            problem = absl::StrCat("a retry of committed key ", IdentityText(identity),
                                   " was rejected instead of replayed: ", Describe(result));
          }
          break;
        case OutcomeKind::kFaulted:
          stats_.Add(result->in_doubt ? "faulted in doubt" : "faulted");
          if (!faults_allowed) {
            problem = absl::StrCat("faulted with no fault injected: ", Describe(result));
          }
          unacknowledged_.push_back(attempt);
          unresolved_[identity] = unresolved_[identity] || result->in_doubt;
          break;
      }
    }
    if (!problem.empty()) return problem;
  }
  return "";
}

// A committed capture or void is a transaction of its kind settling the hold it named.
std::string ConcurrencyChecker::CheckSettlesTheNamedHold(const Attempt& attempt) {
  const Operation& op = attempt.request.operation;
  if (op.kind != OperationKind::kCapture && op.kind != OperationKind::kVoid) return "";
  const Transaction& transaction = attempt.result->transaction;
  if (transaction.kind == op.kind && transaction.hold_id == op.hold_id) return "";
  return absl::StrCat("a ", View(OperationKindName(op.kind)), " of hold ", op.hold_id,
                      " committed ", TransactionToJson(transaction).dump());
}

std::string ConcurrencyChecker::TakeResend(const Attempt& attempt) {
  stats_.Add("resends");
  return TakeAnswers({attempt}, /*faults_allowed=*/true);
}

std::vector<Attempt> ConcurrencyChecker::TakeUnacknowledged() {
  std::vector<Attempt> taken = std::move(unacknowledged_);
  unacknowledged_.clear();
  return taken;
}

std::vector<std::string> ConcurrencyChecker::RecentHoldIds(size_t count_max) const {
  size_t first = hold_ids_.size() > count_max ? hold_ids_.size() - count_max : 0;
  return std::vector<std::string>(hold_ids_.begin() + static_cast<ptrdiff_t>(first),
                                  hold_ids_.end());
}

std::vector<std::string> ConcurrencyChecker::ReversibleTransactionIds(size_t count_max) const {
  std::vector<std::string> ids;
  for (const auto& [identity, known] : known_) {
    if (ids.size() >= count_max) break;
    if (!known.transaction.reversal_of.has_value()) ids.push_back(known.transaction.id);
  }
  return ids;
}

// Every key record is a commit some answer acknowledged or replayed, or one an in-doubt
// attempt made (adopted here); every acknowledged commit has its record.
std::string ConcurrencyChecker::CheckKeysAgainstAnswers(Engine& engine,
                                                        const std::vector<KeyRecord>& keys) {
  std::set<IdentityTuple> recorded;
  for (const KeyRecord& record : keys) {
    IdentityTuple identity = IdentityOf(record.identity);
    recorded.insert(identity);
    auto known = known_.find(identity);
    if (known != known_.end()) {
      if (known->second.transaction.id != record.transaction_id ||
          known->second.fingerprint != record.fingerprint) {
        return absl::StrCat("key record ", IdentityText(identity), " names ", record.transaction_id,
                            " but the clients were answered with ", known->second.transaction.id);
      }
      continue;
    }
    auto unresolved = unresolved_.find(identity);
    if (unresolved == unresolved_.end() || !unresolved->second) {
      return absl::StrCat("key ", IdentityText(identity), " committed in the database, but no ",
                          "client was told so and no attempt was in doubt (a fault that wrote, ",
                          "or a rejection that did)");
    }
    absl::StatusOr<std::optional<Transaction>> stored =
        engine.GetTransaction(record.transaction_id);
    if (!stored.ok() || !stored->has_value()) {
      return absl::StrCat("key record ", IdentityText(identity), " names unreadable transaction ",
                          record.transaction_id);
    }
    stats_.Add("in-doubt commits found");
    if (std::string problem = Learn(identity, record.fingerprint, **stored, false);
        !problem.empty()) {
      return problem;
    }
  }
  for (const auto& [identity, known] : known_) {
    if (recorded.count(identity) == 0) {
      return absl::StrCat("the commit of key ", IdentityText(identity), " (transaction ",
                          known.transaction.id, ") is not in the database: lost");
    }
  }
  unresolved_.clear();  // in-doubt attempts not found did not commit; resends follow
  return "";
}

std::string ConcurrencyChecker::CheckBalances(const std::vector<Account>& accounts) const {
  std::map<std::string, std::pair<Amount, int64_t>> expected;  // balance, version
  for (const auto& [identity, known] : known_) {
    for (const Entry& entry : known.transaction.entries) {
      auto& [balance, version] = expected[entry.account_id];
      balance += entry.amount;
      version += 1;
    }
  }
  for (const Account& account : accounts) {
    auto [balance, version] = expected[account.id];
    if (account.balance != balance || account.version != version) {
      return absl::StrCat("account ", account.id, " has balance ", account.balance, " version ",
                          account.version, "; the acknowledged transactions make ", balance,
                          " version ", version);
    }
  }
  return CheckConservationAndSolvency(accounts);
}

// Exactly one settlement per settled hold, agreeing with its status; none for a pending
// one; the pending amounts as stored are the pending holds'; available balances as of
// `now` never below the floor.
std::string ConcurrencyChecker::CheckHolds(const std::vector<Hold>& holds,
                                           const std::vector<Transaction>& transactions,
                                           const std::vector<Account>& accounts, absl::Time now) {
  std::map<std::string, const Transaction*> settlements;  // hold id -> what settled it
  for (const Transaction& transaction : transactions) {
    if (!transaction.hold_id.has_value()) continue;
    auto [it, first] = settlements.emplace(*transaction.hold_id, &transaction);
    if (!first) {
      return absl::StrCat("hold ", *transaction.hold_id, " was settled twice: by a ",
                          View(OperationKindName(it->second->kind)), " and by a ",
                          View(OperationKindName(transaction.kind)));
    }
  }
  std::map<std::string, const Hold*> by_id;
  std::map<std::string, std::pair<Amount, Amount>> pending;  // debits, credits
  std::map<std::string, Amount> lapsed_debits;
  for (const Hold& hold : holds) {
    by_id[hold.id] = &hold;
    auto owner = by_transaction_id_.find(hold.id);
    if (owner == by_transaction_id_.end() ||
        known_.at(owner->second).transaction.hold != std::optional<HoldTerms>(hold.terms) ||
        known_.at(owner->second).transaction.created_at != hold.created_at) {
      return absl::StrCat("hold ", HoldToJson(hold).dump(),
                          " is not the hold of any transaction the clients were answered with");
    }
    auto settlement = settlements.find(hold.id);
    if (hold.status == HoldStatus::kPending) {
      if (hold.settled_by.has_value() || settlement != settlements.end()) {
        return absl::StrCat("hold ", hold.id, " is pending but has a settlement");
      }
      pending[hold.terms.from].first += hold.terms.amount;
      pending[hold.terms.to].second += hold.terms.amount;
      if (hold.LapsedAt(now)) lapsed_debits[hold.terms.from] += hold.terms.amount;
      continue;
    }
    if (settlement == settlements.end() || hold.settled_by != settlement->second->id ||
        StatusSetBy(settlement->second->kind) != hold.status) {
      return absl::StrCat("hold ", HoldToJson(hold).dump(), " does not match its settlement ",
                          settlement == settlements.end()
                              ? "(none)"
                              : TransactionToJson(*settlement->second).dump());
    }
    const Transaction& settled = *settlement->second;
    bool lapsed_before =
        hold.terms.expires_at.has_value() && *hold.terms.expires_at <= settled.created_at;
    if (settled.kind == OperationKind::kExpire ? !lapsed_before : lapsed_before) {
      return absl::StrCat("hold ", hold.id, " (expires_at ",
                          FormatTimestamp(hold.terms.expires_at.value_or(absl::InfiniteFuture())),
                          ") was settled by a ", View(OperationKindName(settled.kind)), " at ",
                          FormatTimestamp(settled.created_at));
    }
    if (settled.kind == OperationKind::kCapture) {
      const std::vector<Entry>& entries = settled.entries;
      if (entries.size() != 2 || entries[0].account_id != hold.terms.from ||
          entries[1].account_id != hold.terms.to || entries[1].amount <= 0 ||
          entries[0].amount != -entries[1].amount || entries[1].amount > hold.terms.amount) {
        return absl::StrCat("capture ", TransactionToJson(settled).dump(), " does not post at ",
                            "most hold ", HoldToJson(hold).dump());
      }
    }
  }
  for (const auto& [hold_id, settled] : settlements) {
    if (by_id.count(hold_id) == 0) {
      return absl::StrCat("transaction ", settled->id, " settles hold ", hold_id,
                          " which does not exist");
    }
  }
  for (const std::string& id : hold_ids_) {
    if (by_id.count(id) == 0) {
      return absl::StrCat("the hold placed by transaction ", id, " is lost");
    }
  }
  if (std::string problem = CheckRefusedSettlements(by_id, now); !problem.empty()) return problem;
  for (const Account& account : accounts) {
    auto [debits, credits] = pending[account.id];
    if (account.pending_debits != debits || account.pending_credits != credits) {
      return absl::StrCat("account ", account.id, " has pending debits ", account.pending_debits,
                          " and credits ", account.pending_credits, "; its pending holds make ",
                          debits, " and ", credits);
    }
    Account reserving = account;
    reserving.pending_debits -= lapsed_debits[account.id];
    if (reserving.Available() < reserving.BalanceFloor()) {
      return absl::StrCat("account ", account.id, " has an available balance of ",
                          reserving.Available(), ", below its floor ", reserving.BalanceFloor());
    }
  }
  return "";
}

// A refusal names the hold's final state: settlement is final and time only moves on.
std::string ConcurrencyChecker::CheckRefusedSettlements(
    const std::map<std::string, const Hold*>& holds, absl::Time now) {
  std::vector<RefusedSettlement> refused = std::move(refused_settlements_);
  refused_settlements_.clear();
  for (const RefusedSettlement& refusal : refused) {
    auto found = holds.find(refusal.hold_id);
    const Hold* hold = found == holds.end() ? nullptr : found->second;
    bool agrees = false;
    switch (refusal.reason) {
      case RejectionReason::kHoldNotFound:
        agrees = hold == nullptr;
        break;
      case RejectionReason::kHoldCaptured:
        agrees = hold != nullptr && hold->status == HoldStatus::kCaptured;
        break;
      case RejectionReason::kHoldVoided:
        agrees = hold != nullptr && hold->status == HoldStatus::kVoided;
        break;
      case RejectionReason::kHoldExpired:
        agrees = hold != nullptr && (hold->status == HoldStatus::kExpired || hold->LapsedAt(now));
        break;
      case RejectionReason::kCaptureExceedsHold:
        agrees = hold != nullptr && refusal.capture_amount.value_or(0) > hold->terms.amount;
        break;
      default:
        break;
    }
    if (!agrees) {
      return absl::StrCat("a settlement of hold ", refusal.hold_id, " was refused as ",
                          View(RejectionReasonName(refusal.reason)), " but the hold is ",
                          hold == nullptr ? "not there" : HoldToJson(*hold).dump());
    }
  }
  return "";
}

std::string ConcurrencyChecker::CheckDatabase(Engine& engine, int read_attempts, absl::Time now) {
  stats_.Add("quiescent checks");
  auto keys =
      Retrying<std::vector<KeyRecord>>(read_attempts, [&] { return ReadAllKeyRecords(engine); });
  auto transactions = Retrying<std::vector<Transaction>>(
      read_attempts, [&] { return ReadAllTransactions(engine); });
  auto events =
      Retrying<std::vector<OutboxEvent>>(read_attempts, [&] { return ReadAllEvents(engine); });
  auto accounts =
      Retrying<std::vector<Account>>(read_attempts, [&] { return ReadAllAccounts(engine); });
  auto holds = Retrying<std::vector<Hold>>(read_attempts, [&] { return ReadAllHolds(engine); });
  for (const absl::Status& status : {keys.status(), transactions.status(), events.status(),
                                     accounts.status(), holds.status()}) {
    if (!status.ok()) return absl::StrCat("reading the database: ", status.ToString());
  }
  if (std::string problem = CheckKeysAgainstAnswers(engine, *keys); !problem.empty())
    return problem;
  if (std::string problem = CheckOneTransactionPerKey(*transactions, *keys, *events);
      !problem.empty()) {
    return problem;
  }
  std::set<std::string> reversed;
  for (const Transaction& transaction : *transactions) {
    if (transaction.kind == OperationKind::kExpire) {  // a sweep's: no key, no answer
      if (!transaction.entries.empty() || !transaction.hold_id.has_value() ||
          !transaction.fingerprint.empty() || transaction.hold.has_value()) {
        return absl::StrCat("malformed expire transaction ", TransactionToJson(transaction).dump());
      }
      continue;
    }
    auto owner = by_transaction_id_.find(transaction.id);
    if (owner == by_transaction_id_.end() || known_.at(owner->second).transaction != transaction) {
      return absl::StrCat("stored transaction differs from the one answered: ",
                          TransactionToJson(transaction).dump());
    }
    if (transaction.reversal_of.has_value() && !reversed.insert(*transaction.reversal_of).second) {
      return absl::StrCat("transaction ", *transaction.reversal_of, " was reversed twice");
    }
  }
  for (const auto& [identity, fingerprint] : conflicts_) {
    auto known = known_.find(identity);
    if (known == known_.end() || known->second.fingerprint == fingerprint) {
      return absl::StrCat(
          "key ", IdentityText(identity), " was answered \"conflict\" but ",
          known == known_.end() ? "never committed" : "committed this very payload");
    }
  }
  conflicts_.clear();
  if (std::string problem = CheckBalances(*accounts); !problem.empty()) return problem;
  if (std::string problem = CheckHolds(*holds, *transactions, *accounts, now); !problem.empty()) {
    return problem;
  }
  return RunVerify(engine);
}

// ---- the run ----------------------------------------------------------------------

namespace {

class ConcurrentRun {
 public:
  ConcurrentRun(const PropertyContext& context, const Universe& universe, uint64_t seed,
                const ConcurrentOptions& options)
      : context_(context), universe_(universe), seed_(seed), options_(options) {}

  RunResult Run() {
    RunResult result;
    std::string problem = Setup();
    for (int phase = 0; problem.empty() && phase < options_.phases; ++phase) {
      problem = RunPhase(phase);
      if (!problem.empty()) problem = absl::StrCat("phase ", phase, ": ", problem);
    }
    if (problem.empty()) problem = ResendEverything();
    if (!problem.empty()) result.violation = Violation{-1, problem};
    result.stats = checker_.stats();
    if (sessions_killed_ > 0) result.stats.Add("sessions killed", sessions_killed_);
    result.stats.Add("holds expired by sweeps", holds_swept_);
    if (sweeps_faulted_ > 0) result.stats.Add("sweeps faulted", sweeps_faulted_);
    if (restarts_ > 0) result.stats.Add("server restarts", restarts_);
    result.stats.Add("client requests", client_requests_);
    result.stats.Add("client transactions", client_transactions_);
    result.stats.Add("units of work", units_of_work_);
    return result;
  }

 private:
  bool FaultsExpected() const {
    return options_.boundary_faults || options_.kill_sessions || options_.restart_mid_phase;
  }
  int ReadAttempts() const { return FaultsExpected() ? options_.resend_attempts_max : 1; }

  std::string Setup() {
    absl::StatusOr<std::unique_ptr<Engine>> opened = context_.open_fresh();
    if (!opened.ok())
      return absl::StrCat("could not open a fresh database: ", opened.status().ToString());
    std::shared_ptr<Engine> engine(std::move(*opened));
    if (options_.wrap_engine) engine = options_.wrap_engine(std::move(engine));
    faults_ = std::make_shared<FaultInjectingEngine>(std::move(engine));
    LedgerOptions ledger_options;
    ledger_options.clock = &clock_;
    ledger_options.group_commit.enabled = options_.group_commit;
    absl::StatusOr<Ledger> ledger = Ledger::Open(faults_, ledger_options);
    if (!ledger.ok()) return absl::StrCat("opening the ledger: ", ledger.status().ToString());
    ledger_ = std::make_unique<Ledger>(*std::move(ledger));
    absl::StatusOr<std::vector<Account>> accounts = OpenUniverse(*ledger_, universe_);
    if (!accounts.ok()) return absl::StrCat("setup: ", accounts.status().ToString());
    if (context_.orders_table.empty()) return "";
    absl::Status created =
        CreateOrdersTable(*ledger_, context_.orders_table, context_.orders_table_setup);
    return created.ok() ? "" : absl::StrCat("creating the orders table: ", created.ToString());
  }

  std::string RunPhase(int phase) {
    ConcurrentPhaseOptions phase_options{phase, options_.threads, options_.requests_per_thread,
                                         checker_.ReversibleTransactionIds(kReversibleIdsPerPhase),
                                         checker_.RecentHoldIds(kRacedHoldsPerPhase)};
    std::vector<std::vector<Request>> lists =
        GenerateConcurrentPhase(seed_, universe_, phase_options);
    std::vector<std::vector<Attempt>> logs(lists.size());
    std::vector<std::string> client_problems(lists.size());
    // Logged beside the answers: with batches or group commit, fewer transactions than
    // requests show that submits did share them (retries and sweeps begin some too).
    faults_->SetHook(FaultPoint::kBegin, [this] { client_transactions_ += 1; });
    for (const std::vector<Request>& list : lists) {
      client_requests_ += static_cast<int>(list.size());
    }
    std::string kill_problem;
    std::thread killer;
    if (options_.kill_sessions) {
      StartKilling();
      killer = std::thread([&] { kill_problem = KillOnRequest(); });
    }
    absl::Barrier start(static_cast<int>(lists.size()));
    std::vector<std::thread> clients;
    for (size_t client = 0; client < lists.size(); ++client) {
      clients.emplace_back([&, client] {
        start.Block();  // every client starts at once: the races are real
        client_problems[client] = RunClient(phase, client, lists[client], logs[client]);
      });
    }
    for (std::thread& thread : clients) thread.join();
    if (killer.joinable()) {
      StopKilling();
      killer.join();
    }
    faults_->Clear();
    for (const std::string& problem : client_problems) {
      if (!problem.empty()) return problem;
    }
    if (!kill_problem.empty()) return kill_problem;
    if (std::string problem = SweepAlone(); !problem.empty()) return problem;
    std::vector<Attempt> answers;
    for (std::vector<Attempt>& log : logs) {
      for (Attempt& attempt : log) {
        sent_.push_back(attempt);
        answers.push_back(std::move(attempt));
      }
    }
    if (std::string problem = checker_.TakeAnswers(answers, FaultsExpected()); !problem.empty()) {
      return problem;
    }
    if (std::string problem = checker_.CheckDatabase(*faults_, ReadAttempts(), clock_.Now());
        !problem.empty()) {
      return absl::StrCat("at the quiescent point: ", problem);
    }
    if (std::string problem = CheckOrders(); !problem.empty()) {
      return absl::StrCat("at the quiescent point: ", problem);
    }
    if (std::string problem = ResendUnacknowledged(); !problem.empty()) return problem;
    if (std::string problem = checker_.CheckDatabase(*faults_, ReadAttempts(), clock_.Now());
        !problem.empty()) {
      return problem;
    }
    return CheckOrders();
  }

  // Mid-phase, racing the other clients' captures and voids: client 0 moves the clock
  // past the short hold timeouts and sweeps; client 1 sweeps too. A sweep fails only
  // under injected or real faults.
  std::string SweepRacing(size_t client) {
    if (client == 0) clock_.Advance(kConcurrentClockMove);
    absl::StatusOr<int64_t> swept = ledger_->ExpireHolds();
    if (swept.ok()) {
      holds_swept_ += static_cast<int>(*swept);
      return "";
    }
    sweeps_faulted_ += 1;
    if (FaultsExpected()) return "";
    return absl::StrCat("ExpireHolds failed with no fault injected: ", swept.status().ToString());
  }

  // After the clients joined: whatever lapsed is swept, so the checks see it recorded.
  std::string SweepAlone() {
    absl::StatusOr<int64_t> swept = ledger_->ExpireHolds();
    for (int attempt = 1; !swept.ok() && FaultsExpected() && attempt < options_.resend_attempts_max;
         ++attempt) {
      swept = ledger_->ExpireHolds();
    }
    if (!swept.ok()) {
      return absl::StrCat("ExpireHolds at a quiescent point: ", swept.status().ToString());
    }
    holds_swept_ += static_cast<int>(*swept);
    return "";
  }

  std::string RunClient(int phase, size_t client, const std::vector<Request>& requests,
                        std::vector<Attempt>& log) {
    // Which faults a client arms is seeded; which transaction they hit is up to the race.
    std::mt19937_64 random(seed_ ^ (static_cast<uint64_t>(phase) << 32) ^ client);
    static const std::vector<FaultPoint> kPoints = {
        FaultPoint::kBegin,        FaultPoint::kClaim,          FaultPoint::kAfterClaim,
        FaultPoint::kLockAccounts, FaultPoint::kWrite,          FaultPoint::kAfterWrite,
        FaultPoint::kCommit,       FaultPoint::kCommitReplyLost};
    const size_t batch_size = static_cast<size_t>(std::max(options_.batch_size, 1));
    for (size_t i = 0; i < requests.size(); i += batch_size) {
      if (options_.boundary_faults && random() % 100 < kBoundaryFaultPercent) {
        FaultPoint point = kPoints[random() % kPoints.size()];
        faults_->FailAt(point, random() % 2 == 0
                                   ? absl::UnavailableError("injected: connection lost")
                                   : RetryableError("injected: deadlock detected"));
      }
      if (options_.kill_sessions && random() % 100 < kKillPercent) RequestKill();
      if (options_.restart_mid_phase && phase == 0 && client == 0 &&
          i / batch_size == requests.size() / 2 / batch_size) {
        if (!context_.restart_server) return "the context cannot restart its server";
        if (absl::Status restarted = context_.restart_server(); !restarted.ok()) {
          return absl::StrCat("restart failed: ", restarted.ToString());
        }
        restarts_ += 1;
      }
      if (client < 2 && i / batch_size == requests.size() / 2 / batch_size) {
        if (std::string problem = SweepRacing(client); !problem.empty()) return problem;
      }
      const size_t end = std::min(i + batch_size, requests.size());
      if (std::string problem = Send(requests, i, end, log); !problem.empty()) return problem;
    }
    return "";
  }

  std::string KillOneBusySession() {
    if (!context_.kill_one_busy_session) return "the context cannot kill sessions";
    absl::StatusOr<int> killed = context_.kill_one_busy_session();
    if (!killed.ok()) return absl::StrCat("kill failed: ", killed.status().ToString());
    sessions_killed_ += *killed;
    return "";
  }

  // Clients ask one killing thread to kill and go on submitting. A kill keeps whoever
  // runs it away for a new administrative session and the victim's exit (tens of
  // milliseconds, one kill at a time): clients that killed inline left about one client
  // submitting, so the kills rarely met concurrent work, and with group commit almost no
  // shared transaction was ever killed.
  void StartKilling() {
    absl::MutexLock lock(&kill_mutex_);
    kill_requested_ = false;
    clients_done_ = false;
  }
  void StopKilling() {
    absl::MutexLock lock(&kill_mutex_);
    clients_done_ = true;
  }
  void RequestKill() {
    absl::MutexLock lock(&kill_mutex_);
    kill_requested_ = true;
  }
  bool KillRequestedOrClientsDone() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(kill_mutex_) {
    return kill_requested_ || clients_done_;
  }

  // Kills one busy session per request; requests made while a kill runs count as one
  // (a kill takes longer than the clients take to ask for the next). Returns once the
  // clients are done.
  std::string KillOnRequest() {
    while (true) {
      {
        absl::MutexLock lock(&kill_mutex_);
        kill_mutex_.Await(absl::Condition(this, &ConcurrentRun::KillRequestedOrClientsDone));
        if (clients_done_) return "";
        kill_requested_ = false;
      }
      if (std::string problem = KillOneBusySession(); !problem.empty()) return problem;
    }
  }

  // Sends requests [begin, end): one Submit, or one SubmitBatch for several.
  std::string Send(const std::vector<Request>& requests, size_t begin, size_t end,
                   std::vector<Attempt>& log) {
    if (end - begin == 1) {
      Attempt attempt = MakeAttempt(requests[begin]);
      attempt.result = SubmitOne(attempt.request);
      log.push_back(std::move(attempt));
      return "";
    }
    SubmitBatchRequest batch;
    std::vector<Attempt> attempts;
    for (size_t i = begin; i < end; ++i) {
      attempts.push_back(MakeAttempt(requests[i]));
      batch.items.push_back(attempts.back().request);
    }
    absl::StatusOr<std::vector<SubmitResult>> results = ledger_->SubmitBatch(batch);
    if (!results.ok()) return absl::StrCat("batch refused: ", results.status().ToString());
    if (results->size() != attempts.size()) return "a batch answered the wrong number of items";
    for (size_t i = 0; i < attempts.size(); ++i) {
      attempts[i].result = std::move((*results)[i]);
      log.push_back(std::move(attempts[i]));
    }
    return "";
  }

  // Resends every unacknowledged request under its key, alone, until it is answered.
  std::string ResendUnacknowledged() {
    for (int round = 0; round < options_.resend_attempts_max; ++round) {
      std::vector<Attempt> pending = checker_.TakeUnacknowledged();
      if (pending.empty()) return "";
      for (Attempt& attempt : pending) {
        attempt.result = SubmitOne(attempt.request);
        if (std::string problem = checker_.TakeResend(attempt); !problem.empty()) return problem;
      }
    }
    std::vector<Attempt> left = checker_.TakeUnacknowledged();
    if (left.empty()) return "";
    return absl::StrCat(left.size(), " requests still unanswered after ",
                        options_.resend_attempts_max, " resends, e.g. ", left.front().request.key,
                        ": ", Describe(left.front().result));
  }

  // After the last phase: every request ever sent, once more. Each replays its key's
  // commit, conflicts with it, or (never committed) is decided now: one commit per key.
  std::string ResendEverything() {
    std::set<std::pair<IdentityTuple, std::string>> done;
    for (Attempt attempt : sent_) {
      if (!done.insert({IdentityOf(attempt.request), attempt.fingerprint}).second) continue;
      attempt.result = SubmitOne(attempt.request);
      if (std::string problem = checker_.TakeResend(attempt); !problem.empty()) {
        return absl::StrCat("final resend of ", attempt.request.key, ": ", problem);
      }
    }
    if (std::string problem = ResendUnacknowledged(); !problem.empty()) return problem;
    if (std::string problem = checker_.CheckDatabase(*faults_, ReadAttempts(), clock_.Now());
        !problem.empty()) {
      return problem;
    }
    return CheckOrders();
  }

  // One request, through a unit of work (with its order row where the engine runs
  // caller SQL) or Ledger::Submit, by its key: every delivery and resend of a key takes
  // the same path. Batched runs send no units (their keys went in batches).
  SubmitResult SubmitOne(const SubmitRequest& request) {
    if (options_.batch_size > 1 || !SentInUnitOfWork(request.key)) {
      return ledger_->Submit(request);
    }
    units_of_work_ += 1;
    return SubmitInUnitOfWork(*ledger_, request, context_.orders_table, options_.order_row_write);
  }

  // At a quiescent point, after CheckDatabase: each order row belongs to the
  // transaction its key committed, and each key committed through a unit has its row.
  std::string CheckOrders() {
    if (context_.orders_table.empty()) return "";
    absl::StatusOr<std::map<std::string, std::string>> rows =
        Retrying<std::map<std::string, std::string>>(
            ReadAttempts(), [&] { return ReadOrderRows(*ledger_, context_.orders_table); });
    absl::StatusOr<std::vector<KeyRecord>> keys = Retrying<std::vector<KeyRecord>>(
        ReadAttempts(), [&] { return ReadAllKeyRecords(*faults_); });
    if (!rows.ok() || !keys.ok()) {
      return absl::StrCat("reading the order rows and keys: ",
                          (rows.ok() ? keys.status() : rows.status()).ToString());
    }
    checker_.stats().counts["order rows"] = static_cast<int>(rows->size());
    if (options_.batch_size > 1) {
      return CheckOrderRows(*rows, *keys, [](const std::string&) { return false; });
    }
    return CheckOrderRows(*rows, *keys);
  }

  const PropertyContext& context_;
  const Universe& universe_;
  uint64_t seed_;
  ConcurrentOptions options_;
  ManualClock clock_{ClockStart()};
  std::shared_ptr<FaultInjectingEngine> faults_;
  std::unique_ptr<Ledger> ledger_;
  ConcurrencyChecker checker_;
  std::vector<Attempt> sent_;
  std::atomic<int> sessions_killed_ = 0;
  absl::Mutex kill_mutex_;  // the clients' kill requests to the killing thread
  bool kill_requested_ ABSL_GUARDED_BY(kill_mutex_) = false;
  bool clients_done_ ABSL_GUARDED_BY(kill_mutex_) = false;
  std::atomic<int> restarts_ = 0;
  std::atomic<int> holds_swept_ = 0;
  std::atomic<int> sweeps_faulted_ = 0;
  int client_requests_ = 0;                   // requests the clients sent in the phases
  std::atomic<int> client_transactions_ = 0;  // Engine::Begin calls while clients ran
  std::atomic<int> units_of_work_ = 0;        // submits sent in a unit of work, resends too
};

}  // namespace

RunResult RunConcurrent(const PropertyContext& context, const Universe& universe, uint64_t seed,
                        const ConcurrentOptions& options) {
  ConcurrentRun run(context, universe, seed, options);
  return run.Run();
}

}  // namespace ledger::property
