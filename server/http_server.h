// The HTTP/1.1 front end of `ledger serve` (issue 28): Boost.Beast on Asio, event loops
// (one io_context and one thread each, --loop-threads of them, server/server.h
// DefaultLoopThreads; a connection stays on the loop that accepted it) that read, parse
// and write the connections, and a bounded pool of worker threads that runs the route
// handlers (which may block on the database; a submit is handed to the group committer
// instead, and answered when its shared transaction ends).
//
//   LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<HttpServer> http,
//                           HttpServer::Bind("127.0.0.1", 0, options, router, LogEvent));
//   std::thread stopper([&] { WaitForSignal(); http->Stop(); });
//   http->Run();  // returns once stopped and drained
//
// What holds whatever a client does (docs/http.md "Limits"):
//   - one deadline per request, --read-timeout, from when the server starts reading it
//     (idle keep-alive time included) to its last body byte; past it the connection is
//     closed. Writing a response has --read-timeout too.
//   - the request line and headers together are capped at --header-max (431), the body
//     at --body-max (413), chunked bodies included, both before the bytes are buffered.
//     A POST with neither Content-Length nor Transfer-Encoding gets 411. Requests the
//     parser cannot read get 400 malformed_request. Each of these closes the connection.
//   - at most --connections-max connections; one more is answered 503 and closed.
//   - requests of one connection are read one at a time: pipelined requests are
//     answered in order, each handled once. Keep-alive as HTTP/1.1 and HTTP/1.0 say;
//     `Expect: 100-continue` is answered before the body is read.
//   - handlers run on --threads workers; a handler that is waiting (a long poll) asks to
//     be called again later (HttpResponse::CallAgainAfter) and holds no worker meanwhile.
//     How many requests are admitted at once is the Router's in-flight limit (429).
//
// Thread-safe: Stop may be called from any thread; Run from one.
#ifndef LEDGER_SERVER_HTTP_SERVER_H_
#define LEDGER_SERVER_HTTP_SERVER_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/router.h"
#include "server/server.h"

namespace ledger::server {

class HttpServer {
 public:
  // Receives the members of one JSON log line (`"event":"...",...`).
  using Logger = std::function<void(const std::string& json_members)>;

  // Binds and listens on host:port (0: a free port). TLS when the options name a
  // certificate and a key. `options`, `router` and `log` must outlive the server.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Bind(const std::string& host, int port,
                                                          const ServerOptions& options,
                                                          const Router& router, Logger log);
  virtual ~HttpServer() = default;

  virtual int port() const = 0;
  // Serves until Stop; returns once every connection is closed and every handler done.
  virtual void Run() = 0;
  // Stops accepting and closes the connections that have no request being handled; a
  // request being handled (a long poll: called again at once) is answered, with
  // Connection: close. Any thread; more than once is harmless.
  virtual void Stop() = 0;
};

}  // namespace ledger::server

#endif  // LEDGER_SERVER_HTTP_SERVER_H_
