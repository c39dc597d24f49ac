// submit: one operation under an idempotency key, from a file, --json, stdin or flags.
//
// Everything the command can check without the database (the JSON, the key, the
// scope, the claim options, the operation's own rules) is checked before the database
// is opened, so bad input writes nothing at all.
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/status.h"
#include "idempotency/fingerprint.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/submit_batch.h"
#include "engines/common/database_url.h"
#include "ledger/json.h"
#include "ledger/operation.h"

namespace ledger::cli {
namespace {

// The operation given as flags instead of JSON; empty means "not given".
struct OperationFlags {
  std::string kind;
  std::string from;
  std::string to;
  std::string asset;
  std::string amount;
  std::string fee_to;
  std::string fee_amount;
  std::string transaction_id;
  std::string hold_id;          // capture, void
  std::string expires_at;       // hold: RFC 3339
  std::string timeout_seconds;  // hold: whole seconds from the commit
  std::vector<std::string> postings;  // ACCOUNT:ASSET:AMOUNT
  std::string metadata;
};

struct SubmitArguments {
  std::string key;
  Scope scope;
  std::string key_namespace;          // --key-namespace
  bool key_namespace_given = false;   // given, even empty: then it is checked
  std::string ttl = "24h";
  std::string wait = "10s";
  bool fail_fast = false;
  std::string replay = "return";
  std::string file;
  std::string json;
  OperationFlags flags;
  BatchFileOptions batch;   // --batch FILE, --atomic, --dry-run
  bool key_given = false;
};

absl::StatusOr<std::string> ReadAll(std::istream& in, const std::string& source) {
  std::string text;
  // One byte past the limit is enough for ParseOperationJson to report the size.
  text.resize(kOperationJsonBytesMax + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return absl::InvalidArgumentError(absl::StrCat("cannot read ", source));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

absl::StatusOr<std::string> ReadOperationText(const SubmitArguments& arguments) {
  if (!arguments.json.empty()) return arguments.json;
  if (arguments.file.empty() || arguments.file == "-") {
    if (isatty(STDIN_FILENO)) std::cerr << "ledger: reading the operation JSON from stdin\n";
    return ReadAll(std::cin, "stdin");
  }
  std::ifstream file(arguments.file, std::ios::binary);
  if (!file) {
    return absl::InvalidArgumentError(absl::StrCat("cannot open ", arguments.file));
  }
  return ReadAll(file, arguments.file);
}

// ACCOUNT:ASSET:AMOUNT, split at the last two colons (account ids may contain ':').
absl::StatusOr<nlohmann::json> ParsePostingFlag(const std::string& text) {
  size_t amount_colon = text.rfind(':');
  size_t asset_colon = amount_colon == std::string::npos || amount_colon == 0
                           ? std::string::npos
                           : text.rfind(':', amount_colon - 1);
  if (asset_colon == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("--posting \"", text, "\" must be ACCOUNT:ASSET:AMOUNT"));
  }
  return nlohmann::json{{"account", text.substr(0, asset_colon)},
                        {"asset", text.substr(asset_colon + 1, amount_colon - asset_colon - 1)},
                        {"amount", text.substr(amount_colon + 1)}};
}

// Builds the JSON form from the flags, so flags and JSON go through the same strict
// parser: a flag that does not belong to the kind is an "unknown field" error.
absl::StatusOr<Operation> OperationFromFlags(const OperationFlags& flags) {
  nlohmann::json json = {{"kind", flags.kind}};
  auto set_if_given = [&json](const char* name, const std::string& value) {
    if (!value.empty()) json[name] = value;
  };
  set_if_given("from", flags.from);
  set_if_given("to", flags.to);
  set_if_given("asset", flags.asset);
  set_if_given("amount", flags.amount);
  set_if_given("transaction_id", flags.transaction_id);
  set_if_given("hold_id", flags.hold_id);
  set_if_given("expires_at", flags.expires_at);
  if (!flags.timeout_seconds.empty()) {
    int64_t seconds = 0;
    if (!absl::SimpleAtoi(flags.timeout_seconds, &seconds)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--timeout-seconds \"", flags.timeout_seconds, "\" is not a whole number of seconds"));
    }
    json["timeout_seconds"] = seconds;
  }
  if (!flags.fee_to.empty() || !flags.fee_amount.empty()) {
    json["fee"] = nlohmann::json::object();
    if (!flags.fee_to.empty()) json["fee"]["to"] = flags.fee_to;
    if (!flags.fee_amount.empty()) json["fee"]["amount"] = flags.fee_amount;
  }
  if (!flags.postings.empty()) {
    json["postings"] = nlohmann::json::array();
    for (const std::string& posting : flags.postings) {
      LEDGER_ASSIGN_OR_RETURN(nlohmann::json parsed, ParsePostingFlag(posting));
      json["postings"].push_back(std::move(parsed));
    }
  }
  if (!flags.metadata.empty()) {
    absl::StatusOr<nlohmann::json> metadata = ParseJsonStrict(flags.metadata);
    if (!metadata.ok()) return Annotate(metadata.status(), "--metadata");
    json["metadata"] = *std::move(metadata);
  }
  return OperationFromJson(json);
}

absl::StatusOr<Operation> ReadOperation(const SubmitArguments& arguments) {
  if (!arguments.flags.kind.empty()) return OperationFromFlags(arguments.flags);
  LEDGER_ASSIGN_OR_RETURN(std::string text, ReadOperationText(arguments));
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    return absl::InvalidArgumentError(
        "no operation given: use --file, --json, --kind with flags, or pipe JSON to stdin");
  }
  return ParseOperationJson(text);
}

