// `ledger serve`: the ledger as a JSON service over HTTP (issue 14, docs/http.md).
//
//   ledger::server::ServerOptions options;
//   options.listen = "127.0.0.1:8080";
//   options.database_url = "sqlite:ledger.db";
//   absl::Status status = ledger::server::Serve(options);  // until SIGTERM or SIGINT
//
// Serve opens the engine (engines/open_engine.h), serves /healthz, /readyz, /metrics and
// the /v1 API (an event loop for the connections, server/http_server.h, and a bounded
// worker pool for the handlers), runs the hold sweeper, and logs one JSON line per
// request on stderr (method, route template, status, latency: never a body, a key or a
// header value). On SIGTERM or SIGINT it stops accepting and the sweeper, lets in-flight
// requests finish (bounded by shutdown_grace) and returns OK. The HTTP stack (Boost.Beast)
// stays inside server/.
//
// Not reentrant: one Serve per process (it owns the process's SIGTERM/SIGINT handling).
#ifndef LEDGER_SERVER_SERVER_H_
#define LEDGER_SERVER_SERVER_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "ledger/ledger.h"

namespace ledger::server {

inline constexpr char kListenDefault[] = "127.0.0.1:8080";
inline constexpr int kLoopThreadsMax = 64;

// The event loops `ledger serve` runs when --loop-threads is not given: one per core up
// to four, but one core left to the database on an engine with a single writer (SQLite:
// every commit runs on one committer thread, the serial path, and a loop thread beside it
// on every core takes its CPU; docs/benchmarks.md "Over HTTP"). At least one.
int DefaultLoopThreads(std::string_view engine_name, unsigned cores);

struct ServerOptions {
  std::string listen = kListenDefault;  // HOST:PORT; port 0 picks a free port (logged)
  std::string database_url;             // required: the engine to open
  // Reads off the primary (--read-db, docs/scaling.md): a standby or another Galera node
  // that GET routes read from unless the request says `Consistency: primary`; writes and
  // the reads of a write route stay on database_url. Each tenant's is derived from it as
  // its database_url is. Empty: every read from database_url.
  std::string read_database_url;
  // API keys (docs/http.md "Auth"): a file, or the name of an environment variable
  // holding the same lines. Neither: unauthenticated, one default tenant, loopback only.
  std::string api_keys_file;
  std::string api_keys_environment_variable;
  // TLS: PEM certificate (chain) and private key files, both or neither. Neither: plain HTTP.
  std::string tls_certificate_file;
  std::string tls_private_key_file;
  // Threads that run handlers (each may block on the database); the engine's pool gets
  // as many connections, plus one per group commit transaction in flight (the
  // committer's own threads run those). Independent of how many client connections are
  // open.
  int worker_threads = 32;
  // Event-loop threads (server/http_server.h): each runs one io_context that reads,
  // parses and writes its connections. 0: derived from the engine and the cores
  // (DefaultLoopThreads); else 1 .. kLoopThreadsMax.
  int loop_threads = 0;
  // Requests admitted at once (waiting for a worker, running, waiting in the group
  // committer, or in a long poll); one more gets 429 with Retry-After.
  int in_flight_max = 256;
  int connections_max = 4096;                  // client connections open at once, else 503
  size_t body_bytes_max = 1 << 20;             // else 413 (chunked bodies too)
  size_t header_bytes_max = 16 * 1024;         // request line and headers together, else 431
  // One request, from when the server starts reading it (idle keep-alive time included)
  // to its last body byte; past it the connection is closed.
  absl::Duration read_timeout = absl::Seconds(10);
  absl::Duration write_timeout = absl::Seconds(10);  // writing one response
  absl::Duration claim_wait_default = absl::Seconds(5);  // same key running: wait, then 409
  absl::Duration claim_wait_max = absl::Seconds(30);     // bound on `Prefer: wait=N`
  absl::Duration events_wait_max = absl::Seconds(30);    // bound on GET /v1/events?wait=
  absl::Duration shutdown_grace = absl::Seconds(30);     // in-flight requests after SIGTERM
  // Group commit (ledger/ledger.h GroupCommitOptions): concurrent single submits share
  // database transactions, each request still getting exactly its own answer. On by
  // default; at most this many submits a transaction (1 .. kBatchItemsMax).
  bool group_commit = true;
  size_t group_commit_batch_items_max = GroupCommitOptions{}.batch_items_max;
  // How often the hold sweeper (server/hold_sweeper.h) records lapsed holds' expiry with
  // Ledger::ExpireHolds. Whole seconds, >= 0; zero: no sweeper (expiry is then recorded
  // only by `ledger holds expire`; reads treat lapsed holds as released either way).
  absl::Duration hold_sweep_interval = absl::Seconds(30);
};

// Runs until SIGTERM/SIGINT, then returns OK after a graceful stop. Bad options,
// a refused bind or an unreachable database: an error, before anything is served.
absl::Status Serve(const ServerOptions& options);

}  // namespace ledger::server

#endif  // LEDGER_SERVER_SERVER_H_
