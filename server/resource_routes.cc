// Assets, accounts, transactions and events: the JSON shapes are ledger/json.h's, the one
// vocabulary the CLI prints too.
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "base/status.h"
#include "ledger/amount.h"
#include "ledger/json.h"
#include "ledger/outcome.h"
#include "server/api.h"
#include "server/problem.h"
#include "server/query.h"

namespace ledger::server {
namespace {

void WriteError(RequestContext& context, const absl::Status& status) {
  WriteProblem(context.response, ProblemFromStatus(status));
}

// The balance answer's hold amounts (the account JSON has them too, AccountToJson):
// pending debits and credits as of now (lapsed holds no longer counted) and the available
// balance every solvency check uses.
nlohmann::json WithHoldAmounts(nlohmann::json json, const Account& account) {
  json["pending_debits"] = FormatAmount(account.pending_debits);
  json["pending_credits"] = FormatAmount(account.pending_credits);
  json["available"] = FormatAmount(account.Available());
  return json;
}

absl::Status RequireOnlyMembers(const nlohmann::json& body, const std::set<std::string>& allowed) {
  for (const auto& [name, value] : body.items()) {
    if (!allowed.contains(name)) return absl::InvalidArgumentError("unknown field \"" + name + "\"");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> StringMember(const nlohmann::json& body, const char* name) {
  if (!body.contains(name) || !body[name].is_string()) {
    return absl::InvalidArgumentError(absl::StrCat("\"", name, "\" must be a string"));
  }
  return body[name].get<std::string>();
}

absl::StatusOr<Asset> AssetFromBody(const HttpRequest& request) {
  LEDGER_ASSIGN_OR_RETURN(nlohmann::json body, JsonObjectBody(request));
  LEDGER_RETURN_IF_ERROR(RequireOnlyMembers(body, {"code", "scale"}));
  Asset asset;
  LEDGER_ASSIGN_OR_RETURN(asset.code, StringMember(body, "code"));
  if (!body.contains("scale") || !body["scale"].is_number_integer()) {
    return absl::InvalidArgumentError("\"scale\" must be an integer");
  }
  asset.scale = body["scale"].get<int>();
  LEDGER_RETURN_IF_ERROR(ValidateAsset(asset));
  return asset;
}

absl::StatusOr<AccountSpec> AccountSpecFromBody(const HttpRequest& request) {
  LEDGER_ASSIGN_OR_RETURN(nlohmann::json body, JsonObjectBody(request));
  LEDGER_RETURN_IF_ERROR(RequireOnlyMembers(body, {"id", "asset", "allow_negative", "overdraft_limit"}));
  AccountSpec spec;
  LEDGER_ASSIGN_OR_RETURN(spec.id, StringMember(body, "id"));
  LEDGER_ASSIGN_OR_RETURN(spec.asset, StringMember(body, "asset"));
  if (body.contains("allow_negative")) {
    if (!body["allow_negative"].is_boolean()) {
      return absl::InvalidArgumentError("\"allow_negative\" must be true or false");
    }
    spec.allow_negative = body["allow_negative"].get<bool>();
  }
  if (body.contains("overdraft_limit")) {
    LEDGER_ASSIGN_OR_RETURN(std::string limit, StringMember(body, "overdraft_limit"));
    LEDGER_ASSIGN_OR_RETURN(spec.overdraft_limit, ParseAmount(limit));
  }
  LEDGER_RETURN_IF_ERROR(ValidateAccountSpec(spec));
  return spec;
}

void AddAssetRoutes(Router& router, ApiContext& api) {
  router.Post("/v1/assets", Role::kAdmin, ForTenant(api, [](RequestContext& context, ApiContext& api) {
    absl::StatusOr<Asset> asset = AssetFromBody(context.request);
    if (!asset.ok()) return WriteError(context, asset.status());
    absl::StatusOr<Asset> before = api.ledger.GetAsset(asset->code, ReadConsistency::kPrimary);
    if (!before.ok() && !absl::IsNotFound(before.status())) return WriteError(context, before.status());
    if (absl::Status defined = api.ledger.DefineAsset(*asset); !defined.ok()) {
      return WriteError(context, defined);
    }
    // Defining the same asset again is a no-op: 200, not 201.
    WriteJson(context.response, before.ok() ? 200 : 201, AssetToJson(*asset));
  }));
  router.Get("/v1/assets", Role::kRead, ForTenant(api, [](RequestContext& context, ApiContext& api) {
    absl::StatusOr<std::vector<Asset>> assets = api.ledger.ListAssets(api.consistency);
    if (!assets.ok()) return WriteError(context, assets.status());
    nlohmann::json items = nlohmann::json::array();
    for (const Asset& asset : *assets) items.push_back(AssetToJson(asset));
    WriteJson(context.response, 200, {{"assets", std::move(items)}});
  }));
}

void AddAccountReadRoutes(Router& router, ApiContext& api) {
  router.Get("/v1/accounts", Role::kRead, ForTenant(api, [](RequestContext& context, ApiContext& api) {
    absl::StatusOr<int64_t> limit = PageLimit(context.request);
    if (!limit.ok()) return WriteError(context, limit.status());
    std::string after = context.request.get_param_value("after");
    absl::StatusOr<std::vector<Account>> accounts = api.ledger.ListAccounts(after, *limit, api.consistency);
    if (!accounts.ok()) return WriteError(context, accounts.status());
    nlohmann::json items = nlohmann::json::array();
    for (const Account& account : *accounts) items.push_back(AccountToJson(account));
    nlohmann::json next = static_cast<int64_t>(accounts->size()) == *limit
                              ? nlohmann::json(accounts->back().id) : nlohmann::json(nullptr);
    WriteJson(context.response, 200, {{"accounts", std::move(items)}, {"next_after", std::move(next)}});
  }));
  router.Get("/v1/accounts/{id}", Role::kRead, ForTenant(api, [](RequestContext& context, ApiContext& api) {
    absl::StatusOr<Account> account = api.ledger.GetAccount(context.path_parameters[0], api.consistency);
    if (!account.ok()) return WriteError(context, account.status());
    WriteJson(context.response, 200, AccountToJson(*account));
  }));
  router.Get("/v1/accounts/{id}/history", Role::kRead, ForTenant(api, [](RequestContext& context, ApiContext& api) {
    absl::StatusOr<int64_t> limit = PageLimit(context.request);
    if (!limit.ok()) return WriteError(context, limit.status());
    absl::StatusOr<int64_t> after = NonNegativeParameter(context.request, "after", 0);
    if (!after.ok()) return WriteError(context, after.status());
    const std::string& id = context.path_parameters[0];
    if (absl::StatusOr<Account> account = api.ledger.GetAccount(id, api.consistency); !account.ok()) {
      return WriteError(context, account.status());
    }
    absl::StatusOr<std::vector<HistoryEntry>> lines = api.ledger.ListHistory(id, *after, *limit, api.consistency);
    if (!lines.ok()) return WriteError(context, lines.status());
    nlohmann::json items = nlohmann::json::array();
    for (const HistoryEntry& line : *lines) items.push_back(HistoryEntryToJson(line));
    nlohmann::json next = static_cast<int64_t>(lines->size()) == *limit
                              ? nlohmann::json(lines->back().entry.account_version) : nlohmann::json(nullptr);
    WriteJson(context.response, 200, {{"entries", std::move(items)}, {"next_after", std::move(next)}});
  }));
  router.Get("/v1/accounts/{id}/balance", Role::kRead, ForTenant(api, [](RequestContext& context, ApiContext& api) {
    absl::StatusOr<Account> account = api.ledger.GetAccount(context.path_parameters[0], api.consistency);
    if (!account.ok()) return WriteError(context, account.status());
    nlohmann::json body = {{"account", account->id}, {"asset", account->asset}};
    if (!context.request.has_param("as_of")) {
      body["balance"] = FormatAmount(account->balance);
      body["version"] = account->version;
      return WriteJson(context.response, 200, WithHoldAmounts(std::move(body), *account));
    }
    // Only the posted balance has a past: entries store it, holds keep no history of
    // their pending amounts, so a past instant answers the balance alone.
    absl::Time as_of;
    std::string error;
    if (!absl::ParseTime(absl::RFC3339_full, context.request.get_param_value("as_of"), &as_of, &error)) {
      return WriteError(context, absl::InvalidArgumentError(
                                     "?as_of= must be an RFC 3339 time (2026-01-31T23:59:59Z)"));
    }
    absl::StatusOr<Amount> balance = api.ledger.BalanceAsOf(account->id, as_of, api.consistency);
    if (!balance.ok()) return WriteError(context, balance.status());
    body["balance"] = FormatAmount(*balance);
    body["as_of"] = FormatTimestamp(as_of);
    WriteJson(context.response, 200, body);
  }));
}

void AddAccountWriteRoutes(Router& router, ApiContext& api) {
  router.Post("/v1/accounts", Role::kAdmin, ForTenant(api, [](RequestContext& context, ApiContext& api) {
    absl::StatusOr<AccountSpec> spec = AccountSpecFromBody(context.request);
    if (!spec.ok()) return WriteError(context, spec.status());
    absl::StatusOr<Account> account = api.ledger.OpenAccount(*spec);
    if (!account.ok()) return WriteError(context, account.status());
    context.response.set_header("Location", "/v1/accounts/" + account->id);
    WriteJson(context.response, 201, AccountToJson(*account));
  }));
  router.Post("/v1/accounts/{id}/close", Role::kAdmin, ForTenant(api, [](RequestContext& context, ApiContext& api) {
    const std::string& id = context.path_parameters[0];
    if (absl::Status valid = ValidateAccountId(id); !valid.ok()) return WriteError(context, valid);
    if (absl::Status closed = api.ledger.CloseAccount(id); !closed.ok()) {
      return WriteError(context, closed);
    }
    absl::StatusOr<Account> account = api.ledger.GetAccount(id, ReadConsistency::kPrimary);
    if (!account.ok()) return WriteError(context, account.status());
    WriteJson(context.response, 200, AccountToJson(*account));
  }));
}

// Long poll: with ?wait=SECONDS and nothing after `after`, the handler asks to be called
// again after the poll interval (no worker thread waits meanwhile) until an event
// arrives, the wait (counted from when the request came) ends, or the server is stopping.
// An event committed meanwhile is seen within about two poll intervals.
constexpr absl::Duration kEventsPollInterval = absl::Milliseconds(50);

// Waiting long polls of one ledger with the same `after` (and the same Consistency: the
// primary and a lagging standby may answer differently) share one look at the outbox per
// poll interval: 256 readers caught up at the head cost 20 reads a second, not 5,120.
class EmptyOutboxLooks {
 public:
  // True when a look after `after` found nothing less than a poll interval ago.
  bool SeenEmptyRecently(const Ledger* ledger, ReadConsistency consistency, int64_t after,
                         absl::Time now) {
    absl::MutexLock lock(&mutex_);
    auto look = looked_.find({ledger, consistency, after});
    return look != looked_.end() && now - look->second < kEventsPollInterval;
  }
  void RecordEmpty(const Ledger* ledger, ReadConsistency consistency, int64_t after, absl::Time now) {
    absl::MutexLock lock(&mutex_);
    looked_[{ledger, consistency, after}] = now;
    // Bounded by the distinct `after` values in flight (at most --in-flight-max).
    for (auto look = looked_.begin(); look != looked_.end();) {
      look = now - look->second > absl::Seconds(1) ? looked_.erase(look) : std::next(look);
    }
  }

 private:
  absl::Mutex mutex_;
  std::map<std::tuple<const Ledger*, ReadConsistency, int64_t>, absl::Time> looked_
      ABSL_GUARDED_BY(mutex_);
};

void AddEventRoutes(Router& router, ApiContext& api) {
  router.Get("/v1/events", Role::kRead, ForTenant(api, [](RequestContext& context, ApiContext& api) {
    absl::StatusOr<int64_t> limit = PageLimit(context.request);
    if (!limit.ok()) return WriteError(context, limit.status());
    absl::StatusOr<int64_t> after = NonNegativeParameter(context.request, "after", 0);
    if (!after.ok()) return WriteError(context, after.status());
    absl::StatusOr<int64_t> wait_seconds = NonNegativeParameter(context.request, "wait", 0);
    if (!wait_seconds.ok()) return WriteError(context, wait_seconds.status());
    absl::Time deadline =
        context.request.received + std::min(absl::Seconds(*wait_seconds), api.options.events_wait_max);
    static EmptyOutboxLooks* const empty_looks = new EmptyOutboxLooks();
    auto waiting = [&] { return absl::Now() < deadline && !api.stopping.load(); };
    if (waiting() && empty_looks->SeenEmptyRecently(&api.ledger, api.consistency, *after, absl::Now())) {
      return context.response.CallAgainAfter(std::min(kEventsPollInterval, deadline - absl::Now()));
    }
    absl::StatusOr<std::vector<OutboxEvent>> events = api.ledger.ListEvents(*after, *limit, api.consistency);
    if (!events.ok()) return WriteError(context, events.status());
    if (events->empty()) empty_looks->RecordEmpty(&api.ledger, api.consistency, *after, absl::Now());
    if (events->empty() && waiting()) {
      return context.response.CallAgainAfter(std::min(kEventsPollInterval, deadline - absl::Now()));
    }
    nlohmann::json items = nlohmann::json::array();
    for (const OutboxEvent& event : *events) items.push_back(EventToJson(event));
    int64_t next = events->empty() ? *after : events->back().sequence;
    WriteJson(context.response, 200, {{"events", std::move(items)}, {"next_after", next}});
  }));
}

}  // namespace

void AddResourceRoutes(Router& router, ApiContext& api) {
  AddAssetRoutes(router, api);
  AddAccountReadRoutes(router, api);
  AddAccountWriteRoutes(router, api);
  router.Get("/v1/transactions/{id}", Role::kRead, ForTenant(api, [](RequestContext& context, ApiContext& api) {
    absl::StatusOr<Transaction> transaction = api.ledger.GetTransaction(context.path_parameters[0], api.consistency);
    if (!transaction.ok()) return WriteError(context, transaction.status());
    WriteJson(context.response, 200, TransactionToJson(*transaction));
  }));
  AddEventRoutes(router, api);
}

}  // namespace ledger::server
