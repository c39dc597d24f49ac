#include "cli/unknown_command.h"

#include <algorithm>
#include <string_view>

#include "CLI/CLI.hpp"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ledger::cli {
namespace {

constexpr size_t kSuggestionDistanceMax = 2;

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> previous(b.size() + 1);
  std::vector<size_t> current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::vector<const CLI::App*> CommandsOf(const CLI::App& level) {
  return level.get_subcommands([](const CLI::App* command) { return !command->get_name().empty(); });
}

const CLI::App* CommandNamed(const CLI::App& level, const std::string& word) {
  for (const CLI::App* command : CommandsOf(level)) {
    if (command->check_name(word)) return command;
  }
  return nullptr;
}

// The option `word` names at `level` or above (options fall through to subcommands).
const CLI::Option* OptionNamed(const CLI::App* level, const std::string& word) {
  for (; level != nullptr; level = level->get_parent()) {
    if (const CLI::Option* option = level->get_option_no_throw(word)) return option;
  }
  return nullptr;
}

std::string Suggestions(const CLI::App& level, const std::string& word) {
  std::vector<std::string> close;
  for (const CLI::App* command : CommandsOf(level)) {
    const std::string& name = command->get_name();
    const bool prefix = word.size() >= 2 && (absl::StartsWith(name, word) || absl::StartsWith(word, name));
    if (prefix || EditDistance(word, name) <= kSuggestionDistanceMax) {
      close.push_back(absl::StrCat("\"", name, "\""));
    }
  }
  if (close.empty()) return "";
  return absl::StrCat("; did you mean ", absl::StrJoin(close, " or "), "?");
}

std::string CommandPath(const CLI::App& level) {
  std::vector<std::string> names;
  for (const CLI::App* at = &level; at != nullptr; at = at->get_parent()) names.push_back(at->get_name());
  std::reverse(names.begin(), names.end());
  return absl::StrJoin(names, " ");
}

}  // namespace

std::string CommandWordOf(const CLI::App& app, const std::vector<std::string>& arguments) {
  for (size_t i = 0; i < arguments.size(); ++i) {
    const std::string& word = arguments[i];
    if (word == "--") break;
    if (absl::StartsWith(word, "-")) {
      const CLI::Option* option = OptionNamed(&app, word);
      if (!absl::StrContains(word, "=") && option != nullptr && option->get_expected_min() > 0) ++i;
      continue;
    }
    const CLI::App* command = CommandNamed(app, word);
    return command == nullptr ? "" : command->get_name();
  }
  return "";
}

std::optional<std::string> UnknownCommandMessage(const CLI::App& app,
                                                 const std::vector<std::string>& arguments) {
  const CLI::App* level = &app;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const std::string& word = arguments[i];
    if (word == "--") return std::nullopt;
    if (absl::StartsWith(word, "-")) {
      if (absl::StrContains(word, "=")) continue;
      const CLI::Option* option = OptionNamed(level, word);
      if (option != nullptr && option->get_expected_min() > 0) ++i;  // skip its value
      continue;
    }
    if (CommandsOf(*level).empty()) return std::nullopt;  // a leaf's positional argument
    const CLI::App* command = CommandNamed(*level, word);
    if (command == nullptr) {
      return absl::StrCat("unknown command \"", word, "\" for `", CommandPath(*level), "`",
                          Suggestions(*level, word), " (see `", CommandPath(*level), " --help`)");
    }
    level = command;
  }
  return std::nullopt;
}

}  // namespace ledger::cli
