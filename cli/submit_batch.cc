#include "cli/submit_batch.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <istream>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "cli/output.h"
#include "engines/common/database_url.h"
#include "idempotency/fingerprint.h"
#include "idempotency/key.h"
#include "ledger/json.h"
#include "ledger/operation.h"

namespace ledger::cli {
namespace {

struct BatchLine {
  size_t number = 0;  // 1-based line of the file
  SubmitRequest request;
};

absl::StatusOr<SubmitRequest> ParseLine(std::string_view text, const SubmitRequest& request_template) {
  LEDGER_ASSIGN_OR_RETURN(nlohmann::json json, ParseJsonStrict(text));
  if (!json.is_object()) {
    return absl::InvalidArgumentError("must be an object {\"key\": \"...\", \"operation\": {...}}");
  }
  for (const auto& [name, value] : json.items()) {
    if (name != "key" && name != "operation") {
      return absl::InvalidArgumentError(absl::StrCat("unknown member \"", name, "\""));
    }
  }
  auto key = json.find("key");
  if (key == json.end() || !key->is_string()) {
    return absl::InvalidArgumentError("\"key\" is required, a string: every line has its own key");
  }
  auto operation = json.find("operation");
  if (operation == json.end()) return absl::InvalidArgumentError("\"operation\" is required");
  SubmitRequest request = request_template;
  request.key = key->get<std::string>();
  LEDGER_RETURN_IF_ERROR(ValidateKey(request.key));
  LEDGER_ASSIGN_OR_RETURN(request.operation, OperationFromJson(*operation));
  LEDGER_RETURN_IF_ERROR(ValidateOperation(request.operation));
  return request;
}

absl::StatusOr<std::vector<BatchLine>> ReadLines(std::istream& in, const std::string& source,
                                                 const SubmitRequest& request_template) {
  std::vector<BatchLine> lines;
  std::string text;
  for (size_t number = 1; std::getline(in, text); ++number) {
    if (absl::StripAsciiWhitespace(text).empty()) continue;
    if (text.size() > kOperationJsonBytesMax) {
      return absl::InvalidArgumentError(absl::StrCat(source, " line ", number, ": longer than ",
                                                     kOperationJsonBytesMax, " bytes"));
    }
    absl::StatusOr<SubmitRequest> request = ParseLine(text, request_template);
    if (!request.ok()) return Annotate(request.status(), absl::StrCat(source, " line ", number));
    lines.push_back({number, *std::move(request)});
  }
  if (in.bad()) return absl::InvalidArgumentError(absl::StrCat("cannot read ", source));
  if (lines.empty()) return absl::InvalidArgumentError(absl::StrCat(source, " has no operations"));
  return lines;
}

absl::StatusOr<std::vector<BatchLine>> ReadBatchFile(const BatchFileOptions& options,
                                                     const SubmitRequest& request_template) {
  if (options.path == "-") return ReadLines(std::cin, "stdin", request_template);
  std::ifstream file(options.path, std::ios::binary);
  if (!file) return absl::InvalidArgumentError(absl::StrCat("cannot open ", options.path));
  return ReadLines(file, options.path, request_template);
}

// One JSON line for one input line; its exit code. A dry run's line is DryRunToJson's.
ExitCode PrintLineResult(const BatchLine& line, const SubmitResult& result, bool dry_run) {
  nlohmann::json json;
  ExitCode code;
  std::optional<nlohmann::json> decided;
  if (dry_run && (decided = DryRunToJson(result)).has_value()) {
    json = *std::move(decided);
    code = result.ok() ? ExitCodeForOutcome(*result) : ExitCodeForStatus(result.status());
  } else if (result.ok()) {
    Outcome outcome = *result;
    outcome.fault = WithoutHiddenPassword(result->fault);
    json = OutcomeToJson(outcome);
    code = ExitCodeForOutcome(outcome);
  } else {
    json = ErrorToJson(WithoutHiddenPassword(result.status()));
    code = ExitCodeForStatus(result.status());
    if (dry_run) json["dry_run"] = true;
  }
  json["line"] = line.number;
  json["key"] = line.request.key;
  PrintJsonLine(json);
  return code;
}

}  // namespace

ExitCode RunSubmitBatchFile(const GlobalOptions& global, const SubmitRequest& request_template,
                            const BatchFileOptions& options) {
  const bool dry_run = options.dry_run;
  absl::StatusOr<std::vector<BatchLine>> lines = ReadBatchFile(options, request_template);
  if (!lines.ok()) return ReportSubmitError(lines.status(), dry_run);
  if ((options.atomic || dry_run) && lines->size() > kBatchItemsMax) {
    absl::Status too_many = absl::InvalidArgumentError(
        absl::StrCat(dry_run ? "--dry-run" : "--atomic", " takes at most ", kBatchItemsMax,
                     " lines (one transaction), not ", lines->size()));
    return ReportSubmitError(too_many, dry_run);
  }
  absl::StatusOr<std::unique_ptr<Ledger>> ledger = OpenLedger(global);
  if (!ledger.ok()) return ReportSubmitError(ledger.status(), dry_run);
  // A dry run is one transaction, so each line sees the lines before it.
  const size_t chunk = options.atomic || dry_run ? lines->size() : kBatchFileChunk;
  ExitCode first_failure = ExitCode::kOk;
  for (size_t begin = 0; begin < lines->size(); begin += chunk) {
    const size_t end = std::min(lines->size(), begin + chunk);
    SubmitBatchRequest batch{.atomic = options.atomic};
    for (size_t i = begin; i < end; ++i) batch.items.push_back((*lines)[i].request);
    absl::StatusOr<std::vector<SubmitResult>> results =
        dry_run ? (*ledger)->DryRunBatch(batch) : (*ledger)->SubmitBatch(batch);
    if (!results.ok()) {
      absl::Status failed = Annotate(results.status(), absl::StrCat("lines from ", (*lines)[begin].number));
      return ReportSubmitError(failed, dry_run);
    }
    for (size_t i = begin; i < end; ++i) {
      ExitCode code = PrintLineResult((*lines)[i], (*results)[i - begin], dry_run);
      if (code != ExitCode::kOk && first_failure == ExitCode::kOk) first_failure = code;
    }
  }
  std::cout.flush();
  if (first_failure != ExitCode::kOk) {
    std::cerr << "ledger: " << ExitCodeName(first_failure)
              << (dry_run ? ": dry run: not every line of the batch would commit; see each "
                            "line's result on stdout (nothing was written)\n"
                          : ": not every line of the batch committed; see each line's result "
                            "on stdout (resending the file is safe)\n");
  }
  return first_failure;
}

}  // namespace ledger::cli
