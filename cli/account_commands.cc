// account open / close / show / list, balance, history.
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "base/status.h"
#include "ledger/amount.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "ledger/json.h"

namespace ledger::cli {
namespace {

struct AccountOpenArguments {
  AccountSpec spec;
  bool json = false;
};

struct AccountIdArgument {
  std::string id;
};

struct BalanceArguments {
  std::string id;
  bool json = false;
  std::string as_of;  // --as-of: RFC 3339; empty: now
};

struct AccountListArguments {
  std::string after_id;
  int64_t limit = 100;
  bool json = false;
};

struct HistoryArguments {
  std::string id;
  int64_t after_version = 0;
  int64_t limit = 50;
  bool json = false;
};

ExitCode RunAccountClose(const GlobalOptions& global, const std::string& id) {
  if (absl::Status valid = ValidateAccountId(id); !valid.ok()) return ReportError(valid);
  absl::StatusOr<std::unique_ptr<Ledger>> ledger = OpenLedger(global);
  if (!ledger.ok()) return ReportError(ledger.status());
  if (absl::Status closed = (*ledger)->CloseAccount(id); !closed.ok()) return ReportError(closed);
  absl::StatusOr<Account> account = (*ledger)->GetAccount(id, ReadConsistency::kPrimary);
  if (!account.ok()) return ReportError(account.status());
  PrintJson(AccountToJson(*account));
  return ExitCode::kOk;
}

ExitCode RunAccountShow(const GlobalOptions& global, const std::string& id) {
  if (absl::Status valid = ValidateAccountId(id); !valid.ok()) return ReportError(valid);
  absl::StatusOr<std::unique_ptr<Ledger>> ledger = OpenLedger(global);
  if (!ledger.ok()) return ReportError(ledger.status());
  absl::StatusOr<Account> account = (*ledger)->GetAccount(id);
  if (!account.ok()) return ReportError(account.status());
  PrintJson(AccountToJson(*account));
  return ExitCode::kOk;
}

std::string AccountFlags(const Account& account) {
  std::vector<std::string> flags;
  if (account.allow_negative) flags.push_back("allow_negative");
  if (account.overdraft_limit != 0)
    flags.push_back("overdraft " + FormatAmount(account.overdraft_limit));
  if (account.closed) flags.push_back("closed");
  std::string text;
  for (const std::string& flag : flags) text += (text.empty() ? "" : ",") + flag;
  return text;
}

void PrintAccountTable(const std::vector<Account>& accounts,
                       const std::map<std::string, int>& scales) {
  TextTable table({"account", "asset", "balance", "pending_debits", "pending_credits", "available",
                   "version", "flags"},
                  {false, false, true, true, true, true, true, false});
  for (const Account& account : accounts) {
    int scale = ScaleOf(scales, account.asset);
    table.AddRow({account.id, account.asset, FormatMajorUnits(account.balance, scale),
                  FormatMajorUnits(account.pending_debits, scale),
                  FormatMajorUnits(account.pending_credits, scale),
                  FormatMajorUnits(account.Available(), scale), std::to_string(account.version),
                  AccountFlags(account)});
  }
  table.Print(std::cout);
}

ExitCode RunAccountOpen(const GlobalOptions& global, const AccountOpenArguments& arguments) {
  const AccountSpec& spec = arguments.spec;
  if (absl::Status valid = ValidateAccountSpec(spec); !valid.ok()) return ReportError(valid);
  absl::StatusOr<std::unique_ptr<Ledger>> ledger = OpenLedger(global);
  if (!ledger.ok()) return ReportError(ledger.status());
  absl::StatusOr<Account> account = (*ledger)->OpenAccount(spec);
  if (!account.ok()) return ReportError(account.status());
  if (arguments.json) {
    PrintJson(AccountToJson(*account));
    return ExitCode::kOk;
  }
  absl::StatusOr<std::map<std::string, int>> scales = ScalesByAsset(**ledger);
  if (!scales.ok()) return ReportError(scales.status());
  PrintAccountTable({*account}, *scales);
  return ExitCode::kOk;
}

ExitCode RunAccountList(const GlobalOptions& global, const AccountListArguments& arguments) {
  absl::StatusOr<std::unique_ptr<Ledger>> ledger = OpenLedger(global);
  if (!ledger.ok()) return ReportError(ledger.status());
  // Through the Ledger, not the engine: a lapsed hold no longer counts as pending.
  absl::StatusOr<std::vector<Account>> accounts =
      (*ledger)->ListAccounts(arguments.after_id, arguments.limit);
  if (!accounts.ok()) return ReportError(accounts.status());
  absl::StatusOr<std::map<std::string, int>> scales = ScalesByAsset(**ledger);
  if (!scales.ok()) return ReportError(scales.status());
  if (arguments.json) {
    for (const Account& account : *accounts) PrintJsonLine(AccountToJson(account));
  } else {
    PrintAccountTable(*accounts, *scales);
  }
  // A full page may have a successor: tell the reader how to ask for it.
  if (static_cast<int64_t>(accounts->size()) == arguments.limit) {
    (arguments.json ? std::cerr : std::cout) << "next: --after " << accounts->back().id << "\n";
  }
  return ExitCode::kOk;
}

// The posted balance as of a past instant (Ledger::BalanceAsOf, a binary search of the versions):
// holds keep no history, so no pending amounts, as over HTTP.
ExitCode PrintBalanceAsOf(Ledger& ledger, const Account& account, const Asset& asset,
                          absl::Time as_of, bool json) {
  absl::StatusOr<Amount> balance = ledger.BalanceAsOf(account.id, as_of);
  if (!balance.ok()) return ReportError(balance.status());
  const std::string major = FormatMajorUnits(*balance, asset.scale);
  if (json) {
    PrintJson({{"account", account.id},
               {"asset", asset.code},
               {"scale", asset.scale},
               {"balance", FormatAmount(*balance)},
               {"balance_major", major},
               {"as_of", FormatTimestamp(as_of)}});
  } else {
    std::cout << account.id << ": " << major << " " << asset.code << " ("
              << FormatAmount(*balance) << " minor units) as of " << FormatTimestamp(as_of)
              << "\n";
  }
  return ExitCode::kOk;
}

ExitCode RunBalance(const GlobalOptions& global, const BalanceArguments& arguments) {
  if (absl::Status valid = ValidateAccountId(arguments.id); !valid.ok()) return ReportError(valid);
  std::optional<absl::Time> as_of;
  if (!arguments.as_of.empty()) {
    absl::Time parsed;
    std::string error;
    if (!absl::ParseTime(absl::RFC3339_full, arguments.as_of, &parsed, &error)) {
      return ReportError(absl::InvalidArgumentError(
          "--as-of must be an RFC 3339 time (2026-01-31T23:59:59Z), not \"" + arguments.as_of +
          "\""));
    }
    as_of = parsed;
  }
  absl::StatusOr<std::unique_ptr<Ledger>> ledger = OpenLedger(global);
  if (!ledger.ok()) return ReportError(ledger.status());
  absl::StatusOr<Account> account = (*ledger)->GetAccount(arguments.id);
  if (!account.ok()) return ReportError(account.status());
  absl::StatusOr<Asset> asset = (*ledger)->GetAsset(account->asset);
  if (!asset.ok()) return ReportError(asset.status());
  if (as_of.has_value()) return PrintBalanceAsOf(**ledger, *account, *asset, *as_of, arguments.json);
  std::string major = FormatMajorUnits(account->balance, asset->scale);
  if (arguments.json) {
    PrintJson({{"account", account->id},
               {"asset", asset->code},
               {"scale", asset->scale},
               {"balance", FormatAmount(account->balance)},
               {"balance_major", major},
               {"pending_debits", FormatAmount(account->pending_debits)},
               {"pending_credits", FormatAmount(account->pending_credits)},
               {"available", FormatAmount(account->Available())},
               {"available_major", FormatMajorUnits(account->Available(), asset->scale)},
               {"version", account->version}});
  } else {
    std::cout << account->id << ": " << major << " " << asset->code << " ("
              << FormatAmount(account->balance) << " minor units)\n";
    // Only when holds are pending, so the common case stays one line.
    if (account->pending_debits != 0 || account->pending_credits != 0) {
      std::cout << "  pending debits  " << FormatMajorUnits(account->pending_debits, asset->scale)
                << "\n  pending credits "
                << FormatMajorUnits(account->pending_credits, asset->scale)
                << "\n  available       " << FormatMajorUnits(account->Available(), asset->scale)
                << " " << asset->code << "\n";
    }
  }
  return ExitCode::kOk;
}

void PrintHistoryTable(const std::vector<HistoryEntry>& lines, int scale) {
  TextTable table({"version", "created_at", "transaction", "kind", "counterparties", "asset",
                   "amount", "balance_after", "metadata"},
                  {true, false, false, false, false, false, true, true, false});
  for (const HistoryEntry& line : lines) {
    const Entry& entry = line.entry;
    table.AddRow({std::to_string(entry.account_version), FormatTimestamp(line.created_at),
                  line.transaction_id,
                  line.kind.has_value() ? std::string(OperationKindName(*line.kind)) : "",
                  absl::StrJoin(line.counterparties, ","), entry.asset,
                  FormatMajorUnits(entry.amount, scale),
                  FormatMajorUnits(entry.balance_after, scale), line.metadata});
  }
  table.Print(std::cout);
}

ExitCode RunHistory(const GlobalOptions& global, const HistoryArguments& arguments) {
  if (absl::Status valid = ValidateAccountId(arguments.id); !valid.ok()) return ReportError(valid);
  absl::StatusOr<std::unique_ptr<Ledger>> ledger = OpenLedger(global);
  if (!ledger.ok()) return ReportError(ledger.status());
  // GetAccount first: an unknown account is an error, not an empty history.
  absl::StatusOr<Account> account = (*ledger)->GetAccount(arguments.id);
  if (!account.ok()) return ReportError(account.status());
  absl::StatusOr<Asset> asset = (*ledger)->GetAsset(account->asset);
  if (!asset.ok()) return ReportError(asset.status());
  absl::StatusOr<std::vector<HistoryEntry>> entries =
      (*ledger)->ListHistory(arguments.id, arguments.after_version, arguments.limit);
  if (!entries.ok()) return ReportError(entries.status());
  if (arguments.json) {
    for (const HistoryEntry& line : *entries) PrintJsonLine(HistoryEntryToJson(line));
  } else {
    PrintHistoryTable(*entries, asset->scale);
  }
  if (static_cast<int64_t>(entries->size()) == arguments.limit) {
    (arguments.json ? std::cerr : std::cout)
        << "next: --after " << entries->back().entry.account_version << "\n";
  }
  return ExitCode::kOk;
}

void AddAccountOpen(CLI::App& account, const GlobalOptions& global, CommandSelection& selection) {
  auto arguments = std::make_shared<AccountOpenArguments>();
  CLI::App* open = account.add_subcommand("open", "Open an account holding one asset");
  open->add_option("id", arguments->spec.id, "Account id: printable ASCII, no spaces")->required();
  open->add_option("--asset", arguments->spec.asset, "Asset code (define it first)")->required();
  open->add_flag("--allow-negative", arguments->spec.allow_negative,
                 "System account (issuance, outside world): no lower bound");
  open->add_option("--overdraft-limit", arguments->spec.overdraft_limit,
                   "Minor units the balance may go below zero (default 0)")
      ->check(CLI::NonNegativeNumber)
      ->excludes("--allow-negative");
  open->add_flag("--json", arguments->json, "Print the account as JSON instead of a table");
  open->callback([&global, &selection, arguments] {
    selection.Select([&global, arguments] { return RunAccountOpen(global, *arguments); });
  });
}

void AddAccountById(CLI::App& account, const GlobalOptions& global, CommandSelection& selection,
                    const std::string& name, const std::string& description,
                    ExitCode (*run)(const GlobalOptions&, const std::string&)) {
  auto arguments = std::make_shared<AccountIdArgument>();
  CLI::App* command = account.add_subcommand(name, description);
  command->add_option("id", arguments->id, "Account id")->required();
  command->callback([&global, &selection, arguments, run] {
    selection.Select([&global, arguments, run] { return run(global, arguments->id); });
  });
}

void AddAccountList(CLI::App& account, const GlobalOptions& global, CommandSelection& selection) {
  auto arguments = std::make_shared<AccountListArguments>();
  CLI::App* list = account.add_subcommand("list", "List accounts ordered by id, a page at a time");
  list->add_option("--after", arguments->after_id, "Start after this account id (the cursor)");
  list->add_option("--limit", arguments->limit, "Accounts per page")
      ->check(CLI::Range(int64_t{1}, kPageLimitMax))
      ->capture_default_str();
  list->add_flag("--json", arguments->json, "JSON lines instead of a table");
  list->callback([&global, &selection, arguments] {
    selection.Select([&global, arguments] { return RunAccountList(global, *arguments); });
  });
}

void AddBalance(CLI::App& app, const GlobalOptions& global, CommandSelection& selection) {
  auto arguments = std::make_shared<BalanceArguments>();
  CLI::App* balance =
      app.add_subcommand("balance",
                         "Print an account's posted balance in major and minor units, and its\n"
                         "pending debits, pending credits and available balance while holds are "
                         "pending");
  balance->add_option("id", arguments->id, "Account id")->required();
  balance->add_flag("--json", arguments->json, "Print JSON");
  balance->add_option("--as-of", arguments->as_of,
                      "The posted balance at this RFC 3339 instant instead of now (holds keep "
                      "no history: no pending amounts)");
  balance->callback([&global, &selection, arguments] {
    selection.Select([&global, arguments] { return RunBalance(global, *arguments); });
  });
}

void AddHistory(CLI::App& app, const GlobalOptions& global, CommandSelection& selection) {
  auto arguments = std::make_shared<HistoryArguments>();
  CLI::App* history = app.add_subcommand(
      "history", "Print an account's entries in order, a page at a time (keyset by version)");
  history->add_option("id", arguments->id, "Account id")->required();
  history
      ->add_option("--after", arguments->after_version,
                   "Start after this account version (the cursor; 0 = from the start)")
      ->check(CLI::NonNegativeNumber);
  history->add_option("--limit", arguments->limit, "Entries per page")
      ->check(CLI::Range(int64_t{1}, kPageLimitMax))
      ->capture_default_str();
  history->add_flag("--json", arguments->json, "JSON lines instead of a table");
  history->callback([&global, &selection, arguments] {
    selection.Select([&global, arguments] { return RunHistory(global, *arguments); });
  });
}

}  // namespace

void AddAccountCommands(CLI::App& app, const GlobalOptions& global, CommandSelection& selection) {
  CLI::App* account = app.add_subcommand("account", "Open, close, show and list accounts");
  account->require_subcommand(1);
  AddAccountOpen(*account, global, selection);
  AddAccountById(*account, global, selection, "close",
                 "Close an account (its balance must be zero); it takes no new postings",
                 &RunAccountClose);
  AddAccountById(*account, global, selection, "show", "Print an account as JSON", &RunAccountShow);
  AddAccountList(*account, global, selection);
  AddBalance(app, global, selection);
  AddHistory(app, global, selection);
}

}  // namespace ledger::cli
