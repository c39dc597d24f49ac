// Holds (issue 13): GET /v1/holds/{id}, GET /v1/accounts/{id}/holds and GET /v1/holds
// (every hold, issue 31). They read through
// the Ledger, so a pending hold past its expires_at reads as expired at once, before the
// hold sweeper records its expiry (settled_by stays null until it does). Holds are
// placed, captured and voided through POST /v1/operations like every other operation.
#include <optional>
#include <string>
#include <vector>

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

void HandleGetHold(RequestContext& context, ApiContext& api) {
  absl::StatusOr<Hold> hold = api.ledger.GetHold(context.path_parameters[0], api.consistency);
  if (!hold.ok()) return WriteError(context, hold.status());
  WriteJson(context.response, 200, HoldToJson(*hold));
}

// Keyset paging by hold id, like the account list: ?after= is the last id of the page
// before (next_after), "" or absent for the first page. ?status= keeps one status as of
// now (a pending hold past its expires_at is expired); a bad one is 400 invalid_filter.
// `account_id` "": every hold (GET /v1/holds, as `ledger holds list` without an account).
void HandleListHolds(RequestContext& context, ApiContext& api, const std::string& account_id) {
  absl::StatusOr<int64_t> limit = PageLimit(context.request);
  if (!limit.ok()) return WriteError(context, limit.status());
  std::optional<HoldStatus> status;
  if (context.request.has_param("status")) {
    absl::StatusOr<HoldStatus> parsed = ParseHoldStatus(context.request.get_param_value("status"));
    if (!parsed.ok()) {
      return WriteProblem(context.response,
                          MakeProblem("invalid_filter",
                                      "?status= must be pending, captured, voided or expired"));
    }
    status = *parsed;
  }
  std::string after = context.request.get_param_value("after");
  absl::StatusOr<std::vector<Hold>> holds =
      api.ledger.ListHolds(account_id, after, *limit, status, api.consistency);
  if (!holds.ok()) return WriteError(context, holds.status());
  nlohmann::json items = nlohmann::json::array();
  for (const Hold& hold : *holds) items.push_back(HoldToJson(hold));
  nlohmann::json next = static_cast<int64_t>(holds->size()) == *limit
                            ? nlohmann::json(holds->back().id) : nlohmann::json(nullptr);
  WriteJson(context.response, 200, {{"holds", std::move(items)}, {"next_after", std::move(next)}});
}

}  // namespace

void AddHoldRoutes(Router& router, ApiContext& api) {
  router.Get("/v1/holds/{id}", Role::kRead,
             ForTenant(api, HandleGetHold));
  router.Get("/v1/accounts/{id}/holds", Role::kRead,
             ForTenant(api, [](RequestContext& context, ApiContext& tenant) {
               HandleListHolds(context, tenant, context.path_parameters[0]);
             }));
  router.Get("/v1/holds", Role::kRead, ForTenant(api, [](RequestContext& context, ApiContext& tenant) {
               HandleListHolds(context, tenant, "");
             }));
}

}  // namespace ledger::server
