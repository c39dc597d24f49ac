#include "server/server.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status.h"
#include "engines/common/database_url.h"
#include "engines/open_engine.h"
#include "ledger/ledger.h"
#include "server/api.h"
#include "server/api_keys.h"
#include "server/hold_sweeper.h"
#include "server/http_server.h"
#include "server/problem.h"
#include "server/metrics.h"
#include "server/router.h"
#include "server/tenant_ledgers.h"

namespace ledger::server {
namespace {

struct ListenAddress {
  std::string host;
  int port = 0;
};

absl::StatusOr<ListenAddress> ParseListenAddress(const std::string& listen) {
  size_t colon = listen.rfind(':');
  int port = -1;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(absl::string_view(listen).substr(colon + 1), &port) || port < 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--listen \"", listen, "\" must be HOST:PORT (e.g. 127.0.0.1:8080)"));
  }
  std::string host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return ListenAddress{host, port};
}

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

// The keys from the file or the environment variable; nullopt when neither is given.
absl::StatusOr<std::optional<ApiKeys>> LoadApiKeys(const ServerOptions& options) {
  if (!options.api_keys_file.empty() && !options.api_keys_environment_variable.empty()) {
    return absl::InvalidArgumentError("give --api-keys-file or --api-keys-env, not both");
  }
  std::string text;
  if (!options.api_keys_file.empty()) {
    std::ifstream file(options.api_keys_file, std::ios::binary);
    if (!file) return absl::InvalidArgumentError("cannot read the API keys file " + options.api_keys_file);
    std::stringstream contents;
    contents << file.rdbuf();
    text = contents.str();
  } else if (!options.api_keys_environment_variable.empty()) {
    const char* value = std::getenv(options.api_keys_environment_variable.c_str());
    if (value == nullptr) {
      return absl::InvalidArgumentError("the environment variable " +
                                        options.api_keys_environment_variable + " is not set");
    }
    text = value;
  } else {
    return std::optional<ApiKeys>();
  }
  LEDGER_ASSIGN_OR_RETURN(ApiKeys keys, ApiKeys::Parse(text));
  return std::optional<ApiKeys>(std::move(keys));
}

void LogEvent(const std::string& json_members) {
  std::string line = absl::StrCat(
      "{\"time\":\"", absl::FormatTime(absl::RFC3339_sec, absl::Now(), absl::UTCTimeZone()), "\",",
      json_members, "}\n");
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

// Waits for SIGTERM/SIGINT (blocked in every thread, see Serve) until `done`; on one,
// sets `stopping` and stops the listener; the grace watchdog bounds what follows.
void WatchSignals(HttpServer& http, std::atomic<bool>& stopping, const std::atomic<bool>& done,
                  absl::Duration grace) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  const timespec poll_interval{0, 100 * 1000 * 1000};
  while (!done.load()) {
    int signal_number = sigtimedwait(&signals, nullptr, &poll_interval);
    if (signal_number < 0) continue;
    stopping.store(true);
    LogEvent(absl::StrCat("\"event\":\"stopping\",\"signal\":\"",
                          signal_number == SIGTERM ? "SIGTERM" : "SIGINT",
                          "\",\"grace_seconds\":", absl::ToInt64Seconds(grace)));
    http.Stop();
    std::thread([grace] {
      absl::SleepFor(grace);
      LogEvent("\"event\":\"grace_exceeded\",\"exit\":1");
      std::_Exit(1);
    }).detach();
    return;
  }
}

}  // namespace

int DefaultLoopThreads(std::string_view engine_name, unsigned cores) {
  const int cores_used = static_cast<int>(std::clamp(cores, 1u, 4u));
  if (engine_name == "sqlite") return std::max(1, cores_used - 1);  // its one writer's core
  return cores_used;
}

