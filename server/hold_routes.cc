// Holds (issue 13): GET /v1/holds/{id} and GET /v1/accounts/{id}/holds. Both read through
// the Ledger, so a pending hold past its expires_at reads as expired at once, before the
// hold sweeper records its expiry (settled_by stays null until it does). Holds are
// placed, captured and voided through POST /v1/operations like every other operation.
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
// before (next_after), "" or absent for the first page.
void HandleListHolds(RequestContext& context, ApiContext& api) {
  absl::StatusOr<int64_t> limit = PageLimit(context.request);
  if (!limit.ok()) return WriteError(context, limit.status());
  std::string after = context.request.get_param_value("after");
  absl::StatusOr<std::vector<Hold>> holds =
      api.ledger.ListHolds(context.path_parameters[0], after, *limit, api.consistency);
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
             ForTenant(api, HandleListHolds));
}

}  // namespace ledger::server
