#include "tests/cluster/cluster_workload.h"

#include <cstdint>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "base/status.h"
#include "gtest/gtest.h"

namespace ledger::testing {
namespace {

// Storm keys are "<prefix>-storm-<n>", a client's own "<prefix>-c<client>-<n>".
bool IsStormKey(const std::string& prefix, const std::string& key) {
  return key.rfind(prefix + "-storm-", 0) == 0;
}

}  // namespace

std::string EndOf(const absl::StatusOr<Outcome>& outcome) {
  if (!outcome.ok()) {
    if (IsInProgress(outcome.status())) return "in progress";
    if (IsInDoubt(outcome.status())) return "in doubt";
    if (absl::IsUnavailable(outcome.status())) return "unavailable";
    return "other";
  }
  switch (outcome->kind) {
    case OutcomeKind::kCommitted:
      return "committed";
    case OutcomeKind::kDuplicate:
      return "duplicate";
    case OutcomeKind::kRejected:
      return "rejected";
    case OutcomeKind::kFaulted:
      if (outcome->in_doubt || IsInDoubt(outcome->fault)) return "in doubt";
      if (IsInProgress(outcome->fault)) return "in progress";
      // A retryable conflict that outlived the ledger's attempts, or a fault of the
      // connection: both leave the key unused, so the caller resends it later.
      if (absl::IsUnavailable(outcome->fault) || IsRetryable(outcome->fault) ||
          absl::IsDeadlineExceeded(outcome->fault)) {
        return "unavailable";
      }
      return "other";
  }
  return "other";
}

absl::Status ClusterWorkload::Prepare(Ledger& ledger) {
  absl::Status asset = ledger.DefineAsset({kClusterAsset, 0});
  if (!asset.ok() && !absl::IsAlreadyExists(asset)) return asset;
  std::vector<AccountSpec> specs = {{.id = AccountId("issuance"), .asset = kClusterAsset,
                                     .allow_negative = true},
                                    {.id = AccountId("storm"), .asset = kClusterAsset}};
  for (int client = 0; client < options_.clients; ++client) {
    specs.push_back({.id = AccountId(absl::StrCat("u", client)), .asset = kClusterAsset});
  }
  for (const AccountSpec& spec : specs) {
    absl::StatusOr<Account> opened = ledger.OpenAccount(spec);
    if (!opened.ok() && !absl::IsAlreadyExists(opened.status())) return opened.status();
  }
  return absl::OkStatus();
}

std::string ClusterWorkload::CreditedAccountOf(const std::string& key) const {
  if (IsStormKey(options_.prefix, key)) return AccountId("storm");
  // "<prefix>-c<client>-<n>": the client's own account.
  const size_t begin = options_.prefix.size() + 2;
  return AccountId(absl::StrCat("u", key.substr(begin, key.find('-', begin) - begin)));
}

SubmitRequest ClusterWorkload::RequestFor(const std::string& key) const {
  SubmitRequest request;
  request.key = key;
  request.operation = Operation::TopUp(AccountId("issuance"), CreditedAccountOf(key), kClusterAsset, 1);
  return request;
}

void ClusterWorkload::RunClient(int client) {
  Ledger& ledger = ledger_of_(client);
  for (int n = 0; !stop_.load(); ++n) {
    const std::string key = n % options_.storm_every == options_.storm_every - 1
                                ? absl::StrCat(options_.prefix, "-storm-", n / options_.storm_every)
                                : absl::StrCat(options_.prefix, "-c", client, "-", n);
    ClusterCall call{.client = client, .key = key, .outcome = absl::UnknownError("not run"),
                     .started = absl::Now()};
    call.outcome = ledger.Submit(RequestFor(key));
    call.elapsed = absl::Now() - call.started;
    const bool failed = !call.outcome.ok() || !call.outcome->ok();
    {
      absl::MutexLock lock(&mutex_);
      calls_.push_back(std::move(call));
    }
    // A failing call is not retried in a tight loop: the node may be gone for seconds.
    absl::SleepFor(failed ? absl::Milliseconds(100) : options_.pause);
  }
}

void ClusterWorkload::Start() {
  for (int client = 0; client < options_.clients; ++client) {
    threads_.emplace_back([this, client] { RunClient(client); });
  }
}

void ClusterWorkload::Stop() {
  stop_ = true;
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
}

std::vector<ClusterCall> ClusterWorkload::Calls() const {
  absl::MutexLock lock(&mutex_);
  return calls_;
}

std::map<std::string, int> ClusterWorkload::Ends() const {
  std::map<std::string, int> ends;
  for (const ClusterCall& call : Calls()) ++ends[EndOf(call.outcome)];
  return ends;
}

absl::Time ClusterWorkload::FirstCommitStartedAfter(absl::Time after) const {
  absl::Time first = absl::InfiniteFuture();
  for (const ClusterCall& call : Calls()) {
    if (call.started > after && call.outcome.ok() && call.outcome->kind == OutcomeKind::kCommitted) {
      first = std::min(first, call.started + call.elapsed);
    }
  }
  return first;
}

std::string ClusterWorkload::Timeline(
    absl::Time from, absl::Duration bucket,
    const std::function<std::string(int client)>& client_name) const {
  struct Bucket {
    std::map<std::string, std::pair<int, std::set<int>>> ends;  // end -> count, clients
    const ClusterCall* longest = nullptr;
  };
  auto name = [&](int client) {
    return client_name ? client_name(client) : absl::StrCat("c", client);
  };
  const std::vector<ClusterCall> calls = Calls();
  std::map<int64_t, Bucket> buckets;
  int64_t last = -1;
  for (const ClusterCall& call : calls) {
    const absl::Time ended = call.started + call.elapsed;
    if (ended < from) continue;
    absl::Duration remainder;
    const int64_t index = absl::IDivDuration(ended - from, bucket, &remainder);
    Bucket& at = buckets[index];
    auto& [count, clients] = at.ends[EndOf(call.outcome)];
    count += 1;
    clients.insert(call.client);
    if (at.longest == nullptr || call.elapsed > at.longest->elapsed) at.longest = &call;
    last = std::max(last, index);
  }
  std::string timeline;
  for (int64_t index = 0; index <= last; ++index) {
    absl::StrAppend(&timeline, "  +", absl::FormatDuration(index * bucket));
    const Bucket& at = buckets[index];
    if (at.ends.empty()) absl::StrAppend(&timeline, " nothing ended");
    for (const auto& [end, count_and_clients] : at.ends) {
      std::vector<std::string> clients;
      for (int client : count_and_clients.second) clients.push_back(name(client));
      absl::StrAppend(&timeline, " ", end, " ", count_and_clients.first, " [",
                      absl::StrJoin(clients, " "), "]");
    }
    if (at.longest != nullptr) {
      absl::StrAppend(&timeline, " longest ",
                      absl::FormatDuration(absl::Trunc(at.longest->elapsed, absl::Milliseconds(100))),
                      " (", name(at.longest->client), " ", EndOf(at.longest->outcome));
      const ClusterCall& call = *at.longest;
      if (!call.outcome.ok() || !call.outcome->ok()) {
        const absl::Status& fault = call.outcome.ok() ? call.outcome->fault : call.outcome.status();
        absl::StrAppend(&timeline, ": ", fault.message().substr(0, 160));
      }
      timeline += ")";
    }
    timeline += "\n";
  }
  return timeline;
}

void ClusterWorkload::ExpectEveryCallEndedWithin(absl::Duration bound) const {
  for (const ClusterCall& call : Calls()) {
    EXPECT_LE(call.elapsed, bound) << call.key << " ended " << EndOf(call.outcome) << " after "
                                   << call.elapsed;
    EXPECT_NE(EndOf(call.outcome), "other")
        << call.key << ": " << (call.outcome.ok() ? call.outcome->fault : call.outcome.status());
  }
}

void ClusterWorkload::ResendEveryKey(Ledger& ledger, absl::Duration deadline) const {
  std::map<std::string, std::string> acknowledged;  // key -> transaction id
  std::set<std::string> keys;
  for (const ClusterCall& call : Calls()) {
    keys.insert(call.key);
    if (call.outcome.ok() && call.outcome->ok()) {
      auto [it, inserted] = acknowledged.emplace(call.key, call.outcome->transaction.id);
      EXPECT_EQ(it->second, call.outcome->transaction.id)
          << call.key << " was acknowledged as two transactions";
    }
  }
  // Resent by kResendThreads callers at once: thousands of keys one after the other
  // would take most of a minute.
  constexpr int kResendThreads = 8;
  const std::vector<std::string> all(keys.begin(), keys.end());
  const absl::Time give_up = absl::Now() + deadline;
  absl::Mutex failures_mutex;
  std::vector<std::string> failures;
  std::vector<std::thread> threads;
  for (int thread = 0; thread < kResendThreads; ++thread) {
    threads.emplace_back([&, thread] {
      for (size_t i = thread; i < all.size(); i += kResendThreads) {
        const std::string& key = all[i];
        absl::StatusOr<Outcome> outcome;
        do {
          outcome = ledger.Submit(RequestFor(key));
          if (outcome.ok() && outcome->ok()) break;
          absl::SleepFor(absl::Milliseconds(200));
        } while (absl::Now() < give_up);
        std::string failure;
        if (!outcome.ok() || !outcome->ok()) {
          failure = absl::StrCat(key, " resent: ", EndOf(outcome), " ",
                                 (outcome.ok() ? outcome->fault : outcome.status()).ToString());
        } else if (auto it = acknowledged.find(key); it != acknowledged.end() &&
                   (outcome->kind != OutcomeKind::kDuplicate || outcome->transaction.id != it->second)) {
          failure = absl::StrCat(key, " was acknowledged as ", it->second, ", then resent: ",
                                 EndOf(outcome), " ", outcome->transaction.id);
        }
        if (!failure.empty()) {
          absl::MutexLock lock(&failures_mutex);
          failures.push_back(failure);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << all.size() << " keys:\n"
                                << absl::StrJoin(failures.begin(),
                                                 failures.begin() + std::min<size_t>(failures.size(), 20),
                                                 "\n");
}

void ClusterWorkload::ExpectExactlyOnce(Ledger& ledger) const {
  std::map<std::string, std::set<std::string>> keys_of_account;
  for (const ClusterCall& call : Calls()) {
    keys_of_account[CreditedAccountOf(call.key)].insert(call.key);
  }
  for (const auto& [account, keys] : keys_of_account) {
    absl::StatusOr<Account> read = ledger.GetAccount(account);
    ASSERT_TRUE(read.ok()) << account << ": " << read.status();
    EXPECT_EQ(read->balance, static_cast<Amount>(keys.size()))
        << account << " should hold one unit per key sent to it, each committed exactly once";
  }
  for (const ClusterCall& call : Calls()) {
    if (!call.outcome.ok() || !call.outcome->ok()) continue;
    absl::StatusOr<Transaction> found = ledger.GetTransaction(call.outcome->transaction.id);
    EXPECT_TRUE(found.ok()) << call.key << " was acknowledged as " << call.outcome->transaction.id
                            << " but is not there: " << found.status();
  }
}

}  // namespace ledger::testing
