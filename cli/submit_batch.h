// `ledger submit --batch FILE`: many operations from JSON lines, for imports and
// scripts. Each line is {"key": "...", "operation": {...}} (the operation as `submit
// --json` takes it); blank lines are skipped. Every line is checked before the database
// is opened, so one bad line (exit 2, named by its line number) writes nothing.
//
// The lines go through Ledger::SubmitBatch in chunks of kBatchFileChunk (each chunk one
// database transaction), or all in one with --atomic (then at most kBatchItemsMax
// lines, all committed or none); with --dry-run, all in one dry run that writes nothing.
// Prints one JSON line per input line, in order:
// {"line": N, "key": K, ...the outcome, or "error" and "kind"}. Exits 0 when every line
// committed or replayed, else with the exit code of the first line that did not.
//
// Not thread-safe: used by main's thread.
#ifndef LEDGER_CLI_SUBMIT_BATCH_H_
#define LEDGER_CLI_SUBMIT_BATCH_H_

#include <cstddef>
#include <string>

#include "cli/cli_context.h"
#include "ledger/ledger.h"

namespace ledger::cli {

inline constexpr size_t kBatchFileChunk = 1000;

struct BatchFileOptions {
  std::string path;  // "-": stdin
  bool atomic = false;
  // --dry-run (also of a single submit): every line in ONE Ledger::DryRunBatch, so each
  // sees the lines before it as the real run would; at most kBatchItemsMax lines.
  bool dry_run = false;
};

// `request_template` carries what applies to every line (scope, namespace, ttl, wait,
// replay policy); each line gives its key and operation.
ExitCode RunSubmitBatchFile(const GlobalOptions& global, const SubmitRequest& request_template,
                            const BatchFileOptions& options);

}  // namespace ledger::cli

#endif  // LEDGER_CLI_SUBMIT_BATCH_H_
