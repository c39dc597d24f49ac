// demo: builds the economy on a fresh database, runs the workload (demo.h), checks
// exactly-once, runs verify and prints the summary.
#include <stdlib.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status.h"
#include "engines/common/database_url.h"
#include "ledger/amount.h"
#include "cli/commands.h"
#include "cli/demo.h"
#include "cli/output.h"
#include "ledger/verify.h"

namespace ledger::cli {
namespace {

constexpr size_t kViolationsShownMax = 20;

struct DemoArguments {
  DemoOptions options;
};

// The demo never touches $LEDGER_DB (your working database): only an explicit --db,
// else a fresh SQLite file in a new temporary folder, kept so you can look at it.
absl::StatusOr<std::string> DemoDatabaseUrl(const GlobalOptions& global) {
  if (!global.database_url.empty()) return global.database_url;
  std::error_code error;
  std::filesystem::path base = std::filesystem::temp_directory_path(error);
  if (error) base = "/tmp";
  std::string folder = (base / "ledger-demo-XXXXXX").string();
  if (mkdtemp(folder.data()) == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot create a temporary folder in ", base.string()));
  }
  return absl::StrCat("sqlite:", folder, "/ledger.db");
}

absl::Status RequireEmptyDatabase(Ledger& ledger, const std::string& url) {
  LEDGER_ASSIGN_OR_RETURN(std::vector<Account> accounts, ledger.ListAccounts("", 1));
  if (!accounts.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the demo needs an empty database, and ", RedactDatabaseUrl(url),
                     " already has accounts; omit --db to use a fresh temporary file"));
  }
  return absl::OkStatus();
}

std::string Count(int64_t value) { return std::to_string(value); }

void PrintHeader(const std::string& url, const DemoOptions& options) {
  std::cout << "ledger demo\n"
            << "  database  " << RedactDatabaseUrl(url) << "\n"
            << "  workload  " << options.operations << " operations on " << options.threads
            << " threads, seed " << options.seed << "\n"
            << "  economy   " << kDemoAsset << " (scale " << kDemoAssetScale
            << "): " << kDemoIssuance << ", " << kDemoPlatformFees << ", " << kDemoPayoutClearing
            << ", " << kDemoCreators << " creators, " << kDemoWallets << " user wallets\n\n";
}

void PrintSubmitCounts(const SubmitCounts& submits) {
  TextTable table({"submits by outcome", "count"}, {false, true});
  table.AddRow({"committed", Count(submits.committed)});
  table.AddRow({"duplicate", Count(submits.duplicate)});
  table.AddRow({"rejected", Count(submits.rejected)});
  table.AddRow({"conflict", Count(submits.conflict)});
  table.AddRow({"in progress (resent)", Count(submits.in_progress)});
  table.AddRow({"faulted (resent)", Count(submits.faulted)});
  table.AddRow({"total", Count(submits.total())});
  table.Print(std::cout);
  std::cout << "\n";
}

void PrintScenarioCounts(const ScenarioCounts& scenarios) {
  TextTable table({"injected", "held"}, {false, true});
  table.AddRow({"client retry after commit -> duplicate, same transaction",
                Count(scenarios.client_retries)});
  table.AddRow({"two threads, same key at once -> one commit, one duplicate",
                Count(scenarios.concurrent_deliveries)});
  table.AddRow(
      {"declined, funded, same key again -> committed", Count(scenarios.declined_then_committed)});
  table.AddRow({"same key, other payload -> conflict", Count(scenarios.conflicts_refused)});
  table.AddRow({"reversals committed / rejected (money already spent)",
                absl::StrCat(scenarios.reversals_committed, " / ", scenarios.reversals_rejected)});
  table.AddRow({"payouts held, then captured / voided (bank refused)",
                absl::StrCat(scenarios.payouts_captured, " / ", scenarios.payouts_voided)});
  table.Print(std::cout);
  std::cout << "\n";
}

void PrintExactlyOnce(const ExactlyOnceReport& report) {
  std::cout << "exactly-once: " << (report.ok() ? "OK" : "FAILED") << " (" << report.keys_committed
            << " keys committed, " << report.transactions << " transactions, " << report.key_records
            << " key records)\n";
  for (size_t i = 0; i < report.violations.size() && i < kViolationsShownMax; ++i) {
    std::cout << "  - " << report.violations[i] << "\n";
  }
  if (report.violations.size() > kViolationsShownMax) {
    std::cout << "  ... and " << report.violations.size() - kViolationsShownMax << " more\n";
  }
}

void PrintThroughput(const DemoRun& run, int64_t operations) {
  double seconds = std::max(absl::ToDoubleSeconds(run.elapsed), 1e-6);
  std::cout << absl::StrFormat(
      "throughput: %d operations (%d submits) in %.2f s = %.0f operations/s, %.0f submits/s\n\n",
      operations, run.submits.total(), seconds, static_cast<double>(operations) / seconds,
      static_cast<double>(run.submits.total()) / seconds);
}

