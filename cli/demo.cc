#include "cli/demo.h"

#include <algorithm>
#include <memory>
#include <random>
#include <set>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/notification.h"
#include "base/status.h"

namespace ledger::cli {
namespace {

// A client resends a faulted or in-progress submit with the same key; past this many
// resends the demo gives up (the database is not coming back).
constexpr int kResendsMax = 50;
constexpr int64_t kReadPageSize = 500;

// How often each injection happens, per logical operation.
constexpr double kClientRetryProbability = 0.10;
constexpr double kConcurrentDeliveryProbability = 0.05;
constexpr double kConflictProbability = 0.02;
// How often the bank refuses a payout (the hold is voided); otherwise it is captured.
constexpr double kBankRefusalProbability = 0.3;
// A held payout nobody settles (a crashed payout service) releases itself after this.
constexpr absl::Duration kPayoutHoldTimeout = absl::Hours(1);

// The mix of logical operations, in parts of 100.
enum class Scenario { kTopUp, kSpend, kTransfer, kPayout, kReverse, kDeclinedThenFunded };
constexpr std::pair<Scenario, int> kScenarioWeights[] = {
    {Scenario::kTopUp, 25},  {Scenario::kSpend, 33},   {Scenario::kTransfer, 15},
    {Scenario::kPayout, 10}, {Scenario::kReverse, 10}, {Scenario::kDeclinedThenFunded, 7}};

enum class Delivered { kCommitted, kDuplicate, kRejected, kConflict };

struct Delivery {
  Delivered result = Delivered::kRejected;
  std::string transaction_id;                                  // committed and duplicate
  RejectionReason reason = RejectionReason::kAccountNotFound;  // rejected
};

std::string_view DeliveredName(Delivered delivered) {
  switch (delivered) {
    case Delivered::kCommitted: return "committed";
    case Delivered::kDuplicate: return "duplicate";
    case Delivered::kRejected: return "rejected";
    case Delivered::kConflict: return "conflict";
  }
  return "?";
}

// Sends one request until it gets an answer about the operation itself: faulted and
// in-progress attempts are resent under the same key, as the contract tells clients.
absl::StatusOr<Delivery> Deliver(Ledger& ledger, const SubmitRequest& request,
                                 SubmitCounts& counts) {
  for (int attempt = 0; attempt <= kResendsMax; ++attempt) {
    absl::StatusOr<Outcome> outcome = ledger.Submit(request);
    if (!outcome.ok()) {
      if (IsConflict(outcome.status())) {
        counts.conflict += 1;
        return Delivery{Delivered::kConflict};
      }
      if (!IsInProgress(outcome.status())) return Annotate(outcome.status(), request.key);
      counts.in_progress += 1;
      continue;
    }
    switch (outcome->kind) {
      case OutcomeKind::kCommitted:
        counts.committed += 1;
        return Delivery{Delivered::kCommitted, outcome->transaction.id};
      case OutcomeKind::kDuplicate:
        counts.duplicate += 1;
        return Delivery{Delivered::kDuplicate, outcome->transaction.id};
      case OutcomeKind::kRejected:
        counts.rejected += 1;
        return Delivery{Delivered::kRejected, "", outcome->reason};
      case OutcomeKind::kFaulted: counts.faulted += 1; break;
    }
  }
  return absl::UnavailableError(
      absl::StrCat(request.key, ": still faulted after ", kResendsMax, " resends"));
}

// One client thread: its own wallets, its own creators' payouts, its own keys.
class DemoWorker {
 public:
  DemoWorker(Ledger& ledger, const DemoOptions& options, int thread_index)
      : ledger_(ledger),
        seed_(options.seed),
        thread_index_(thread_index),
        random_(options.seed * 1'000'003 + static_cast<uint64_t>(thread_index)) {
    for (int i = thread_index; i < kDemoWallets; i += options.threads) {
      wallets_.push_back(DemoWalletId(i));
    }
    for (int i = thread_index; i < kDemoCreators; i += options.threads) {
      creators_.push_back(DemoCreatorId(i));
    }
  }

