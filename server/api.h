// The routes of `ledger serve`, one group per file:
//
//   health_routes.cc     /healthz, /readyz, /metrics, /v1/openapi.json (public)
//   resource_routes.cc   /v1/assets, /v1/accounts..., /v1/transactions/{id}, /v1/events
//   operation_routes.cc  POST /v1/operations, POST /v1/operations/batch (the
//                        Idempotency-Key contract; submit_answer.h's status table)
//   hold_routes.cc       /v1/holds, /v1/holds/{id}, /v1/accounts/{id}/holds
//   listing_routes.cc    GET /v1/transactions, GET /v1/keys/{key}
//
// Every route that reads or writes the ledger is added through ForTenant, so it sees the
// caller's tenant's ledger (server/tenant_ledgers.h) as `api.ledger`, never another's.
//
// Thread-safe: handlers share the Ledger (itself thread-safe) and read-only options.
#ifndef LEDGER_SERVER_API_H_
#define LEDGER_SERVER_API_H_

#include <atomic>
#include <functional>
#include <string_view>

#include "ledger/ledger.h"
#include "server/metrics.h"
#include "server/router.h"
#include "server/server.h"

namespace ledger::server {

class TenantLedgers;

struct ApiContext {
  Ledger& ledger;  // the --db ledger; inside a ForTenant handler, the caller's tenant's
  const ServerOptions& options;
  Metrics& metrics;
  const std::atomic<bool>& stopping;  // set on SIGTERM: long polls return early
  TenantLedgers* tenants = nullptr;   // null: every request uses `ledger`
  // Where this request's reads go (the Consistency header, RequestedConsistency): a GET
  // route passes it to every Ledger read; a write route reads the primary.
  ReadConsistency consistency = ReadConsistency::kReplicaAllowed;
};


// A route handler that gets the caller's tenant's ApiContext: `api.ledger` is the
// ledger of the request's principal's tenant, opened on first use, and
// `api.consistency` the request's Consistency header. A tenant whose
// ledger cannot be opened is answered with that error (503 for an unreachable database).
using TenantRouteHandler = std::function<void(RequestContext&, ApiContext&)>;
RouteHandler ForTenant(ApiContext& api, TenantRouteHandler handler);

// ForTenant for the event loop (Router's LoopRouteHandler): the handler runs only when
// the caller's tenant's ledger is open already, and returns false (the request then
// goes to the route's ForTenant handler on a worker) for anything that could block.
// A tenant's first request therefore opens its ledger on a worker, never on the loop.
using TenantLoopRouteHandler = std::function<bool(RequestContext&, ApiContext&)>;
LoopRouteHandler ForOpenTenant(ApiContext& api, TenantLoopRouteHandler handler);

void AddHealthRoutes(Router& router, ApiContext& api);
void AddResourceRoutes(Router& router, ApiContext& api);
void AddOperationRoutes(Router& router, ApiContext& api);
void AddHoldRoutes(Router& router, ApiContext& api);
void AddListingRoutes(Router& router, ApiContext& api);

// docs/openapi.json, embedded at build time.
std::string_view OpenApiDocument();

}  // namespace ledger::server

#endif  // LEDGER_SERVER_API_H_