absl::Status PrintBalances(Ledger& ledger, const VerifyReport& verify) {
  std::vector<std::string> shown = {kDemoIssuance,    kDemoPlatformFees, kDemoPayoutClearing,
                                    DemoCreatorId(0), DemoCreatorId(1),  DemoWalletId(0),
                                    DemoWalletId(1)};
  TextTable table({"final balances", absl::StrCat("balance ", kDemoAsset)}, {false, true});
  for (const std::string& id : shown) {
    LEDGER_ASSIGN_OR_RETURN(Account account, ledger.GetAccount(id));
    table.AddRow({id, FormatMajorUnits(account.balance, kDemoAssetScale)});
  }
  for (const auto& [asset, total] : verify.balance_totals) {
    table.AddRow({absl::StrCat("sum of all ", asset, " accounts (must be 0)"),
                  FormatMajorUnits(total, asset == kDemoAsset ? kDemoAssetScale : 0)});
  }
  table.Print(std::cout);
  std::cout << "\n";
  return absl::OkStatus();
}

struct DemoResult {
  DemoRun run;
  ExactlyOnceReport exactly_once;
  VerifyReport verify;
};

// `engine` is the ledger's own, which the demo opened: its exactly-once check reads the
// stored key records and transactions the way an outside auditor would.
absl::StatusOr<DemoResult> RunDemo(Ledger& ledger, Engine& engine, const std::string& url,
                                   const DemoOptions& options) {
  LEDGER_RETURN_IF_ERROR(RequireEmptyDatabase(ledger, url));
  LEDGER_RETURN_IF_ERROR(BuildDemoEconomy(ledger));
  DemoResult result;
  LEDGER_ASSIGN_OR_RETURN(result.run, RunDemoWorkload(ledger, options));
  LEDGER_ASSIGN_OR_RETURN(result.exactly_once, CheckExactlyOnce(engine, result.run));
  LEDGER_ASSIGN_OR_RETURN(result.verify, ledger.Verify());
  return result;
}

ExitCode RunDemoCommand(const GlobalOptions& global, const DemoOptions& options) {
  absl::StatusOr<std::string> url = DemoDatabaseUrl(global);
  if (!url.ok()) return ReportError(url.status());
  absl::StatusOr<std::unique_ptr<Engine>> opened = OpenEngineAt(*url, {.create = true});
  if (!opened.ok()) return ReportError(opened.status());
  std::shared_ptr<Engine> engine(std::move(*opened));
  absl::StatusOr<Ledger> ledger = Ledger::Open(engine);
  if (!ledger.ok()) return ReportError(ledger.status());
  PrintHeader(*url, options);
  std::cout.flush();
  absl::StatusOr<DemoResult> result = RunDemo(*ledger, *engine, *url, options);
  if (!result.ok()) return ReportError(Annotate(result.status(), "demo"));
  PrintSubmitCounts(result->run.submits);
  PrintScenarioCounts(result->run.scenarios);
  PrintThroughput(result->run, options.operations);
  if (absl::Status printed = PrintBalances(*ledger, result->verify); !printed.ok()) {
    return ReportError(printed);
  }
  PrintExactlyOnce(result->exactly_once);
  std::cout << result->verify.ToText();
  if (global.database_url.empty()) {
    std::cout << "\nexplore it: ledger --db " << RedactDatabaseUrl(*url) << " account list\n";
  }
  bool ok = result->verify.ok() && result->exactly_once.ok();
  return ok ? ExitCode::kOk : ExitCode::kVerifyFailed;
}

}  // namespace

void AddDemoCommand(CLI::App& app, const GlobalOptions& global, CommandSelection& selection) {
  auto arguments = std::make_shared<DemoArguments>();
  CLI::App* demo = app.add_subcommand(
      "demo",
      "Run a creator economy with injected retries, duplicate deliveries, declined-then-retried\n"
      "requests and conflicts, and payouts held then captured or voided; print a summary and\n"
      "the verify report. Uses a fresh temporary SQLite file unless --db is given (then the\n"
      "database must be empty). Exit 0 only if verify and the exactly-once checks pass, else 7.");
  demo->add_option("--operations", arguments->options.operations,
                   "Logical operations (distinct keys)")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000}))
      ->capture_default_str();
  demo->add_option("--seed", arguments->options.seed, "Seed of the operation generator")
      ->capture_default_str();
  demo->add_option("--threads", arguments->options.threads, "Client threads")
      ->check(CLI::Range(1, kDemoThreadsMax))
      ->capture_default_str();
  demo->callback([&global, &selection, arguments] {
    selection.Select([&global, arguments] { return RunDemoCommand(global, arguments->options); });
  });
}

}  // namespace ledger::cli