absl::StatusOr<absl::Duration> ParseDurationFlag(const std::string& flag, const std::string& text) {
  absl::Duration duration;
  if (!absl::ParseDuration(text, &duration)) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " \"", text, "\" is not a duration (e.g. 24h, 90m, 1.5s)"));
  }
  return duration;
}

// What applies to every operation of the command: scope, key space, claim options.
absl::StatusOr<SubmitRequest> RequestTemplate(const SubmitArguments& arguments) {
  SubmitRequest request;
  request.scope = arguments.scope;
  LEDGER_ASSIGN_OR_RETURN(request.claim.ttl, ParseDurationFlag("--ttl", arguments.ttl));
  LEDGER_ASSIGN_OR_RETURN(request.claim.wait.wait_max, ParseDurationFlag("--wait", arguments.wait));
  if (arguments.fail_fast) request.claim.wait = WaitPolicy::FailFast();
  request.claim.replay = arguments.replay == "error" ? ReplayPolicy::kError : ReplayPolicy::kReturn;
  LEDGER_RETURN_IF_ERROR(ValidateScope(request.scope));
  if (arguments.key_namespace_given) {  // not given: the ledger's one default space
    request.key_namespace = arguments.key_namespace;
    LEDGER_RETURN_IF_ERROR(Annotate(ValidateNamespace(request.key_namespace), "--key-namespace"));
  }
  LEDGER_RETURN_IF_ERROR(ValidateClaimOptions(request.claim));
  return request;
}

absl::StatusOr<SubmitRequest> BuildRequest(const SubmitArguments& arguments) {
  if (!arguments.key_given) {
    return absl::InvalidArgumentError("--key is required (or --batch FILE, a key per line)");
  }
  LEDGER_ASSIGN_OR_RETURN(SubmitRequest request, RequestTemplate(arguments));
  request.key = arguments.key;
  LEDGER_RETURN_IF_ERROR(ValidateKey(request.key));
  LEDGER_ASSIGN_OR_RETURN(request.operation, ReadOperation(arguments));
  LEDGER_RETURN_IF_ERROR(ValidateOperation(request.operation));
  return request;
}

ExitCode ReportOutcome(const Outcome& reported) {
  Outcome outcome = reported;
  outcome.fault = WithoutHiddenPassword(reported.fault);  // a driver's message may echo the URL
  PrintJson(OutcomeToJson(outcome));
  if (outcome.kind == OutcomeKind::kRejected) {
    std::cerr << "ledger: rejected: " << RejectionReasonName(outcome.reason) << ": "
              << outcome.detail << " (nothing was written; the key stays unused)\n";
  } else if (outcome.kind == OutcomeKind::kFaulted) {
    std::cerr << "ledger: faulted" << (outcome.in_doubt ? " (in doubt)" : "") << ": "
              << outcome.fault.message() << " (resend with the same key: it is safe)\n";
  }
  return ExitCodeForOutcome(outcome);
}

