#include "cli/output.h"

#include <algorithm>
#include <iostream>
#include <utility>

#include "ledger/amount.h"
#include "cli/exit_codes.h"

namespace ledger::cli {

std::string DumpJson(const nlohmann::json& json, int indent) {
  return json.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

void PrintJson(const nlohmann::json& json) { std::cout << DumpJson(json, 2) << "\n"; }

void PrintJsonLine(const nlohmann::json& json) { std::cout << DumpJson(json, -1) << "\n"; }

nlohmann::json ErrorToJson(const absl::Status& status) {
  return {{"error", std::string(status.message())},
          {"kind", ExitCodeName(ExitCodeForStatus(status))}};
}

TextTable::TextTable(std::vector<std::string> header, std::vector<bool> numeric_columns)
    : header_(std::move(header)), numeric_columns_(std::move(numeric_columns)) {
  numeric_columns_.resize(header_.size(), false);
}

void TextTable::AddRow(std::vector<std::string> cells) {
  cells.resize(header_.size());
  rows_.push_back(std::move(cells));
}

void TextTable::Print(std::ostream& out) const {
  std::vector<size_t> widths;
  for (const std::string& title : header_) widths.push_back(title.size());
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  auto print_row = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t i = 0; i < cells.size(); ++i) {
      std::string padding(widths[i] - cells[i].size(), ' ');
      if (i > 0) line += "  ";
      line += numeric_columns_[i] ? padding + cells[i] : cells[i] + padding;
    }
    line.erase(line.find_last_not_of(' ') + 1);  // no trailing blanks
    out << line << "\n";
  };
  print_row(header_);
  for (const auto& row : rows_) print_row(row);
}

}  // namespace ledger::cli
