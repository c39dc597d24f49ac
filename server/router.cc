#include "server/router.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <limits>
#include <mutex>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "base/check.h"
#include "base/status.h"
#include "server/problem.h"

namespace ledger::server {
namespace {

bool IsParameterSegment(std::string_view segment) {
  return segment.size() >= 2 && segment.front() == '{' && segment.back() == '}';
}

// "/v1/accounts/{id}/history" -> "", "v1", "accounts", "{id}", "history"
std::vector<std::string> SegmentsOfTemplate(const std::string& path_template) {
  std::vector<std::string> segments = absl::StrSplit(path_template, '/');
  for (const std::string& segment : segments) {
    LEDGER_CHECK(IsParameterSegment(segment) || segment.find_first_of("{}") == std::string::npos)
        << "a route parameter is a whole segment: " << path_template;
  }
  return segments;
}

// Whether `path` matches the template's `segments` (a parameter: one or more bytes
// other than '/'), appending the parameters' values to `parameters` when it does. A
// comparison segment by segment: a regular expression per route cost more than the
// rest of routing (docs/benchmarks.md "Over HTTP").
bool MatchSegments(const std::vector<std::string>& segments, std::string_view path,
                   std::vector<std::string>* parameters) {
  size_t matched = 0;
  std::vector<std::string_view> values;
  for (size_t start = 0; start <= path.size();) {
    size_t end = std::min(path.find('/', start), path.size());
    const std::string_view segment = path.substr(start, end - start);
    start = end + 1;
    if (matched == segments.size()) return false;
    const std::string& expected = segments[matched++];
    if (IsParameterSegment(expected)) {
      if (segment.empty()) return false;
      values.push_back(segment);
    } else if (segment != expected) {
      return false;
    }
  }
  if (matched != segments.size()) return false;
  if (parameters != nullptr) parameters->assign(values.begin(), values.end());
  return true;
}

bool IsJsonContentType(const std::string& content_type) {
  std::string_view media = std::string_view(content_type).substr(0, content_type.find(';'));
  while (!media.empty() && media.back() == ' ') media.remove_suffix(1);
  return absl::EqualsIgnoreCase(absl::string_view(media.data(), media.size()), "application/json");
}

std::mutex log_mutex;

// The request log lines this thread wrote since its last flush (Router::FlushLog). An
// event loop flushes once per turn, after the handlers that were ready together (one
// `write` for all their lines instead of one per request: 2 % of the server's CPU,
// docs/benchmarks.md "Over HTTP"); a thread that ends flushes what it holds.
struct LogBuffer {
  ~LogBuffer() { Flush(); }
  void Flush() {
    if (text.empty()) return;
    std::lock_guard<std::mutex> lock(log_mutex);
    std::fwrite(text.data(), 1, text.size(), stderr);
    text.clear();
  }
  std::string text;
};
thread_local LogBuffer log_buffer;
// Past this, a line is written at once whatever the loop does.
constexpr size_t kLogBufferBytesMax = 16 * 1024;

// absl::FormatTime(absl::RFC3339_sec, now, UTC), formatted once a second per thread: a
// request's log line needs it, and formatting is most of the line's cost.
const std::string& LogTime(absl::Time now) {
  thread_local int64_t second = std::numeric_limits<int64_t>::min();
  thread_local std::string text;
  const int64_t now_second = absl::ToUnixSeconds(now);
  if (now_second != second) {
    second = now_second;
    text = absl::FormatTime(absl::RFC3339_sec, now, absl::UTCTimeZone());
  }
  return text;
}

}  // namespace

Router::Router(const ServerOptions& options, const ApiKeys* api_keys, Metrics& metrics)
    : options_(options), api_keys_(api_keys), metrics_(metrics) {}

void Router::Get(const std::string& path_template, std::optional<Role> role, RouteHandler handler) {
  Add("GET", path_template, role, std::move(handler), nullptr);
}

void Router::Post(const std::string& path_template, std::optional<Role> role, RouteHandler handler,
                  LoopRouteHandler on_loop) {
  Add("POST", path_template, role, std::move(handler), std::move(on_loop));
}

void Router::Add(const std::string& method, const std::string& path_template,
                 std::optional<Role> role, RouteHandler handler, LoopRouteHandler on_loop) {
  LEDGER_CHECK(handler != nullptr) << "a route needs a handler for its workers";
  routes_.push_back(RouteInfo{method, path_template});
  route_segments_.push_back(SegmentsOfTemplate(path_template));
  route_roles_.push_back(role);
  route_handlers_.push_back(std::move(handler));
  route_loop_handlers_.push_back(std::move(on_loop));
}

bool Router::Admit(RouterCall& call) const {
  const HttpRequest& request = call.request;
  HttpResponse& response = call.response;
  std::vector<std::string> parameters;
  for (size_t i = 0; i < routes_.size(); ++i) {
    if (routes_[i].method == request.method && MatchSegments(route_segments_[i], request.path, &parameters)) {
      call.route = i;
      break;
    }
  }
  if (!call.route.has_value()) {
    WriteRouteNotFound(request, response);
    return false;
  }
  std::optional<Principal> principal = Authenticate(route_roles_[*call.route], request, response);
  if (!principal.has_value()) return false;
  call.principal = *std::move(principal);
  if (request.method == "POST" && !request.body.empty() &&
      !IsJsonContentType(request.get_header_value("Content-Type"))) {
    WriteProblem(response, MakeProblem("unsupported_media_type",
                                       "send the body as Content-Type: application/json"));
    return false;
  }
  if (!metrics_.TryEnter()) {
    WriteProblem(response, MakeProblem("too_many_requests",
                                       absl::StrCat("more than ", options_.in_flight_max,
                                                    " requests in flight; retry later")));
    return false;
  }
  call.holds_slot = true;
  call.path_parameters = std::move(parameters);
  return true;
}

struct LaterAnswer::State {
  explicit State(RouterCall& call) : call(call) {}
  ~State() {
    if (!answered.load()) {
      Answer([](HttpResponse& response) {
        WriteProblem(response, MakeProblem("internal", "internal error"));
      });
    }
  }
  void Answer(std::function<void(HttpResponse&)> write) {
    if (answered.exchange(true)) return;
    call.later_write = std::move(write);
    if (call.later_parties.fetch_sub(1) == 1) call.resume();  // the handler has returned
  }

