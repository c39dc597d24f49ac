#include "server/api.h"
#include "server/problem.h"

namespace ledger::server {

void AddHealthRoutes(Router& router, ApiContext& api) {
  // Process up: answers without touching the database.
  router.Get("/healthz", std::nullopt, [](RequestContext& context) {
    WriteJson(context.response, 200, {{"status", "ok"}});
  });
  // Database reachable: one cheap read through the engine.
  router.Get("/readyz", std::nullopt, [&api](RequestContext& context) {
    // The primary: ready means writes can go through.
    absl::StatusOr<std::vector<Asset>> assets = api.ledger.ListAssets(ReadConsistency::kPrimary);
    if (!assets.ok() || api.stopping.load()) {
      WriteProblem(context.response,
                   MakeProblem("not_ready", api.stopping.load() ? "shutting down"
                                                                 : "the database is not reachable"));
      return;
    }
    WriteJson(context.response, 200, {{"status", "ready"}, {"engine", api.ledger.engine_name()}});
  });
  router.Get("/metrics", std::nullopt, [&api](RequestContext& context) {
    context.response.status = 200;
    context.response.set_content(api.metrics.RenderPrometheusText(),
                                 "text/plain; version=0.0.4; charset=utf-8");
  });
  router.Get("/v1/openapi.json", std::nullopt, [](RequestContext& context) {
    context.response.status = 200;
    context.response.set_content(std::string(OpenApiDocument()), kJsonContentType);
  });
}

}  // namespace ledger::server
