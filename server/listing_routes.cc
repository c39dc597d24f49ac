// Listings and lookups (issue 31): GET /v1/transactions (filtered, keyset paging) and
// GET /v1/keys/{key} (what a key did); GET /v1/holds is with the other hold routes
// (hold_routes.cc). Each reads through the Ledger; a filter the library refuses is 400
// invalid_filter, naming it.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/status.h"
#include "ledger/json.h"
#include "ledger/ledger.h"
#include "ledger/outcome.h"
#include "server/api.h"
#include "server/problem.h"
#include "server/query.h"

namespace ledger::server {
namespace {

void WriteError(RequestContext& context, const absl::Status& status) {
  WriteProblem(context.response, ProblemFromStatus(status));
}

void WriteBadFilter(RequestContext& context, const absl::Status& status) {
  WriteProblem(context.response, MakeProblem("invalid_filter", std::string(status.message())));
}

absl::StatusOr<std::optional<absl::Time>> InstantParameter(const HttpRequest& request,
                                                           const char* name) {
  if (!request.has_param(name)) return std::nullopt;
  absl::Time instant;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, request.get_param_value(name), &instant, &error)) {
    return absl::InvalidArgumentError(
        absl::StrCat("?", name, "= must be an RFC 3339 time (2026-01-31T23:59:59Z)"));
  }
  return instant;
}

// ?account= ?kind= ?from= ?before= ?metadata=NAME=VALUE ?after= (the cursor), checked
// whole by the library (ValidateTransactionQuery). ?limit= is read as on every list.
absl::StatusOr<TransactionQuery> TransactionQueryOf(const HttpRequest& request) {
  TransactionQuery query;
  query.filter.account_id = request.get_param_value("account");
  if (request.has_param("kind")) {
    absl::StatusOr<OperationKind> kind = ParseOperationKind(request.get_param_value("kind"));
    if (!kind.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("?kind=: ", kind.status().message()));
    }
    query.filter.kind = *kind;
  }
  LEDGER_ASSIGN_OR_RETURN(query.filter.created_from, InstantParameter(request, "from"));
  LEDGER_ASSIGN_OR_RETURN(query.filter.created_before, InstantParameter(request, "before"));
  if (request.has_param("metadata")) {
    const std::string member = request.get_param_value("metadata");
    const size_t equals = member.find('=');
    if (equals == std::string::npos) {
      return absl::InvalidArgumentError(
          "?metadata= must be NAME=VALUE (a top-level string member), e.g. metadata=order%3DA-17");
    }
    query.filter.metadata_key = member.substr(0, equals);
    query.filter.metadata_value = member.substr(equals + 1);
  }
  query.cursor = request.get_param_value("after");
  LEDGER_RETURN_IF_ERROR(ValidateTransactionQuery(query));
  return query;
}

void HandleListTransactions(RequestContext& context, ApiContext& api) {
  absl::StatusOr<int64_t> limit = PageLimit(context.request);
  if (!limit.ok()) return WriteError(context, limit.status());
  absl::StatusOr<TransactionQuery> query = TransactionQueryOf(context.request);
  if (!query.ok()) return WriteBadFilter(context, query.status());
  query->limit = *limit;
  absl::StatusOr<TransactionPage> page = api.ledger.ListTransactions(*query, api.consistency);
  if (!page.ok()) return WriteError(context, page.status());
  nlohmann::json items = nlohmann::json::array();
  for (const Transaction& transaction : page->transactions) {
    items.push_back(TransactionToJson(transaction));
  }
  nlohmann::json next = page->next_cursor.empty() ? nlohmann::json(nullptr)
                                                  : nlohmann::json(page->next_cursor);
  WriteJson(context.response, 200,
            {{"transactions", std::move(items)}, {"next_after", std::move(next)}});
}

// The key as POST /v1/operations claims it: the caller's tenant (from the API key), the
// default actor and key space. Another tenant's key is simply not found.
void HandleGetKey(RequestContext& context, ApiContext& api) {
  const KeyIdentity identity{std::string(kDefaultKeyNamespace),
                             Scope{.tenant = context.principal.tenant},
                             context.path_parameters[0]};
  absl::StatusOr<KeyLookup> found = api.ledger.LookUpKey(identity, api.consistency);
  if (!found.ok()) return WriteError(context, found.status());
  WriteJson(context.response, 200,
            {{"key", KeyRecordToJson(found->record)},
             {"transaction", TransactionToJson(found->transaction)}});
}

}  // namespace

void AddListingRoutes(Router& router, ApiContext& api) {
  // Through ForTenant like every ledger route: a tenant lists and looks up only its own.
  router.Get("/v1/transactions", Role::kRead, ForTenant(api, HandleListTransactions));
  router.Get("/v1/keys/{key}", Role::kRead, ForTenant(api, HandleGetKey));
}

}  // namespace ledger::server
