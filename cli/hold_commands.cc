// holds list / show / expire: the reservations of two-phase transfers (ledger/hold.h).
// Holds are placed, captured and voided with `submit --kind hold|capture|void`.
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "base/status.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "ledger/amount.h"
#include "ledger/json.h"
#include "ledger/outcome.h"

namespace ledger::cli {
namespace {

struct HoldListArguments {
  std::string account_id;  // "": every account's holds
  std::string after_id;
  int64_t limit = 100;
  bool json = false;
  std::string status;  // --status: pending, captured, voided, expired; "": every status
};

struct HoldShowArguments {
  std::string id;
};


void PrintHoldTable(const std::vector<Hold>& holds, const std::map<std::string, int>& scales) {
  TextTable table({"hold", "status", "from", "to", "asset", "amount", "expires_at", "settled_by"},
                  {false, false, false, false, false, true, false, false});
  for (const Hold& hold : holds) {
    const HoldTerms& terms = hold.terms;
    table.AddRow({hold.id, std::string(HoldStatusName(hold.status)), terms.from, terms.to,
                  terms.asset, FormatMajorUnits(terms.amount, ScaleOf(scales, terms.asset)),
                  terms.expires_at.has_value() ? FormatTimestamp(*terms.expires_at) : "-",
                  hold.settled_by.value_or("-")});
  }
  table.Print(std::cout);
}

ExitCode RunHoldList(const GlobalOptions& global, const HoldListArguments& arguments) {
  if (!arguments.account_id.empty()) {
    if (absl::Status valid = ValidateAccountId(arguments.account_id); !valid.ok()) {
      return ReportError(valid);
    }
  }
  std::optional<HoldStatus> status;
  if (!arguments.status.empty()) {
    absl::StatusOr<HoldStatus> parsed = ParseHoldStatus(arguments.status);
    if (!parsed.ok()) {
      return ReportError(absl::InvalidArgumentError(
          "--status must be pending, captured, voided or expired, not \"" + arguments.status + "\""));
    }
    status = *parsed;
  }
  absl::StatusOr<std::unique_ptr<Ledger>> ledger = OpenLedger(global);
  if (!ledger.ok()) return ReportError(ledger.status());
  absl::StatusOr<std::vector<Hold>> holds =
      (*ledger)->ListHolds(arguments.account_id, arguments.after_id, arguments.limit, status);
  if (!holds.ok()) return ReportError(holds.status());
  if (arguments.json) {
    for (const Hold& hold : *holds) PrintJsonLine(HoldToJson(hold));
  } else {
    absl::StatusOr<std::map<std::string, int>> scales = ScalesByAsset(**ledger);
    if (!scales.ok()) return ReportError(scales.status());
    PrintHoldTable(*holds, *scales);
  }
  // A full page may have a successor: tell the reader how to ask for it.
  if (static_cast<int64_t>(holds->size()) == arguments.limit) {
    (arguments.json ? std::cerr : std::cout) << "next: --after " << holds->back().id << "\n";
  }
  return ExitCode::kOk;
}

ExitCode RunHoldShow(const GlobalOptions& global, const HoldShowArguments& arguments) {
  if (arguments.id.empty()) {
    return ReportError(absl::InvalidArgumentError("hold id must not be empty"));
  }
  absl::StatusOr<std::unique_ptr<Ledger>> ledger = OpenLedger(global);
  if (!ledger.ok()) return ReportError(ledger.status());
  absl::StatusOr<Hold> hold = (*ledger)->GetHold(arguments.id);
  if (!hold.ok()) return ReportError(hold.status());
  PrintJson(HoldToJson(*hold));
  return ExitCode::kOk;
}

ExitCode RunHoldExpire(const GlobalOptions& global) {
  absl::StatusOr<std::unique_ptr<Ledger>> ledger = OpenLedger(global);
  if (!ledger.ok()) return ReportError(ledger.status());
  absl::StatusOr<int64_t> expired = (*ledger)->ExpireHolds();
  if (!expired.ok()) return ReportError(expired.status());
  PrintJson({{"expired_holds", *expired}});
  return ExitCode::kOk;
}

void AddHoldList(CLI::App& holds, const GlobalOptions& global, CommandSelection& selection) {
  auto arguments = std::make_shared<HoldListArguments>();
  CLI::App* list = holds.add_subcommand(
      "list", "List the holds from or to an account (every hold without one), ordered by id");
  list->add_option("account", arguments->account_id, "Account id (omit for every account)");
  list->add_option("--after", arguments->after_id, "Start after this hold id (the cursor)");
  list->add_option("--limit", arguments->limit, "Holds per page")
      ->check(CLI::Range(int64_t{1}, kPageLimitMax))
      ->capture_default_str();
  list->add_flag("--json", arguments->json, "JSON lines instead of a table");
  list->add_option("--status", arguments->status,
                   "Only holds with this status as of now: pending, captured, voided, expired");
  list->callback([&global, &selection, arguments] {
    selection.Select([&global, arguments] { return RunHoldList(global, *arguments); });
  });
}

void AddHoldShow(CLI::App& holds, const GlobalOptions& global, CommandSelection& selection) {
  auto arguments = std::make_shared<HoldShowArguments>();
  CLI::App* show = holds.add_subcommand("show", "Print a hold and its status as JSON");
  show->add_option("id", arguments->id, "Hold id (the id of the hold's transaction)")->required();
  show->callback([&global, &selection, arguments] {
    selection.Select([&global, arguments] { return RunHoldShow(global, *arguments); });
  });
}

}  // namespace

void AddHoldCommands(CLI::App& app, const GlobalOptions& global, CommandSelection& selection) {
  CLI::App* holds = app.add_subcommand(
      "holds", "List and show holds (two-phase transfers); record the expiry of lapsed ones");
  holds->require_subcommand(1);
  AddHoldList(*holds, global, selection);
  AddHoldShow(*holds, global, selection);
  CLI::App* expire = holds->add_subcommand(
      "expire",
      "Record the expiry of every hold past its expires_at and release it (safe to run\n"
      "from several processes at once: each hold expires once); prints how many expired");
  expire->callback(
      [&global, &selection] { selection.Select([&global] { return RunHoldExpire(global); }); });
}

}  // namespace ledger::cli