  RouterCall& call;  // not touched once answered: the connection may have freed it
  std::atomic<bool> answered{false};
};

void LaterAnswer::operator()(std::function<void(HttpResponse&)> write) const {
  state_->Answer(std::move(write));
}

LaterAnswer RequestContext::AnswerLater() {
  LEDGER_CHECK(!call.answers_later) << "a handler answers later once";
  call.answers_later = true;
  return LaterAnswer(std::make_shared<LaterAnswer::State>(call));
}

bool Router::Run(RouterCall& call) const {
  const RouteHandler& handler = route_handlers_[call.route.value_or(0)];
  std::optional<bool> ready = Invoke(call, [&handler](RequestContext& context) {
    handler(context);
    return true;
  });
  LEDGER_CHECK(ready.has_value()) << "a worker's handler always answers";
  return *ready;
}

Router::LoopResult Router::RunOnLoop(RouterCall& call) const {
  LEDGER_CHECK(call.route.has_value()) << "RunOnLoop before Admit";
  const LoopRouteHandler& handler = route_loop_handlers_[*call.route];
  if (handler == nullptr) return LoopResult::kNeedsWorker;
  std::optional<bool> ready = Invoke(call, handler);
  if (!ready.has_value()) return LoopResult::kNeedsWorker;
  return *ready ? LoopResult::kAnswered : LoopResult::kAnswersLater;
}

std::optional<bool> Router::Invoke(RouterCall& call, const LoopRouteHandler& handler) const {
  LEDGER_CHECK(call.route.has_value() && call.holds_slot) << "Run before Admit";
  LEDGER_CHECK(call.resume != nullptr) << "Run without a way to resume the call";
  call.response = HttpResponse{};
  call.later_write = nullptr;
  call.answers_later = false;
  call.later_parties.store(2);
  RequestContext context{call.request, call.response, call.principal, call.path_parameters, call};
  try {
    if (!handler(context)) {
      LEDGER_CHECK(!call.answers_later) << "a handler that declines must not answer later";
      return std::nullopt;
    }
  } catch (const std::exception&) {
    // A handler that answers later answers even so (a dropped LaterAnswer is a 500).
    if (!call.answers_later) {
      call.response = HttpResponse{};
      WriteProblem(call.response, MakeProblem("internal", "internal error"));
    }
  }
  if (!call.answers_later) return true;
  // The later answer may have come already (bad input, or no group commit): then the
  // answer is ready now; else its LaterAnswer resumes the call. Nothing of `call` is
  // touched after this, as the connection may then complete and free it.
  return call.later_parties.fetch_sub(1) == 1;
}

void Router::Complete(RouterCall& call) const {
  if (call.later_write == nullptr) return;
  std::function<void(HttpResponse&)> write = std::move(call.later_write);
  call.later_write = nullptr;
  call.response = HttpResponse{};
  try {
    write(call.response);
  } catch (const std::exception&) {
    call.response = HttpResponse{};
    WriteProblem(call.response, MakeProblem("internal", "internal error"));
  }
}

std::optional<Principal> Router::Authenticate(const std::optional<Role>& role,
                                              const HttpRequest& request,
                                              HttpResponse& response) const {
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

void Router::WriteRouteNotFound(const HttpRequest& request, HttpResponse& response) const {
  std::vector<std::string> allowed;
  for (size_t i = 0; i < routes_.size(); ++i) {
    if (MatchSegments(route_segments_[i], request.path, nullptr)) allowed.push_back(routes_[i].method);
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

void Router::Finish(RouterCall& call) const {
  if (call.holds_slot) {
    call.holds_slot = false;
    metrics_.Leave();
  }
  static const std::string kUnmatched = "unmatched";
  static const std::string kOtherMethod = "OTHER";
  const HttpRequest& request = call.request;
  const HttpResponse& response = call.response;
  const std::string& route = call.route.has_value() ? routes_[*call.route].path_template : kUnmatched;
  const absl::Time now = absl::Now();
  absl::Duration latency = now - call.started;
  // A method the stack could not parse, or one no route has, stays out of the labels.
  const std::string& method = request.method == "GET" || request.method == "POST" ? request.method : kOtherMethod;
  metrics_.RecordRequest(method, route, response.status, latency);
  // Only fixed vocabulary goes into the line: no path values, bodies, keys or headers.
  absl::StrAppend(&log_buffer.text,
      "{\"time\":\"", LogTime(now),
      "\",\"method\":\"", method,
      "\",\"route\":\"", route, "\",\"status\":", response.status, ",\"latency_ms\":",
      absl::ToDoubleMilliseconds(latency), "}\n");
  if (log_buffer.text.size() >= kLogBufferBytesMax) log_buffer.Flush();
}

bool Router::HoldsLog() { return !log_buffer.text.empty(); }

void Router::FlushLog() { log_buffer.Flush(); }

}  // namespace ledger::server