// --dry-run: what the submit would do (DryRunToJson), with the exit code it would have.
ExitCode ReportDryRun(const absl::StatusOr<Outcome>& result) {
  std::optional<nlohmann::json> json = DryRunToJson(result);
  if (!json.has_value()) return ReportSubmitError(result.status(), /*dry_run=*/true);
  if (result.ok() && result->kind == OutcomeKind::kFaulted) {  // a unit never faults an item
    return ReportSubmitError(result->fault, /*dry_run=*/true);
  }
  PrintJson(*json);
  if (!result.ok()) {
    std::cerr << "ledger: dry run: conflict: " << result.status().message()
              << " (nothing was written)\n";
    return ExitCodeForStatus(result.status());
  }
  if (result->kind == OutcomeKind::kRejected) {
    std::cerr << "ledger: dry run: would be rejected: " << RejectionReasonName(result->reason)
              << ": " << result->detail << " (nothing was written)\n";
  }
  return ExitCodeForOutcome(*result);
}

ExitCode RunSubmit(const GlobalOptions& global, const SubmitArguments& arguments) {
  const bool dry_run = arguments.batch.dry_run;
  if (!arguments.batch.path.empty()) {
    absl::StatusOr<SubmitRequest> request_template = RequestTemplate(arguments);
    if (!request_template.ok()) return ReportSubmitError(request_template.status(), dry_run);
    return RunSubmitBatchFile(global, *request_template, arguments.batch);
  }
  absl::StatusOr<SubmitRequest> request = BuildRequest(arguments);
  if (!request.ok()) return ReportSubmitError(request.status(), dry_run);
  absl::StatusOr<std::unique_ptr<Ledger>> ledger = OpenLedger(global);
  if (!ledger.ok()) return ReportSubmitError(ledger.status(), dry_run);
  if (dry_run) return ReportDryRun((*ledger)->DryRun(*request));
  absl::StatusOr<Outcome> outcome = (*ledger)->Submit(*request);
  if (!outcome.ok()) return ReportSubmitError(outcome.status());
  return ReportOutcome(*outcome);
}

void AddRequestOptions(CLI::App& submit, SubmitArguments& arguments) {
  submit.add_option("--key", arguments.key, "Idempotency key: 1..255 printable ASCII bytes");
  submit.add_option("--tenant", arguments.scope.tenant, "Scope: tenant")->capture_default_str();
  submit.add_option("--actor", arguments.scope.actor, "Scope: actor")->capture_default_str();
  submit.add_option("--key-namespace", arguments.key_namespace,
                    "A key space of its own (1..64 printable ASCII bytes, no '|' or '/');\n"
                    "default: the one space every entry point shares (\"operations\"),\n"
                    "so the same key over HTTP or from the library is the same operation");
  submit
      .add_option("--ttl", arguments.ttl,
                  "How long the key is remembered (units h, m, s: 24h, 90m)")
      ->capture_default_str();
  CLI::Option* wait = submit
                          .add_option("--wait", arguments.wait,
                                      "How long to wait for a running attempt with the same key")
                          ->capture_default_str();
  submit
      .add_flag("--fail-fast", arguments.fail_fast,
                "Do not wait for a running attempt with the same key: exit 5 (in progress)")
      ->excludes(wait);
  submit
      .add_option("--replay", arguments.replay,
                  "A retry of a committed key: return the original (default) or error (exit 9)")
      ->check(CLI::IsMember({"return", "error"}))
      ->capture_default_str();
}

