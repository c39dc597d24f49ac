// serve: the ledger as an HTTP JSON service (server/server.h, docs/http.md).
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/time/time.h"
#include "cli/commands.h"
#include "server/server.h"

namespace ledger::cli {
namespace {

struct ServeArguments {
  server::ServerOptions options;
  std::string read_timeout = "10s";
  std::string claim_wait = "5s";
  std::string shutdown_grace = "30s";
  int64_t hold_sweep_interval_seconds = absl::ToInt64Seconds(server::ServerOptions{}.hold_sweep_interval);
};

ExitCode RunServe(const GlobalOptions& global, ServeArguments arguments) {
  server::ServerOptions& options = arguments.options;
  options.database_url = ResolveDatabaseUrl(global);
  options.read_database_url = global.read_database_url;
  struct DurationFlag {
    const char* flag;
    const std::string& text;
    absl::Duration& target;
  };
  for (const DurationFlag& duration :
       {DurationFlag{"--read-timeout", arguments.read_timeout, options.read_timeout},
        DurationFlag{"--claim-wait", arguments.claim_wait, options.claim_wait_default},
        DurationFlag{"--shutdown-grace", arguments.shutdown_grace, options.shutdown_grace}}) {
    if (!absl::ParseDuration(duration.text, &duration.target) || duration.target < absl::ZeroDuration()) {
      return ReportError(absl::InvalidArgumentError(std::string(duration.flag) + " \"" + duration.text +
                                                    "\" is not a duration (e.g. 10s, 500ms)"));
    }
  }
  options.write_timeout = options.read_timeout;
  if (arguments.hold_sweep_interval_seconds < 0) {
    return ReportError(absl::InvalidArgumentError("--hold-sweep-interval must be 0 (off) or more seconds"));
  }
  options.hold_sweep_interval = absl::Seconds(arguments.hold_sweep_interval_seconds);
  absl::Status served = server::Serve(options);
  if (!served.ok()) return ReportError(served);
  return ExitCode::kOk;
}

}  // namespace

void AddServeCommand(CLI::App& app, const GlobalOptions& global, CommandSelection& selection) {
  auto arguments = std::make_shared<ServeArguments>();
  server::ServerOptions& options = arguments->options;
  CLI::App* serve = app.add_subcommand(
      "serve",
      "Serve the ledger over HTTP: JSON under /v1 with the Idempotency-Key contract,\n"
      "/healthz, /readyz, /metrics. Stops gracefully on SIGTERM or SIGINT (docs/http.md).");
  serve->add_option("--listen", options.listen, "HOST:PORT to listen on (port 0: any free port)")
      ->capture_default_str();
  serve->add_option("--api-keys-file", options.api_keys_file,
                    "API keys, one 'SHA256-HEX TENANT ROLE' a line; without keys the server is "
                    "unauthenticated and listens on loopback only");
  serve->add_option("--api-keys-env", options.api_keys_environment_variable,
                    "Name of an environment variable holding the API key lines instead");
  serve->add_option("--tls-cert", options.tls_certificate_file, "Serve HTTPS: the PEM certificate file");
  serve->add_option("--tls-key", options.tls_private_key_file, "Serve HTTPS: the PEM private key file");
  serve->add_option("--threads", options.worker_threads,
                    "Worker threads running handlers (the engine pool gets as many); not tied to connections")
      ->capture_default_str();
  serve->add_option("--loop-threads", options.loop_threads,
                    "Event-loop threads reading and writing the connections (0: one per core up to 4, one "
                    "core left to the writer on SQLite)")
      ->capture_default_str();
  serve->add_option("--in-flight-max", options.in_flight_max,
                    "Requests admitted at once (queued for a worker, running, or in a long poll), else 429")
      ->capture_default_str();
  serve->add_option("--connections-max", options.connections_max, "Client connections open at once, else 503")
      ->capture_default_str();
  serve->add_option("--body-max", options.body_bytes_max, "Request body bytes, else 413")
      ->capture_default_str();
  serve->add_option("--header-max", options.header_bytes_max, "Request header bytes, else 431")
      ->capture_default_str();
  serve->add_option("--read-timeout", arguments->read_timeout, "Deadline for reading one request, headers and body (idle keep-alive time included), and for writing its answer")
      ->capture_default_str();
  serve->add_option("--claim-wait", arguments->claim_wait,
                    "Default wait for a running request with the same key, then 409")
      ->capture_default_str();
  serve->add_option("--shutdown-grace", arguments->shutdown_grace,
                    "After SIGTERM, how long in-flight requests may take before exit 1")
      ->capture_default_str();
  serve->add_flag("--group-commit,!--no-group-commit", options.group_commit,
                  "Concurrent single submits share database transactions; on by default (--group-commit=false "
                  "or --no-group-commit: each its own)")
      ->capture_default_str();
  serve->add_option("--group-commit-max", options.group_commit_batch_items_max,
                    "Most submits one shared transaction takes (1.." + std::to_string(kBatchItemsMax) + ")")
      ->capture_default_str();
  serve->add_option("--hold-sweep-interval", arguments->hold_sweep_interval_seconds,
                    "Seconds between sweeps that record lapsed holds' expiry (0: no sweeper)")
      ->capture_default_str();
  serve->callback([&global, &selection, arguments] {
    selection.Select([&global, arguments] { return RunServe(global, *arguments); });
  });
}

}  // namespace ledger::cli
