// The server's routing layer over cpp-httplib: route templates, authentication and
// roles, limits, problem+json for every error httplib itself produces (404, 405, 413,
// ...), and one structured log line plus metrics per request.
//
//   Router router(http, options, api_keys_or_null, metrics);
//   router.Get("/v1/accounts/{id}", Role::kRead, [](RequestContext& context) { ... });
//   router.InstallHooks();
//
// A handler sees path parameters in order (context.path_parameters) and the caller's
// Principal. A route added with no role is public (health, metrics, the OpenAPI file).
//
// Thread-safe once InstallHooks ran: handlers run on httplib's worker threads.
#ifndef LEDGER_SERVER_ROUTER_H_
#define LEDGER_SERVER_ROUTER_H_

#include <functional>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "httplib.h"
#include "server/api_keys.h"
#include "server/metrics.h"
#include "server/server.h"

namespace ledger::server {

struct RequestContext {
  const httplib::Request& request;
  httplib::Response& response;
  const Principal& principal;
  std::vector<std::string> path_parameters;
};

using RouteHandler = std::function<void(RequestContext&)>;

struct RouteInfo {
  std::string method;         // GET, POST
  std::string path_template;  // /v1/accounts/{id}
};

class Router {
 public:
  // `api_keys` null: development mode, every request is the default tenant as admin.
  Router(httplib::Server& http, const ServerOptions& options, const ApiKeys* api_keys,
         Metrics& metrics);

  // `role` nullopt: public. POST routes with a body require Content-Type application/json.
  void Get(const std::string& path_template, std::optional<Role> role, RouteHandler handler);
  void Post(const std::string& path_template, std::optional<Role> role, RouteHandler handler);

  // Pre-routing limits, the error handler, the exception handler and the logger.
  void InstallHooks();

  const std::vector<RouteInfo>& routes() const { return routes_; }

 private:
  void Add(const std::string& method, const std::string& path_template, std::optional<Role> role,
           RouteHandler handler);
  void Handle(const RouteInfo& route, const std::optional<Role>& role, const RouteHandler& handler,
              const httplib::Request& request, httplib::Response& response);
  // nullopt after writing the 401/403 problem.
  std::optional<Principal> Authenticate(const std::optional<Role>& role,
                                        const httplib::Request& request,
                                        httplib::Response& response) const;
  // Writes 404, or 405 with Allow when the path exists under another method.
  void WriteRouteNotFound(const httplib::Request& request, httplib::Response& response) const;
  void LogRequest(const httplib::Request& request, const httplib::Response& response);

  httplib::Server& http_;
  const ServerOptions& options_;
  const ApiKeys* api_keys_;
  Metrics& metrics_;
  std::vector<RouteInfo> routes_;
  std::vector<std::regex> route_patterns_;  // parallel to routes_
};

}  // namespace ledger::server

#endif  // LEDGER_SERVER_ROUTER_H_