void AddOperationOptions(CLI::App& submit, SubmitArguments& arguments) {
  OperationFlags& flags = arguments.flags;
  CLI::Option* file = submit.add_option("--file", arguments.file,
                                        "Read the operation JSON from a file ('-': stdin)");
  CLI::Option* json =
      submit.add_option("--json", arguments.json, "The operation JSON inline")->excludes(file);
  CLI::Option* kind =
      submit
          .add_option(
              "--kind", flags.kind,
              "Build the operation from flags: top_up, spend, transfer, payout, reverse, post,\n"
              "hold, capture, void")
          ->check(CLI::IsMember({"top_up", "spend", "transfer", "payout", "reverse", "post",
                                 "hold", "capture", "void"}))
          ->excludes(file)
          ->excludes(json)
          ->group("Operation flags");
  auto flag = [&](const char* name, std::string& target, const char* description) {
    return submit.add_option(name, target, description)->needs(kind)->group("Operation flags");
  };
  flag("--from", flags.from, "Account debited");
  flag("--to", flags.to, "Account credited");
  flag("--asset", flags.asset, "Asset code");
  flag("--amount", flags.amount,
       "Amount in minor units (an integer); capture: the part to capture (default: all)");
  flag("--fee-to", flags.fee_to, "spend: the account receiving the platform fee");
  flag("--fee-amount", flags.fee_amount, "spend: the fee in minor units, out of --amount");
  flag("--transaction-id", flags.transaction_id, "reverse: the transaction to reverse");
  flag("--hold-id", flags.hold_id, "capture, void: the hold (its transaction's id)");
  CLI::Option* expires_at =
      flag("--expires-at", flags.expires_at,
           "hold: when the reservation lapses, RFC 3339 (2026-12-01T12:00:00Z); default: never");
  flag("--timeout-seconds", flags.timeout_seconds,
       "hold: the reservation lapses this many seconds after it commits")
      ->excludes(expires_at);
  flag("--metadata", flags.metadata, "A JSON object stored with the transaction");
  submit.add_option("--posting", flags.postings, "post: ACCOUNT:ASSET:AMOUNT, repeat per leg")
      ->needs(kind)
      ->group("Operation flags");
  CLI::Option* batch =
      submit
          .add_option("--batch", arguments.batch.path,
                      "Many operations from JSON lines ('-': stdin), each\n"
                      "{\"key\": \"...\", \"operation\": {...}}; prints one result line per line")
          ->excludes(file)
          ->excludes(json)
          ->excludes(kind)
          ->excludes("--key")
          ->group("Batch");
  submit.add_flag("--atomic", arguments.batch.atomic, "--batch: every line commits, or none")
      ->needs(batch)
      ->group("Batch");
  submit.add_flag("--dry-run", arguments.batch.dry_run,
                  "Decide against the current balances and print what the submit would do,\n"
                  "with its exit code and \"dry_run\": true; writes nothing, key included");
}

}  // namespace

void AddSubmitCommand(CLI::App& app, const GlobalOptions& global, CommandSelection& selection) {
  auto arguments = std::make_shared<SubmitArguments>();
  CLI::App* submit = app.add_subcommand(
      "submit",
      "Submit one operation exactly once under an idempotency key; prints the outcome as JSON.\n"
      "The operation comes from --file, --json, --kind with flags, or stdin when none is given.");
  AddRequestOptions(*submit, *arguments);
  AddOperationOptions(*submit, *arguments);
  submit->footer(
      "Exit codes: 0 committed or duplicate, 2 bad input, 3 rejected, 4 conflict,\n"
      "5 in progress, 6 faulted (resend with the same key), 9 duplicate refused (--replay error).\n"
      "Example: ledger submit --key order-1 --json "
      "'{\"kind\":\"transfer\",\"from\":\"alice\",\"to\":\"bob\",\"asset\":\"USD\",\"amount\":"
      "\"250\"}'\n"
      "Many at once: ledger submit --batch orders.jsonl [--atomic].\n"
      "What it would do, writing nothing: add --dry-run (either form).\n"
      "Holds: ledger submit --key p-1:hold --kind hold --from alice --to bob --asset USD "
      "--amount 250 --timeout-seconds 3600,\n"
      "then ledger submit --key p-1:capture --kind capture --hold-id ID (or --kind void).");
  submit->callback([&global, &selection, arguments, submit] {
    arguments->key_namespace_given = submit->count("--key-namespace") > 0;
    arguments->key_given = submit->count("--key") > 0;
    selection.Select([&global, arguments] { return RunSubmit(global, *arguments); });
  });
}

}  // namespace ledger::cli
