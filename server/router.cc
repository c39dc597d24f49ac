#include "server/router.h"

#include <chrono>
#include <cstdio>
#include <exception>
#include <mutex>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "base/status.h"
#include "server/problem.h"

namespace ledger::server {
namespace {

// What the logger needs to know about the request its worker thread just handled.
// httplib runs pre-routing, the handler and the logger on the same thread, in order.
struct RequestState {
  std::optional<absl::Time> started;
  std::string route = "unmatched";
};
thread_local RequestState request_state;

// "/v1/accounts/{id}/history" -> "/v1/accounts/([^/]+)/history"
std::string PatternFromTemplate(const std::string& path_template) {
  std::string pattern;
  for (size_t i = 0; i < path_template.size(); ++i) {
    if (path_template[i] == '{') {
      i = path_template.find('}', i);
      pattern += "([^/]+)";
    } else if (std::string_view(".+*?()[]^$|\\").find(path_template[i]) != std::string_view::npos) {
      pattern += '\\';
      pattern += path_template[i];
    } else {
      pattern += path_template[i];
    }
  }
  return pattern;
}

bool IsJsonContentType(const std::string& content_type) {
  std::string_view media = std::string_view(content_type).substr(0, content_type.find(';'));
  while (!media.empty() && media.back() == ' ') media.remove_suffix(1);
  return absl::EqualsIgnoreCase(absl::string_view(media.data(), media.size()), "application/json");
}

std::mutex log_mutex;

}  // namespace

Router::Router(httplib::Server& http, const ServerOptions& options, const ApiKeys* api_keys,
               Metrics& metrics)
    : http_(http), options_(options), api_keys_(api_keys), metrics_(metrics) {}

void Router::Get(const std::string& path_template, std::optional<Role> role, RouteHandler handler) {
  Add("GET", path_template, role, std::move(handler));
}

void Router::Post(const std::string& path_template, std::optional<Role> role, RouteHandler handler) {
  Add("POST", path_template, role, std::move(handler));
}

void Router::Add(const std::string& method, const std::string& path_template,
                 std::optional<Role> role, RouteHandler handler) {
  std::string pattern = PatternFromTemplate(path_template);
  RouteInfo route{method, path_template};
  routes_.push_back(route);
  route_patterns_.emplace_back(pattern);
  auto wrapped = [this, route, role, handler = std::move(handler)](const httplib::Request& request,
                                                                   httplib::Response& response) {
    Handle(route, role, handler, request, response);
  };
  if (method == "GET") {
    http_.Get(pattern, std::move(wrapped));
  } else {
    http_.Post(pattern, std::move(wrapped));
  }
}

void Router::Handle(const RouteInfo& route, const std::optional<Role>& role,
                    const RouteHandler& handler, const httplib::Request& request,
                    httplib::Response& response) {
  request_state.route = route.path_template;
  std::optional<Principal> principal = Authenticate(role, request, response);
  if (!principal.has_value()) return;
  if (route.method == "POST" && !request.body.empty() &&
      !IsJsonContentType(request.get_header_value("Content-Type"))) {
    WriteProblem(response, MakeProblem("unsupported_media_type",
                                       "send the body as Content-Type: application/json"));
    return;
  }
  if (!metrics_.TryEnter()) {
    WriteProblem(response, MakeProblem("too_many_requests",
                                       absl::StrCat("more than ", options_.in_flight_max,
                                                    " requests in flight; retry later")));
    return;
  }
  RequestContext context{request, response, *principal, {}};
  for (size_t i = 1; i < request.matches.size(); ++i) {
    context.path_parameters.push_back(request.matches[i].str());
  }
  struct Leave {
    Metrics& metrics;
    ~Leave() { metrics.Leave(); }
  } leave{metrics_};
  handler(context);
}

std::optional<Principal> Router::Authenticate(const std::optional<Role>& role,
                                              const httplib::Request& request,
                                              httplib::Response& response) const {
  if (api_keys_ == nullptr || !role.has_value()) return Principal{};
  if (request.get_header_value_count("Authorization") > 1) {
    WriteProblem(response, MakeProblem("invalid_request", "Authorization is given more than once"));
    return std::nullopt;
  }
  std::string authorization = request.get_header_value("Authorization");
  constexpr std::string_view kBearer = "Bearer ";
  std::optional<Principal> principal;
  if (authorization.size() > kBearer.size() &&
      absl::StartsWithIgnoreCase(authorization, absl::string_view(kBearer.data(), kBearer.size()))) {
    principal = api_keys_->Find(std::string_view(authorization).substr(kBearer.size()));
  }
  if (!principal.has_value()) {
    response.set_header("WWW-Authenticate", "Bearer");
    WriteProblem(response, MakeProblem("unauthenticated",
                                       "send a valid API key as Authorization: Bearer <key>"));
    return std::nullopt;
  }
  if (principal->role < *role) {
    WriteProblem(response, MakeProblem("forbidden",
                                       absl::StrCat("this route needs the ", View(RoleName(*role)),
                                                    " role; the key has ",
                                                    View(RoleName(principal->role)))));
    return std::nullopt;
  }
  return principal;
}

void Router::WriteRouteNotFound(const httplib::Request& request, httplib::Response& response) const {
  std::vector<std::string> allowed;
  for (size_t i = 0; i < routes_.size(); ++i) {
    if (std::regex_match(request.path, route_patterns_[i])) allowed.push_back(routes_[i].method);
  }
  if (allowed.empty()) {
    WriteProblem(response,
                 MakeProblem("route_not_found", "no route " + request.path + "; see /v1/openapi.json"));
    return;
  }
  response.set_header("Allow", absl::StrJoin(allowed, ", "));
  WriteProblem(response, MakeProblem("method_not_allowed",
                                     absl::StrCat(request.method, " is not allowed on ", request.path,
                                                  "; allowed: ", absl::StrJoin(allowed, ", "))));
}

void Router::InstallHooks() {
  http_.set_pre_routing_handler(httplib::Server::HandlerWithResponse(
      [this](const httplib::Request& request, httplib::Response& response) {
    request_state = RequestState{.started = absl::Now()};
    size_t header_bytes = 0;
    for (const auto& [name, value] : request.headers) header_bytes += name.size() + value.size() + 4;
    if (header_bytes > options_.header_bytes_max) {
      WriteProblem(response, MakeProblem("request_header_fields_too_large",
                                         absl::StrCat("request headers over ",
                                                      options_.header_bytes_max, " bytes")));
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  }));
  http_.set_error_handler(httplib::Server::HandlerWithResponse(
      [this](const httplib::Request& request, httplib::Response& response) {
    if (!response.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    if (response.status == 404) {
      WriteRouteNotFound(request, response);
    } else if (response.status == 413) {
      WriteProblem(response, MakeProblem("payload_too_large",
                                         absl::StrCat("bodies are limited to ",
                                                      options_.body_bytes_max, " bytes")));
    } else if (response.status == 400 && request.method == "POST" &&
               !request.has_header("Content-Length") && !request.has_header("Transfer-Encoding")) {
      // cpp-httplib cannot read a POST without a length; say so instead of a bare 400.
      WriteProblem(response, MakeProblem("length_required",
                                         "send Content-Length (curl: -d '' for an empty body)"));
    } else {
      // cpp-httplib's own status for what it could not parse stays (a 400 as a rule).
      Problem problem = MakeProblem("bad_request", "the request could not be read as HTTP/1.1");
      problem.status = response.status;
      WriteProblem(response, problem);
    }
    return httplib::Server::HandlerResponse::Handled;
  }));
  http_.set_exception_handler(
      [](const httplib::Request&, httplib::Response& response, std::exception_ptr) {
        WriteProblem(response, MakeProblem("internal", "internal error"));
      });
  // Logged and counted before the response is written (httplib's logger runs after), so
  // a client that got its answer always finds it in /metrics.
  http_.set_post_routing_handler([this](const httplib::Request& request, httplib::Response& response) {
    LogRequest(request, response);
  });
}

void Router::LogRequest(const httplib::Request& request, const httplib::Response& response) {
  RequestState state = std::exchange(request_state, RequestState{});
  absl::Duration latency =
      state.started.has_value() ? absl::Now() - *state.started : absl::ZeroDuration();
  metrics_.RecordRequest(request.method, state.route, response.status, latency);
  // Only fixed vocabulary goes into the line: no path values, bodies, keys or headers.
  std::string line = absl::StrCat(
      "{\"time\":\"", absl::FormatTime(absl::RFC3339_sec, absl::Now(), absl::UTCTimeZone()),
      "\",\"method\":\"", request.method == "GET" || request.method == "POST" ? request.method : "OTHER",
      "\",\"route\":\"", state.route, "\",\"status\":", response.status, ",\"latency_ms\":",
      absl::ToDoubleMilliseconds(latency), "}\n");
  std::lock_guard<std::mutex> lock(log_mutex);
  std::fputs(line.c_str(), stderr);
}

}  // namespace ledger::server
