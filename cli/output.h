// Printing for the `ledger` tool: JSON (machine-readable, stdout) and aligned text
// tables (for people, stdout). Human-readable errors go to stderr via ReportError.
//
// Amounts in JSON are decimal strings of minor units, as in the library's own JSON
// (TransactionToJson), so no consumer ever parses a float.
//
// Not thread-safe: writes to std::cout.
#ifndef LEDGER_CLI_OUTPUT_H_
#define LEDGER_CLI_OUTPUT_H_

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ledger/account.h"
#include "ledger/engine.h"
#include "ledger/transaction.h"
#include "nlohmann/json.hpp"

namespace ledger::cli {

// Never throws: invalid UTF-8 in a stored string is replaced rather than aborting output.
std::string DumpJson(const nlohmann::json& json, int indent);
void PrintJson(const nlohmann::json& json);      // indented, for one object
void PrintJsonLine(const nlohmann::json& json);  // one line, for streams of objects

// balance is the posted balance; pending_debits and pending_credits what pending holds
// reserve out of and for the account; available = balance - pending_debits.
nlohmann::json AccountToJson(const Account& account);
nlohmann::json HistoryEntryToJson(const HistoryEntry& line);
nlohmann::json EventToJson(const OutboxEvent& event);
nlohmann::json AssetToJson(const Asset& asset);
// {"error": message, "kind": exit code name}: what a failed submit prints on stdout.
nlohmann::json ErrorToJson(const absl::Status& status);

// A table of text cells; the columns marked numeric are right-aligned.
class TextTable {
 public:
  TextTable(std::vector<std::string> header, std::vector<bool> numeric_columns);
  void AddRow(std::vector<std::string> cells);
  void Print(std::ostream& out) const;
  bool empty() const { return rows_.empty(); }

 private:
  std::vector<std::string> header_;
  std::vector<bool> numeric_columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace ledger::cli

#endif  // LEDGER_CLI_OUTPUT_H_
