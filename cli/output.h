// Printing for the `ledger` tool: JSON (machine-readable, stdout) and aligned text
// tables (for people, stdout). Human-readable errors go to stderr via ReportError.
//
// Every domain type's JSON form comes from ledger/json.h, the one vocabulary the CLI and
// the HTTP service share.
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
