// key show KEY: what a key did, within its TTL: its committed record and the transaction
// it committed, in the key space and scope a submit would claim it in (--key-namespace,
// --tenant, --actor, with submit's defaults).
#include <iostream>
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "cli/commands.h"
#include "cli/output.h"
#include "ledger/json.h"
#include "ledger/ledger.h"

namespace ledger::cli {
namespace {

struct KeyShowArguments {
  std::string key;
  std::string key_namespace = std::string(kDefaultKeyNamespace);
  Scope scope;
};

ExitCode RunKeyShow(const GlobalOptions& global, const KeyShowArguments& arguments) {
  const KeyIdentity identity{arguments.key_namespace, arguments.scope, arguments.key};
  // Bad input is refused before the database is opened.
  for (absl::Status valid : {ValidateKey(identity.key), ValidateScope(identity.scope),
                             ValidateNamespace(identity.key_namespace)}) {
    if (!valid.ok()) return ReportError(valid);
  }
  absl::StatusOr<std::unique_ptr<Ledger>> ledger = OpenLedger(global);
  if (!ledger.ok()) return ReportError(ledger.status());
  absl::StatusOr<KeyLookup> found = (*ledger)->LookUpKey(identity);
  if (!found.ok()) return ReportError(found.status());
  PrintJson({{"key", KeyRecordToJson(found->record)},
             {"transaction", TransactionToJson(found->transaction)}});
  return ExitCode::kOk;
}

}  // namespace

void AddKeyCommands(CLI::App& app, const GlobalOptions& global, CommandSelection& selection) {
  CLI::App* key = app.add_subcommand("key", "Look up idempotency keys");
  key->require_subcommand(1);
  auto arguments = std::make_shared<KeyShowArguments>();
  CLI::App* show = key->add_subcommand(
      "show", "Print a key's record and the transaction it committed, as JSON (within its TTL)");
  show->add_option("key", arguments->key, "The idempotency key, as given to submit")->required();
  show->add_option("--key-namespace", arguments->key_namespace,
                   "The key space it was submitted in")
      ->capture_default_str();
  show->add_option("--tenant", arguments->scope.tenant, "Scope: tenant")->capture_default_str();
  show->add_option("--actor", arguments->scope.actor, "Scope: actor")->capture_default_str();
  show->callback([&global, &selection, arguments] {
    selection.Select([&global, arguments] { return RunKeyShow(global, *arguments); });
  });
}

}  // namespace ledger::cli
