#include "bench/load/load_setup.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "bench/load/workload.h"
#include "base/status.h"
#include "ledger/internal/testing_hooks.h"
#include "ledger/json.h"

namespace ledger::load {
namespace {

constexpr int64_t kListPageSize = 1'000;
constexpr size_t kFundingLegsPerPost = kPostingsPerTransactionMax - 1;  // + the issuance leg

// The user accounts already in the database and their balances.
absl::StatusOr<std::map<std::string, Amount>> ExistingUserBalances(Engine& engine) {
  std::map<std::string, Amount> balances;
  std::string after;
  while (true) {
    LEDGER_ASSIGN_OR_RETURN(std::vector<Account> page, engine.ListAccounts(after, kListPageSize));
    for (const Account& account : page) {
      if (account.id.rfind("bench-user-", 0) == 0) balances[account.id] = account.balance;
    }
    if (static_cast<int64_t>(page.size()) < kListPageSize) return balances;
    after = page.back().id;
  }
}

absl::Status OpenSystemAccount(Ledger& ledger, const std::string& id) {
  absl::StatusOr<Account> opened =
      ledger.OpenAccount({.id = id, .asset = kLoadAsset, .allow_negative = true});
  if (opened.ok() || absl::IsAlreadyExists(opened.status())) return absl::OkStatus();
  return opened.status();
}

// Inserts the given users from `threads` threads; returns the first failure.
absl::Status OpenUsers(Ledger& ledger, const std::vector<std::string>& ids, int threads) {
  std::atomic<size_t> next{0};
  absl::Mutex mutex;
  absl::Status failure;
  auto open_some = [&] {
    for (size_t index = next++; index < ids.size(); index = next++) {
      absl::StatusOr<Account> opened = ledger.OpenAccount({.id = ids[index], .asset = kLoadAsset});
      if (opened.ok()) continue;
      absl::MutexLock lock(&mutex);
      if (failure.ok()) failure = Annotate(opened.status(), absl::StrCat("opening ", ids[index]));
      next = ids.size();  // stop every worker
    }
  };
  std::vector<std::thread> workers;
  for (int worker = 0; worker < std::max(1, threads); ++worker) workers.emplace_back(open_some);
  for (std::thread& worker : workers) worker.join();
  return failure;
}

// Tops the given users up to kUserFunding, 63 of them per balanced post.
absl::Status FundUsers(Ledger& ledger, const std::vector<std::pair<std::string, Amount>>& needs,
                       const std::string& key_prefix) {
  for (size_t first = 0; first < needs.size(); first += kFundingLegsPerPost) {
    std::vector<Posting> postings;
    Amount total = 0;
    for (size_t index = first; index < std::min(needs.size(), first + kFundingLegsPerPost); ++index) {
      postings.push_back({needs[index].first, kLoadAsset, needs[index].second});
      total += needs[index].second;
    }
    postings.push_back({kIssuanceAccountId, kLoadAsset, -total});
    absl::StatusOr<Outcome> outcome = ledger.Submit(
        {.key = absl::StrCat(key_prefix, "-fund-", first), .scope = LoadScope(),
         .operation = Operation::Post(std::move(postings))});
    if (!outcome.ok()) return Annotate(outcome.status(), "funding users");
    if (outcome->kind != OutcomeKind::kCommitted) {
      return absl::InternalError(absl::StrCat("funding users: ", OutcomeToJson(*outcome).dump()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

nlohmann::json SetupResult::ToJson() const {
  return {{"accounts_opened", accounts_opened},
          {"accounts_reused", accounts_reused},
          {"accounts_funded", accounts_funded},
          {"seconds", seconds}};
}

absl::StatusOr<SetupResult> PrepareDataSet(Ledger& ledger, const SetupOptions& options) {
  auto started = std::chrono::steady_clock::now();
  LEDGER_RETURN_IF_ERROR(ledger.DefineAsset({kLoadAsset, kLoadAssetScale}));
  LEDGER_RETURN_IF_ERROR(OpenSystemAccount(ledger, kPlatformAccountId));
  LEDGER_RETURN_IF_ERROR(OpenSystemAccount(ledger, kIssuanceAccountId));
  LEDGER_ASSIGN_OR_RETURN(auto existing, ExistingUserBalances(ledger::internal::LedgerTestingHooks::EngineOf(ledger)));
  if (!existing.empty() && !options.reuse) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the database already holds ", existing.size(),
        " bench-user accounts: pass --reuse to keep them, or use a fresh database"));
  }
  SetupResult result;
  std::vector<std::string> missing;
  std::vector<std::pair<std::string, Amount>> needs;
  for (int index = 0; index < options.accounts; ++index) {
    std::string id = UserAccountId(index);
    auto found = existing.find(id);
    Amount balance = found == existing.end() ? 0 : found->second;
    if (found == existing.end()) missing.push_back(id);
    if (balance < kUserFunding / 2) needs.emplace_back(id, kUserFunding - balance);
  }
  result.accounts_reused = options.accounts - static_cast<int64_t>(missing.size());
  LEDGER_RETURN_IF_ERROR(OpenUsers(ledger, missing, options.threads));
  result.accounts_opened = static_cast<int64_t>(missing.size());
  LEDGER_RETURN_IF_ERROR(FundUsers(ledger, needs, options.key_prefix));
  result.accounts_funded = static_cast<int64_t>(needs.size());
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace ledger::load
