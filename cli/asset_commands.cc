// asset define CODE --scale N; asset list.
#include <iostream>
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "base/status.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "ledger/json.h"

namespace ledger::cli {
namespace {

struct AssetDefineArguments {
  std::string code;
  int scale = 0;
  bool json = false;
};

ExitCode RunAssetDefine(const GlobalOptions& global, const AssetDefineArguments& arguments) {
  Asset asset{arguments.code, arguments.scale};
  // Checked before the database is opened: bad input writes nothing, not even a file.
  if (absl::Status valid = ValidateAsset(asset); !valid.ok()) return ReportError(valid);
  absl::StatusOr<std::unique_ptr<Ledger>> ledger = OpenLedger(global);
  if (!ledger.ok()) return ReportError(ledger.status());
  if (absl::Status defined = (*ledger)->DefineAsset(asset); !defined.ok()) {
    return ReportError(defined);
  }
  if (arguments.json) {
    PrintJson(AssetToJson(asset));
  } else {
    TextTable table({"asset", "scale"}, {false, true});
    table.AddRow({asset.code, std::to_string(asset.scale)});
    table.Print(std::cout);
  }
  return ExitCode::kOk;
}

ExitCode RunAssetList(const GlobalOptions& global) {
  absl::StatusOr<std::unique_ptr<Ledger>> ledger = OpenLedger(global);
  if (!ledger.ok()) return ReportError(ledger.status());
  absl::StatusOr<std::vector<Asset>> assets = (*ledger)->ListAssets();
  if (!assets.ok()) return ReportError(assets.status());
  for (const Asset& asset : *assets) PrintJsonLine(AssetToJson(asset));
  return ExitCode::kOk;
}

}  // namespace

void AddAssetCommands(CLI::App& app, const GlobalOptions& global, CommandSelection& selection) {
  CLI::App* asset = app.add_subcommand("asset", "Define and list assets (a code and its scale)");
  asset->require_subcommand(1);

  auto define_arguments = std::make_shared<AssetDefineArguments>();
  CLI::App* define = asset->add_subcommand(
      "define", "Define an asset; defining it again with the same scale is a no-op");
  define->add_option("code", define_arguments->code, "Asset code: A-Z, 0-9 and _, 1..16 bytes")
      ->required();
  define
      ->add_option("--scale", define_arguments->scale,
                   "Decimal places of the major unit (USD: 2, CREDITS: 0)")
      ->required()
      ->check(CLI::Range(0, kAssetScaleMax));
  define->add_flag("--json", define_arguments->json, "Print the asset as JSON instead of a table");
  define->callback([&global, &selection, define_arguments] {
    selection.Select(
        [&global, define_arguments] { return RunAssetDefine(global, *define_arguments); });
  });

  CLI::App* list = asset->add_subcommand("list", "List the assets as JSON lines");
  list->callback(
      [&global, &selection] { selection.Select([&global] { return RunAssetList(global); }); });
}

}  // namespace ledger::cli
