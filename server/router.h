// The server's routing layer between the HTTP stack (server/http_server.h) and the route
// handlers: route templates, authentication and roles, the in-flight limit, problem+json
// for 404 and 405, and one structured log line plus metrics per request.
//
//   Router router(options, api_keys_or_null, metrics);
//   router.Get("/v1/accounts/{id}", Role::kRead, [](RequestContext& context) { ... });
//
// A handler sees path parameters in order (context.path_parameters) and the caller's
// Principal. A route added with no role is public (health, metrics, the OpenAPI file).
//
// One request goes through Admit (on the event loop: cheap checks, no database), Run (on
// a worker thread, the handler; again after a delay when the handler asks for it with
// HttpResponse::CallAgainAfter; or the handler hands its work on and answers later,
// RequestContext::AnswerLater, holding no worker meanwhile), Complete and Finish (once,
// before the answer is written). A route may also have a handler for the event loop
// (RunOnLoop): it takes the requests it can answer or hand on without blocking (a
// submit to the group committer) and leaves the others to Run, which saves the
// hand-off to a worker and back.
//
// Routes are added before serving; after that every member is thread-safe.
#ifndef LEDGER_SERVER_ROUTER_H_
#define LEDGER_SERVER_ROUTER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "server/api_keys.h"
#include "server/http_message.h"
#include "server/metrics.h"
#include "server/server.h"

namespace ledger::server {

struct RouterCall;

// An answer a handler gives after it has returned (RequestContext::AnswerLater), from
// any thread: a submit handed to the group committer. Until then the call keeps its
// in-flight slot and holds no worker. Copies share one answer; when every copy is gone
// unanswered (a bug), the answer is a 500, so no call waits forever.
class LaterAnswer {
 public:
  // Hands the call back to its connection, where `write` fills its response (on the
  // event loop: keep it quick). Only the first call counts.
  void operator()(std::function<void(HttpResponse&)> write) const;

 private:
  friend struct RequestContext;
  struct State;
  explicit LaterAnswer(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

struct RequestContext {
  const HttpRequest& request;
  HttpResponse& response;
  const Principal& principal;
  std::vector<std::string> path_parameters;
  RouterCall& call;

  // The handler answers later, through the returned LaterAnswer, instead of in
  // `response` (which it then leaves alone).
  LaterAnswer AnswerLater();
};

using RouteHandler = std::function<void(RequestContext&)>;
// Runs on the event loop, so it must never block (no database, no lock held for long):
// true when it answered (in `response`, or through AnswerLater); false, having touched
// nothing, when the request needs the route's RouteHandler on a worker.
using LoopRouteHandler = std::function<bool(RequestContext&)>;

struct RouteInfo {
  std::string method;         // GET, POST
  std::string path_template;  // /v1/accounts/{id}
};

// One request on its way through the router; owned by its connection.
struct RouterCall {
  HttpRequest request;
  HttpResponse response;
  // Filled by Admit.
  std::optional<size_t> route;  // index into the router's routes
  Principal principal;
  std::vector<std::string> path_parameters;
  bool holds_slot = false;  // entered the in-flight limit: Finish leaves it
  absl::Time started = absl::Now();
  // Set by the HTTP stack before Run: hands the call back to its connection once an
  // answer given later is ready (Run returned false). Called once, from any thread.
  std::function<void()> resume;
  // An answer given later: set by the handler's LaterAnswer, run by Complete.
  std::function<void(HttpResponse&)> later_write;
  bool answers_later = false;  // the running handler called AnswerLater
  // The handler's return and its later answer: the second of the two resumes the call.
  std::atomic<int> later_parties{0};
};

class Router {
 public:
  // `api_keys` null: development mode, every request is the default tenant as admin.
  Router(const ServerOptions& options, const ApiKeys* api_keys, Metrics& metrics);

  // `role` nullopt: public. POST routes with a body require Content-Type application/json.
  void Get(const std::string& path_template, std::optional<Role> role, RouteHandler handler);
  // `on_loop`, when given, is tried on the event loop first (RunOnLoop).
  void Post(const std::string& path_template, std::optional<Role> role, RouteHandler handler,
            LoopRouteHandler on_loop = nullptr);

  // Matches the route, authenticates, checks the Content-Type and takes an in-flight
  // slot. True: Run the call on a worker. False: call.response is the answer (404, 405,
  // 401, 403, 415, 429).
  bool Admit(RouterCall& call) const;
  // Runs the route's handler (Admit returned true); an exception is a 500. True: the
  // answer is in call.response (Complete it; when the handler set
  // call.response.call_again_after, Run it again after that delay). False: the handler
  // answers later, and call.resume is called once it has (Complete it then).
  bool Run(RouterCall& call) const;
  // On the event loop, after Admit returned true and call.resume is set: the route's
  // LoopRouteHandler, when it has one. kNeedsWorker: Run the call on a worker as usual
  // (nothing was done); else as Run's true (kAnswered) or false (kAnswersLater).
  enum class LoopResult { kNeedsWorker, kAnswered, kAnswersLater };
  LoopResult RunOnLoop(RouterCall& call) const;
  // On the connection, before Finish: fills call.response from an answer given later.
  void Complete(RouterCall& call) const;
  // Once per call, its answer final: frees its slot, counts and logs it. Also for a
  // request the HTTP stack answered itself (413, 431, 400, ...), never admitted. The log
  // line is held by the calling thread until its FlushLog (or its end, or 16 KiB of lines).
  void Finish(RouterCall& call) const;
  // Whether this thread holds log lines not yet written; writes them to stderr. An event
  // loop that finishes a call while it holds none posts a FlushLog to itself, which runs
  // after the other handlers that are ready: one write per loop turn.
  static bool HoldsLog();
  static void FlushLog();

  const std::vector<RouteInfo>& routes() const { return routes_; }

 private:
  void Add(const std::string& method, const std::string& path_template, std::optional<Role> role,
           RouteHandler handler, LoopRouteHandler on_loop);
  // Runs `handler` on `call` (Run's and RunOnLoop's common part); nullopt when it
  // declined (returned false), else whether the answer is ready now.
  std::optional<bool> Invoke(RouterCall& call, const LoopRouteHandler& handler) const;
  // nullopt after writing the 401/403 problem.
  std::optional<Principal> Authenticate(const std::optional<Role>& role, const HttpRequest& request,
                                        HttpResponse& response) const;
  // Writes 404, or 405 with Allow when the path exists under another method.
  void WriteRouteNotFound(const HttpRequest& request, HttpResponse& response) const;

  const ServerOptions& options_;
  const ApiKeys* api_keys_;
  Metrics& metrics_;
  std::vector<RouteInfo> routes_;
  // Parallel to routes_: each template split at '/', a "{name}" segment a parameter
  // (one or more bytes other than '/'), every other segment literal.
  std::vector<std::vector<std::string>> route_segments_;
  std::vector<std::optional<Role>> route_roles_;
  std::vector<RouteHandler> route_handlers_;
  std::vector<LoopRouteHandler> route_loop_handlers_;  // null: the route runs on workers only
};

}  // namespace ledger::server

#endif  // LEDGER_SERVER_ROUTER_H_
