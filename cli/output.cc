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

nlohmann::json AccountToJson(const Account& account) {
  return {{"id", account.id},
          {"asset", account.asset},
          {"balance", FormatAmount(account.balance)},
          {"pending_debits", FormatAmount(account.pending_debits)},
          {"pending_credits", FormatAmount(account.pending_credits)},
          {"available", FormatAmount(account.Available())},
          {"version", account.version},
          {"allow_negative", account.allow_negative},
          {"overdraft_limit", FormatAmount(account.overdraft_limit)},
          {"closed", account.closed},
          {"created_at", FormatTimestamp(account.created_at)}};
}

nlohmann::json HistoryEntryToJson(const HistoryEntry& line) {
  const Entry& entry = line.entry;
  return {{"account", entry.account_id},
          {"account_version", entry.account_version},
          {"transaction_id", line.transaction_id},
          {"created_at", FormatTimestamp(line.created_at)},
          {"asset", entry.asset},
          {"amount", FormatAmount(entry.amount)},
          {"balance_after", FormatAmount(entry.balance_after)}};
}

nlohmann::json EventToJson(const OutboxEvent& event) {
  // The payload is JSON the engine stored; embed it as JSON when it parses, as text if not.
  nlohmann::json payload =
      nlohmann::json::parse(event.payload, nullptr, /*allow_exceptions=*/false);
  if (payload.is_discarded()) payload = event.payload;
  return {{"sequence", event.sequence},
          {"transaction_id", event.transaction_id},
          {"type", event.type},
          {"created_at", FormatTimestamp(event.created_at)},
          {"payload", std::move(payload)}};
}

nlohmann::json AssetToJson(const Asset& asset) {
  return {{"code", asset.code}, {"scale", asset.scale}};
}

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