  absl::Status Run(int64_t keys_quota) {
    while (keys_used_ < keys_quota) {
      LEDGER_RETURN_IF_ERROR(Step(keys_quota - keys_used_));
    }
    return absl::OkStatus();
  }

  DemoRun& run() { return run_; }

 private:
  absl::Status Step(int64_t keys_left) {
    switch (PickScenario()) {
      case Scenario::kSpend: return Spend();
      case Scenario::kTransfer: return Transfer();
      case Scenario::kPayout: return Payout(keys_left);
      case Scenario::kReverse: return Reverse();
      case Scenario::kDeclinedThenFunded:
        if (keys_left >= 2) return DeclinedThenFunded();  // it needs two keys
        return TopUp(PickOne(wallets_));
      case Scenario::kTopUp: break;
    }
    return TopUp(PickOne(wallets_));
  }

  Scenario PickScenario() {
    int total = 0;
    for (const auto& [scenario, weight] : kScenarioWeights) total += weight;
    int pick = static_cast<int>(Uniform(0, total - 1));
    for (const auto& [scenario, weight] : kScenarioWeights) {
      if (pick < weight) return scenario;
      pick -= weight;
    }
    return Scenario::kTopUp;
  }

  absl::Status TopUp(const std::string& wallet) {
    Operation top_up = Operation::TopUp(kDemoIssuance, wallet, kDemoAsset, Uniform(500, 20'000));
    LEDGER_ASSIGN_OR_RETURN(Delivery delivery, SubmitNew(std::move(top_up)));
    if (delivery.result == Delivered::kCommitted) reversible_.push_back(delivery.transaction_id);
    return absl::OkStatus();
  }

  // A wallet pays a creator (any thread's) with a 10% platform fee.
  absl::Status Spend() {
    const std::string& wallet = PickOne(wallets_);
    LEDGER_ASSIGN_OR_RETURN(Amount balance, AvailableOf(wallet));
    if (balance < 100) return TopUp(wallet);
    Amount amount = Uniform(100, std::min<Amount>(balance, 5'000));
    Operation spend = Operation::Spend(wallet, AnyCreator(), kDemoAsset, amount,
                                       Fee{kDemoPlatformFees, amount / 10});
    return SubmitNew(std::move(spend)).status();
  }

  absl::Status Transfer() {
    if (wallets_.size() < 2) return TopUp(PickOne(wallets_));
    size_t from = UniformIndex(wallets_.size());
    size_t to = (from + 1 + UniformIndex(wallets_.size() - 1)) % wallets_.size();  // not `from`
    LEDGER_ASSIGN_OR_RETURN(Amount balance, AvailableOf(wallets_[from]));
    if (balance < 100) return TopUp(wallets_[from]);
    Operation transfer = Operation::Transfer(wallets_[from], wallets_[to], kDemoAsset,
                                             Uniform(100, std::min<Amount>(balance, 3'000)));
    LEDGER_ASSIGN_OR_RETURN(Delivery delivery, SubmitNew(std::move(transfer)));
    if (delivery.result == Delivered::kCommitted) reversible_.push_back(delivery.transaction_id);
    return absl::OkStatus();
  }

  // Half of one of this thread's creators' available balance is paid out through a hold
  // on the creator for the payout clearing account: the bank confirms (capture) or
  // refuses (void). With one key left, a direct payout instead.
  absl::Status Payout(int64_t keys_left) {
    if (creators_.empty()) return TopUp(PickOne(wallets_));
    const std::string& creator = PickOne(creators_);
    LEDGER_ASSIGN_OR_RETURN(Amount available, AvailableOf(creator));
    if (available < 200) return TopUp(PickOne(wallets_));
    if (keys_left < 2) {
      return SubmitNew(Operation::Payout(creator, kDemoPayoutClearing, kDemoAsset, available / 2))
          .status();
    }
    Operation hold = Operation::Hold(creator, kDemoPayoutClearing, kDemoAsset, available / 2);
    hold.timeout = kPayoutHoldTimeout;
    SubmitRequest hold_request = NewRequest(std::move(hold));
    LEDGER_ASSIGN_OR_RETURN(Delivery held, SubmitNewRequest(hold_request));
    if (held.result != Delivered::kCommitted) {
      // The creator's payouts are this thread's alone, so the hold cannot be declined.
      Problem(hold_request.key, "a payout hold within the available balance was not placed",
              held);
      return absl::OkStatus();
    }
    bool bank_refused = Chance(kBankRefusalProbability);
    SubmitRequest settle = NewRequest(bank_refused ? Operation::Void(held.transaction_id)
                                                   : Operation::Capture(held.transaction_id));
    LEDGER_ASSIGN_OR_RETURN(Delivery settled, SubmitNewRequest(settle));
    if (settled.result != Delivered::kCommitted) {
      Problem(settle.key,
              bank_refused ? "voiding a pending payout hold failed"
                           : "capturing a pending payout hold failed",
              settled);
      return absl::OkStatus();
    }
    (bank_refused ? run_.scenarios.payouts_voided : run_.scenarios.payouts_captured) += 1;
    return absl::OkStatus();
  }

  // Reverses one of this thread's top-ups or transfers; rejected if the money was spent.
  absl::Status Reverse() {
    if (reversible_.empty()) return TopUp(PickOne(wallets_));
    size_t index = UniformIndex(reversible_.size());
    std::string target = reversible_[index];
    reversible_.erase(reversible_.begin() + static_cast<std::ptrdiff_t>(index));
    LEDGER_ASSIGN_OR_RETURN(Delivery delivery, SubmitNew(Operation::Reverse(target)));
    if (delivery.result == Delivered::kCommitted || delivery.result == Delivered::kDuplicate) {
      run_.scenarios.reversals_committed += 1;
    } else {
      run_.scenarios.reversals_rejected += 1;
    }
    return absl::OkStatus();
  }

  // A spend beyond the wallet's balance is declined; the wallet is funded; the SAME key
  // is sent again and commits, because a rejection leaves the key unused.
  absl::Status DeclinedThenFunded() {
    const std::string& wallet = PickOne(wallets_);
    LEDGER_ASSIGN_OR_RETURN(Amount balance, AvailableOf(wallet));
    Amount amount = balance + Uniform(100, 5'000);
    SubmitRequest spend = NewRequest(Operation::Spend(wallet, AnyCreator(), kDemoAsset, amount,
                                                      Fee{kDemoPlatformFees, amount / 10}));
    LEDGER_ASSIGN_OR_RETURN(Delivery declined, Deliver(ledger_, spend, run_.submits));
    Observe(spend.key, declined);
    if (declined.reason != RejectionReason::kInsufficientFunds ||
        declined.result != Delivered::kRejected) {
      Problem(spend.key, "a spend beyond the balance was not declined", declined);
      return absl::OkStatus();
    }
    Operation funding =
        Operation::TopUp(kDemoIssuance, wallet, kDemoAsset, amount - balance + Uniform(0, 1'000));
    LEDGER_RETURN_IF_ERROR(SubmitNew(std::move(funding)).status());
    LEDGER_ASSIGN_OR_RETURN(Delivery retried, Deliver(ledger_, spend, run_.submits));
    Observe(spend.key, retried);
    if (retried.result != Delivered::kCommitted) {
      Problem(spend.key, "the declined key did not commit after funding", retried);
      return absl::OkStatus();
    }
    run_.scenarios.declined_then_committed += 1;
    return InjectAfterCommit(spend, retried);
  }

  // Sends a new logical operation, sometimes from two threads at once, then sometimes
  // retries it or reuses its key with another payload.
  absl::StatusOr<Delivery> SubmitNew(Operation operation) {
    return SubmitNewRequest(NewRequest(std::move(operation)));
  }

  absl::StatusOr<Delivery> SubmitNewRequest(const SubmitRequest& request) {
    Delivery first;
    if (Chance(kConcurrentDeliveryProbability)) {
      LEDGER_ASSIGN_OR_RETURN(first, DeliverConcurrently(request));
    } else {
      LEDGER_ASSIGN_OR_RETURN(first, Deliver(ledger_, request, run_.submits));
      Observe(request.key, first);
    }
    if (first.result == Delivered::kCommitted || first.result == Delivered::kDuplicate) {
      LEDGER_RETURN_IF_ERROR(InjectAfterCommit(request, first));
    }
    return first;
  }

  // Two deliveries of the same request race; exactly one may commit, the other replays.
  absl::StatusOr<Delivery> DeliverConcurrently(const SubmitRequest& request) {
    SubmitCounts partner_counts;
    absl::StatusOr<Delivery> partner_delivery = absl::UnknownError("not delivered");
    absl::Notification start;
    std::thread partner([&] {
      start.WaitForNotification();
      partner_delivery = Deliver(ledger_, request, partner_counts);
    });
    start.Notify();
    absl::StatusOr<Delivery> own_delivery = Deliver(ledger_, request, run_.submits);
    partner.join();
    run_.submits.Add(partner_counts);
    LEDGER_RETURN_IF_ERROR(own_delivery.status());
    LEDGER_RETURN_IF_ERROR(partner_delivery.status());
    Observe(request.key, *own_delivery);
    Observe(request.key, *partner_delivery);
    const Delivery& own = *own_delivery;
    const Delivery& other = *partner_delivery;
    if (own.result == Delivered::kRejected && other.result == Delivered::kRejected) return own;
    bool one_commit_one_replay =
        (own.result == Delivered::kCommitted && other.result == Delivered::kDuplicate) ||
        (own.result == Delivered::kDuplicate && other.result == Delivered::kCommitted);
    if (!one_commit_one_replay) {
      Problem(request.key, "concurrent deliveries: expected one commit and one duplicate", other);
    } else {
      run_.scenarios.concurrent_deliveries += 1;
    }
    return own.result == Delivered::kCommitted ? own : other;
  }

  absl::Status InjectAfterCommit(const SubmitRequest& request, const Delivery& committed) {
    if (Chance(kClientRetryProbability)) {
      LEDGER_ASSIGN_OR_RETURN(Delivery retry, Deliver(ledger_, request, run_.submits));
      Observe(request.key, retry);
      if (retry.result != Delivered::kDuplicate ||
          retry.transaction_id != committed.transaction_id) {
        Problem(request.key, "a retry after commit did not replay it", retry);
      } else {
        run_.scenarios.client_retries += 1;
      }
    }
    if (Chance(kConflictProbability)) {
      SubmitRequest tampered = request;
      tampered.operation.metadata["tampered"] = true;  // part of the fingerprinted payload
      LEDGER_ASSIGN_OR_RETURN(Delivery conflict, Deliver(ledger_, tampered, run_.submits));
      Observe(request.key, conflict);
      if (conflict.result != Delivered::kConflict) {
        Problem(request.key, "another payload under a used key was accepted", conflict);
      } else {
        run_.scenarios.conflicts_refused += 1;
      }
    }
    return absl::OkStatus();
  }

  // What the clients saw per key; CheckExactlyOnce compares it with the database.
  void Observe(const std::string& key, const Delivery& delivery) {
    if (delivery.result != Delivered::kCommitted && delivery.result != Delivered::kDuplicate)
      return;
    KeyObservation& seen = run_.keys[key];
    if (delivery.result == Delivered::kCommitted) seen.commits += 1;
    if (seen.transaction_id.empty()) {
      seen.transaction_id = delivery.transaction_id;
    } else if (seen.transaction_id != delivery.transaction_id) {
      seen.problems.push_back(absl::StrCat("returned transaction ", delivery.transaction_id,
                                           " after ", seen.transaction_id));
    }
  }

  // An expectation that failed is recorded against its key, not returned as an error:
  // the run goes on and the summary lists it as a violation.
  void Problem(const std::string& key, std::string_view what, const Delivery& got) {
    run_.keys[key].problems.push_back(
        absl::StrCat(View(what), " (got ", View(DeliveredName(got.result)), ")"));
  }

  SubmitRequest NewRequest(Operation operation) {
    SubmitRequest request;
    request.key = absl::StrCat("demo-", seed_, "-t", thread_index_, "-", keys_used_);
    request.scope = Scope{"demo", absl::StrCat("client-", thread_index_)};
    request.operation = std::move(operation);
    keys_used_ += 1;
    return request;
  }

  // What the account may still spend: its balance less what pending holds reserve.
  absl::StatusOr<Amount> AvailableOf(const std::string& account_id) {
    LEDGER_ASSIGN_OR_RETURN(Account account, ledger_.GetAccount(account_id));
    return account.Available();
  }

  Amount Uniform(Amount low, Amount high) {
    return std::uniform_int_distribution<Amount>(low, high)(random_);
  }
  bool Chance(double probability) { return std::bernoulli_distribution(probability)(random_); }
  size_t UniformIndex(size_t size) {
    return static_cast<size_t>(Uniform(0, static_cast<Amount>(size) - 1));
  }
  const std::string& PickOne(const std::vector<std::string>& ids) {
    return ids[UniformIndex(ids.size())];
  }
  // Any thread's creator: credits cross threads, only payouts (debits) are owned.
  std::string AnyCreator() { return DemoCreatorId(static_cast<int>(UniformIndex(kDemoCreators))); }

  Ledger& ledger_;
  uint64_t seed_;
  int thread_index_;
  std::mt19937_64 random_;
  std::vector<std::string> wallets_;
  std::vector<std::string> creators_;
  std::vector<std::string> reversible_;  // this thread's committed top-ups and transfers
  int64_t keys_used_ = 0;
  DemoRun run_;
};

void AddObservations(std::vector<std::string>& violations, const DemoRun& run,
                     ExactlyOnceReport& report) {
  for (const auto& [key, seen] : run.keys) {
    if (seen.commits >= 1) report.keys_committed += 1;
    if (seen.commits > 1)
      violations.push_back(absl::StrCat(key, ": committed ", seen.commits, " times"));
    if (seen.commits == 0) {
      violations.push_back(
          absl::StrCat(key, ": replayed ", seen.transaction_id, ", which no client saw commit"));
    }
    for (const std::string& problem : seen.problems)
      violations.push_back(absl::StrCat(key, ": ", problem));
  }
}

absl::Status CheckKeyRecords(Engine& engine, const DemoRun& run, ExactlyOnceReport& report) {
  std::optional<KeyIdentity> after;
  while (true) {
    LEDGER_ASSIGN_OR_RETURN(std::vector<KeyRecord> page,
                            engine.ListKeyRecords(after, kReadPageSize));
    for (const KeyRecord& record : page) {
      report.key_records += 1;
      auto seen = run.keys.find(record.identity.key);
      if (seen == run.keys.end() || seen->second.commits == 0) {
        report.violations.push_back(absl::StrCat("key record ", record.identity.Encoded(),
                                                 " was never committed by a client"));
      } else if (seen->second.transaction_id != record.transaction_id) {
        report.violations.push_back(absl::StrCat("key ", record.identity.key, " records ",
                                                 record.transaction_id, ", its client saw ",
                                                 seen->second.transaction_id));
      }
    }
    if (static_cast<int64_t>(page.size()) < kReadPageSize) return absl::OkStatus();
    after = page.back().identity;
  }
}

absl::StatusOr<std::set<std::string>> StoredTransactionIds(Engine& engine) {
  std::set<std::string> ids;
  std::string after;
  while (true) {
    LEDGER_ASSIGN_OR_RETURN(std::vector<Transaction> page,
                            engine.ListTransactions(after, kReadPageSize));
    for (const Transaction& transaction : page) ids.insert(transaction.id);
    if (static_cast<int64_t>(page.size()) < kReadPageSize) return ids;
    after = page.back().id;
  }
}

}  // namespace

void SubmitCounts::Add(const SubmitCounts& other) {
  committed += other.committed;
  duplicate += other.duplicate;
  rejected += other.rejected;
  conflict += other.conflict;
  in_progress += other.in_progress;
  faulted += other.faulted;
}

int64_t SubmitCounts::total() const {
  return committed + duplicate + rejected + conflict + in_progress + faulted;
}

void ScenarioCounts::Add(const ScenarioCounts& other) {
  client_retries += other.client_retries;
  concurrent_deliveries += other.concurrent_deliveries;
  declined_then_committed += other.declined_then_committed;
  conflicts_refused += other.conflicts_refused;
  reversals_committed += other.reversals_committed;
  reversals_rejected += other.reversals_rejected;
  payouts_captured += other.payouts_captured;
  payouts_voided += other.payouts_voided;
}

std::string DemoWalletId(int index) { return absl::StrFormat("user-%03d", index); }
std::string DemoCreatorId(int index) { return absl::StrFormat("creator-%02d", index); }

absl::Status BuildDemoEconomy(Ledger& ledger) {
  LEDGER_RETURN_IF_ERROR(ledger.DefineAsset({kDemoAsset, kDemoAssetScale}));
  std::vector<AccountSpec> specs = {
      {.id = kDemoIssuance, .asset = kDemoAsset, .allow_negative = true},
      {.id = kDemoPlatformFees, .asset = kDemoAsset},
      {.id = kDemoPayoutClearing, .asset = kDemoAsset}};
  for (int i = 0; i < kDemoCreators; ++i)
    specs.push_back({.id = DemoCreatorId(i), .asset = kDemoAsset});
  for (int i = 0; i < kDemoWallets; ++i)
    specs.push_back({.id = DemoWalletId(i), .asset = kDemoAsset});
  for (const AccountSpec& spec : specs) {
    LEDGER_RETURN_IF_ERROR(ledger.OpenAccount(spec).status());
  }
  return absl::OkStatus();
}

absl::StatusOr<DemoRun> RunDemoWorkload(Ledger& ledger, const DemoOptions& options) {
  if (options.threads < 1 || options.threads > kDemoThreadsMax || options.operations < 1) {
    return absl::InvalidArgumentError("demo needs 1..16 threads and at least one operation");
  }
  std::vector<std::unique_ptr<DemoWorker>> workers;
  for (int t = 0; t < options.threads; ++t) {
    workers.push_back(std::make_unique<DemoWorker>(ledger, options, t));
  }
  std::vector<absl::Status> results(static_cast<size_t>(options.threads));
  absl::Time start = absl::Now();
  {
    std::vector<std::thread> threads;
    for (int t = 0; t < options.threads; ++t) {
      int64_t quota =
          options.operations / options.threads + (t < options.operations % options.threads ? 1 : 0);
      threads.emplace_back([&workers, &results, t, quota] {
        results[static_cast<size_t>(t)] = workers[static_cast<size_t>(t)]->Run(quota);
      });
    }
    for (std::thread& thread : threads) thread.join();
  }
  DemoRun run;
  run.elapsed = absl::Now() - start;
  for (size_t t = 0; t < workers.size(); ++t) {
    LEDGER_RETURN_IF_ERROR(results[t]);
    DemoRun& part = workers[t]->run();
    run.submits.Add(part.submits);
    run.scenarios.Add(part.scenarios);
    run.keys.merge(part.keys);  // keys carry the thread index: never shared
  }
  return run;
}

absl::StatusOr<ExactlyOnceReport> CheckExactlyOnce(Engine& engine, const DemoRun& run) {
  ExactlyOnceReport report;
  AddObservations(report.violations, run, report);
  LEDGER_RETURN_IF_ERROR(CheckKeyRecords(engine, run, report));
  LEDGER_ASSIGN_OR_RETURN(std::set<std::string> stored, StoredTransactionIds(engine));
  report.transactions = static_cast<int64_t>(stored.size());
  std::set<std::string> committed_ids;
  for (const auto& [key, seen] : run.keys) {
    if (seen.commits == 0) continue;
    committed_ids.insert(seen.transaction_id);
    if (stored.count(seen.transaction_id) == 0) {
      report.violations.push_back(
          absl::StrCat(key, ": its transaction ", seen.transaction_id, " is not stored"));
    }
  }
  if (static_cast<int64_t>(committed_ids.size()) != report.keys_committed) {
    report.violations.push_back("two committed keys returned the same transaction");
  }
  if (report.transactions != report.keys_committed || report.key_records != report.keys_committed) {
    report.violations.push_back(absl::StrCat(
        "the database holds ", report.transactions, " transactions and ", report.key_records,
        " key records for ", report.keys_committed, " committed keys"));
  }
  return report;
}

}  // namespace ledger::cli