absl::Status Serve(const ServerOptions& given_options) {
  // What the routes and the HTTP server read, with the defaults derived here filled in.
  ServerOptions options = given_options;
  // Block the stop signals before any thread starts, so only WatchSignals receives them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a client gone mid-response is a failed write, not a crash

  LEDGER_ASSIGN_OR_RETURN(ListenAddress address, ParseListenAddress(options.listen));
  LEDGER_ASSIGN_OR_RETURN(std::optional<ApiKeys> api_keys, LoadApiKeys(options));
  if (!api_keys.has_value() && !IsLoopback(address.host)) {
    return absl::FailedPreconditionError(
        "refusing to listen on " + address.host +
        " without API keys: give --api-keys-file or --api-keys-env (or listen on 127.0.0.1)");
  }
  if (options.worker_threads < 1 || options.in_flight_max < 1) {
    return absl::InvalidArgumentError("--threads and --in-flight-max must be at least 1");
  }
  if (options.loop_threads < 0 || options.loop_threads > kLoopThreadsMax) {
    return absl::InvalidArgumentError(
        absl::StrCat("--loop-threads must be 0 (derived from the engine and the cores) to ", kLoopThreadsMax));
  }
  if (options.hold_sweep_interval < absl::ZeroDuration() ||
      options.hold_sweep_interval != absl::Seconds(absl::ToInt64Seconds(options.hold_sweep_interval))) {
    return absl::InvalidArgumentError("--hold-sweep-interval must be whole seconds, 0 or more");
  }
  HidePasswordOf(options.database_url);  // in every problem detail and log line
  if (!options.read_database_url.empty()) HidePasswordOf(options.read_database_url);
  LedgerOptions ledger_options;
  ledger_options.group_commit = {.enabled = options.group_commit,
                                 .batch_items_max = options.group_commit_batch_items_max};
  // A connection for each worker, and for each shared transaction the group committer's
  // threads run: a submit waiting there never takes a worker's connection.
  OpenEngineOptions engine_options{
      .pool_size = options.worker_threads +
                   (options.group_commit ? ledger_options.group_commit.transactions_in_flight_max : 0)};
  absl::StatusOr<std::unique_ptr<Engine>> engine = OpenEngine(options.database_url, engine_options);
  if (!engine.ok()) return Annotate(engine.status(), "opening the database");
  LedgerOptions default_ledger_options = ledger_options;
  if (!options.read_database_url.empty()) {
    absl::StatusOr<std::unique_ptr<Engine>> reads =
        OpenReadEngine(options.read_database_url, engine_options);
    if (!reads.ok()) return Annotate(reads.status(), "opening the read database (--read-db)");
    default_ledger_options.read_engine = *std::move(reads);
  }
  absl::StatusOr<Ledger> opened =
      Ledger::Open(std::shared_ptr<Engine>(*std::move(engine)), std::move(default_ledger_options));
  if (!opened.ok()) return Annotate(opened.status(), "--group-commit-max");
  Ledger& ledger = *opened;
  if (options.loop_threads == 0) {
    options.loop_threads = DefaultLoopThreads(ledger.engine_name(), std::thread::hardware_concurrency());
  }
  Metrics metrics(options.worker_threads, options.in_flight_max,
                  options.group_commit ? std::optional<size_t>(options.group_commit_batch_items_max)
                                       : std::nullopt,
                  options.hold_sweep_interval);
  // Every other tenant of the keys file: a ledger of its own, opened on first use.
  absl::StatusOr<std::unique_ptr<TenantLedgers>> tenants = TenantLedgers::Create(
      ledger, api_keys.has_value() ? api_keys->tenants() : std::set<std::string>{},
      {.database_url = options.database_url, .read_database_url = options.read_database_url,
       .engine = engine_options, .ledger = ledger_options,
       .hold_sweep_interval = options.hold_sweep_interval},
      metrics, LogEvent);
  if (!tenants.ok()) return Annotate(tenants.status(), "the API keys' tenants");

  std::atomic<bool> stopping{false};
  Router router(options, api_keys.has_value() ? &*api_keys : nullptr, metrics);
  ApiContext api{ledger, options, metrics, stopping, tenants->get()};
  AddHealthRoutes(router, api);
  AddResourceRoutes(router, api);
  AddOperationRoutes(router, api);
  AddHoldRoutes(router, api);
  AddListingRoutes(router, api);
  LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<HttpServer> http,
                          HttpServer::Bind(address.host, address.port, options, router, LogEvent));
  int port = http->port();
  LogEvent(absl::StrCat(
      "\"event\":\"listening\",\"scheme\":\"",
      options.tls_certificate_file.empty() ? "http" : "https", "\",\"host\":\"", address.host, "\",\"port\":", port, ",\"engine\":\"",
      View(ledger.engine_name()), "\",\"threads\":", options.worker_threads, ",\"loop_threads\":", options.loop_threads, ",\"connections_max\":", options.connections_max,
      ",\"read_engine\":", ledger.has_read_engine() ? "true" : "false",
      ",\"group_commit\":", options.group_commit ? "true" : "false", ",\"group_commit_max\":",
      options.group_commit_batch_items_max, ",\"hold_sweep_interval_seconds\":",
      absl::ToInt64Seconds(options.hold_sweep_interval), ",\"auth\":\"",
      api_keys.has_value() ? absl::StrCat(api_keys->size(), " API keys")
                           : std::string("none: development mode, loopback only, tenant default"),
      "\""));

  // Started once the server listens, so a refused bind never sweeps; its thread inherits
  // the blocked stop signals.
  HoldSweeper sweeper(ledger, options.hold_sweep_interval, metrics, LogEvent);
  std::atomic<bool> done{false};
  std::thread signal_watcher(WatchSignals, std::ref(*http), std::ref(stopping), std::cref(done),
                             options.shutdown_grace);
  // Returns after Stop(), once every connection is closed and every handler has finished.
  http->Run();
  done.store(true);
  signal_watcher.join();
  sweeper.Stop();  // wakes it at once; only a sweep already running is waited for
  (*tenants)->StopSweepers();
  LogEvent("\"event\":\"stopped\"");
  return absl::OkStatus();
}

}  // namespace ledger::server
