#include "bench/load/load_options.h"

#include "absl/strings/str_cat.h"
#include "base/status.h"

namespace ledger::load {

std::string_view WorkloadName(Workload workload) {
  switch (workload) {
    case Workload::kUniform:
      return "uniform";
    case Workload::kHot:
      return "hot";
    case Workload::kRetry:
      return "retry";
    case Workload::kConflict:
      return "conflict";
  }
  return "unknown";
}

absl::StatusOr<Workload> ParseWorkload(std::string_view name) {
  for (Workload workload :
       {Workload::kUniform, Workload::kHot, Workload::kRetry, Workload::kConflict}) {
    if (name == WorkloadName(workload)) return workload;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown workload \"", View(name), "\": use uniform, hot, retry or conflict"));
}

std::string_view SubmitModeName(SubmitMode mode) {
  switch (mode) {
    case SubmitMode::kExactlyOnce:
      return "exactly-once";
    case SubmitMode::kRaw:
      return "raw";
  }
  return "unknown";
}

absl::StatusOr<ModeSelection> ParseModeSelection(std::string_view name) {
  if (name == "exactly-once") return ModeSelection::kExactlyOnce;
  if (name == "raw") return ModeSelection::kRaw;
  if (name == "both") return ModeSelection::kBoth;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown mode \"", View(name), "\": use exactly-once, raw or both"));
}

std::vector<SubmitMode> ModesOf(ModeSelection selection) {
  switch (selection) {
    case ModeSelection::kExactlyOnce:
      return {SubmitMode::kExactlyOnce};
    case ModeSelection::kRaw:
      return {SubmitMode::kRaw};
    case ModeSelection::kBoth:
      return {SubmitMode::kRaw, SubmitMode::kExactlyOnce};
  }
  return {};
}

std::string PhaseBoundText(const LoadOptions& options) {
  if (options.operations > 0) return absl::StrCat(options.operations, " submits");
  return absl::FormatDuration(options.duration.value_or(absl::Seconds(10)));
}

std::string BatchingText(const LoadOptions& options) {
  switch (options.batching) {
    case Batching::kSingle:
      return "single";
    case Batching::kBatch:
      return absl::StrCat("batch ", options.batch_items);
    case Batching::kGroupCommit: {
      std::string text = "group commit";
      if (options.group_commit_items_max > 0) {
        absl::StrAppend(&text, " max ", options.group_commit_items_max);
      }
      if (options.group_commit_in_flight > 0) {
        absl::StrAppend(&text, " in flight ", options.group_commit_in_flight);
      }
      return text;
    }
  }
  return "unknown";
}

}  // namespace ledger::load
