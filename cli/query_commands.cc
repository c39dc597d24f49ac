// transaction show ID; transaction list (filtered, keyset paging); events (the outbox, a
// page at a time, or followed as it grows).
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "base/status.h"
#include "ledger/json.h"
#include "ledger/ledger.h"
#include "ledger/outcome.h"

namespace ledger::cli {
namespace {

struct TransactionShowArguments {
  std::string id;
};

struct TransactionListArguments {
  std::string account;
  std::string kind;
  std::string from;       // RFC 3339, inclusive
  std::string before;     // RFC 3339, exclusive
  std::string metadata;   // NAME=VALUE
  std::string after;      // the cursor
  int64_t limit = kTransactionPageLimitDefault;
};

struct EventsArguments {
  int64_t after_sequence = 0;
  int64_t limit = 100;
  bool follow = false;      // keep printing events as they commit
  int64_t poll_ms = 500;    // --follow: pause between pages when caught up
  int64_t count_max = 0;    // --follow: exit after this many events (0: never)
};

ExitCode RunTransactionShow(const GlobalOptions& global, const std::string& id) {
  if (id.empty())
    return ReportError(absl::InvalidArgumentError("transaction id must not be empty"));
  absl::StatusOr<std::unique_ptr<Ledger>> ledger = OpenLedger(global);
  if (!ledger.ok()) return ReportError(ledger.status());
  absl::StatusOr<Transaction> transaction = (*ledger)->GetTransaction(id);
  if (!transaction.ok()) return ReportError(transaction.status());
  PrintJson(TransactionToJson(*transaction));
  return ExitCode::kOk;
}

absl::StatusOr<absl::Time> ParseInstant(const std::string& text, const char* option) {
  absl::Time instant;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, text, &instant, &error)) {
    return absl::InvalidArgumentError(absl::StrCat(
        option, " must be an RFC 3339 time (2026-01-31T23:59:59Z), not \"", text, "\""));
  }
  return instant;
}

// The query the options describe; InvalidArgument naming the option for a bad one (the
// library then checks the whole query: ValidateTransactionQuery).
absl::StatusOr<TransactionQuery> QueryOf(const TransactionListArguments& arguments) {
  TransactionQuery query;
  query.filter.account_id = arguments.account;
  if (!arguments.kind.empty()) {
    absl::StatusOr<OperationKind> kind = ParseOperationKind(arguments.kind);
    if (!kind.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--kind: ", kind.status().message()));
    }
    query.filter.kind = *kind;
  }
  if (!arguments.from.empty()) {
    LEDGER_ASSIGN_OR_RETURN(query.filter.created_from, ParseInstant(arguments.from, "--from"));
  }
  if (!arguments.before.empty()) {
    LEDGER_ASSIGN_OR_RETURN(query.filter.created_before, ParseInstant(arguments.before, "--before"));
  }
  if (!arguments.metadata.empty()) {
    const size_t equals = arguments.metadata.find('=');
    if (equals == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--metadata must be NAME=VALUE (a top-level string member), not \"", arguments.metadata,
          "\""));
    }
    query.filter.metadata_key = arguments.metadata.substr(0, equals);
    query.filter.metadata_value = arguments.metadata.substr(equals + 1);
  }
  query.cursor = arguments.after;
  query.limit = arguments.limit;
  LEDGER_RETURN_IF_ERROR(ValidateTransactionQuery(query));
  return query;
}

ExitCode RunTransactionList(const GlobalOptions& global, const TransactionListArguments& arguments) {
  absl::StatusOr<TransactionQuery> query = QueryOf(arguments);
  if (!query.ok()) return ReportError(query.status());  // before the database is opened
  absl::StatusOr<std::unique_ptr<Ledger>> ledger = OpenLedger(global);
  if (!ledger.ok()) return ReportError(ledger.status());
  absl::StatusOr<TransactionPage> page = (*ledger)->ListTransactions(*query);
  if (!page.ok()) return ReportError(page.status());
  for (const Transaction& transaction : page->transactions) {
    PrintJsonLine(TransactionToJson(transaction));
  }
  // The cursor goes to stderr so stdout stays pure JSON lines for a consumer.
  if (!page->next_cursor.empty()) std::cerr << "next: --after " << page->next_cursor << "\n";
  return ExitCode::kOk;
}

void AddTransactionList(CLI::App& transaction, const GlobalOptions& global,
                        CommandSelection& selection) {
  auto arguments = std::make_shared<TransactionListArguments>();
  CLI::App* list = transaction.add_subcommand(
      "list", "Print transactions as JSON lines, oldest first, filtered, a page at a time");
  list->add_option("--account", arguments->account,
                   "Only transactions with an entry of this account");
  list->add_option("--kind", arguments->kind,
                   "Only this kind: top_up, spend, transfer, payout, reverse, post, hold, "
                   "capture, void, expire");
  list->add_option("--from", arguments->from, "Only those created at or after this RFC 3339 time");
  list->add_option("--before", arguments->before, "Only those created before this RFC 3339 time");
  list->add_option("--metadata", arguments->metadata,
                   "NAME=VALUE: only those whose metadata has this top-level string member");
  list->add_option("--after", arguments->after,
                   "Continue after this cursor (printed as `next: --after CURSOR` on stderr)");
  list->add_option("--limit", arguments->limit, "Transactions per page (at most 1000)")
      ->capture_default_str();
  list->callback([&global, &selection, arguments] {
    selection.Select([&global, arguments] { return RunTransactionList(global, *arguments); });
  });
}

// Prints events as they commit, a page at a time, until `count_max` were printed (or
// forever). Safe against skips: sequences follow commit order (docs/concepts.md).
ExitCode FollowEvents(Ledger& ledger, const EventsArguments& arguments) {
  int64_t cursor = arguments.after_sequence;
  int64_t printed = 0;
  while (arguments.count_max == 0 || printed < arguments.count_max) {
    absl::StatusOr<std::vector<OutboxEvent>> events =
        ledger.ListEvents(cursor, arguments.limit);
    if (!events.ok()) return ReportError(events.status());
    for (const OutboxEvent& event : *events) {
      if (arguments.count_max != 0 && printed == arguments.count_max) break;
      PrintJsonLine(EventToJson(event));
      cursor = event.sequence;
      ++printed;
    }
    std::cout.flush();  // a consumer reads each event as it comes
    if (static_cast<int64_t>(events->size()) < arguments.limit) {
      std::this_thread::sleep_for(std::chrono::milliseconds(arguments.poll_ms));
    }
  }
  return ExitCode::kOk;
}

ExitCode RunEvents(const GlobalOptions& global, const EventsArguments& arguments) {
  absl::StatusOr<std::unique_ptr<Ledger>> ledger = OpenLedger(global);
  if (!ledger.ok()) return ReportError(ledger.status());
  if (arguments.follow) return FollowEvents(**ledger, arguments);
  absl::StatusOr<std::vector<OutboxEvent>> events =
      (*ledger)->ListEvents(arguments.after_sequence, arguments.limit);
  if (!events.ok()) return ReportError(events.status());
  for (const OutboxEvent& event : *events) PrintJsonLine(EventToJson(event));
  // The cursor goes to stderr so stdout stays pure JSON lines for a consumer.
  if (static_cast<int64_t>(events->size()) == arguments.limit) {
    std::cerr << "next: --after " << events->back().sequence << "\n";
  }
  return ExitCode::kOk;
}

}  // namespace

void AddQueryCommands(CLI::App& app, const GlobalOptions& global, CommandSelection& selection) {
  CLI::App* transaction = app.add_subcommand("transaction", "Show committed transactions");
  transaction->require_subcommand(1);
  auto show_arguments = std::make_shared<TransactionShowArguments>();
  CLI::App* show =
      transaction->add_subcommand("show", "Print a transaction and its entries as JSON");
  show->add_option("id", show_arguments->id, "Transaction id (from submit's output)")->required();
  show->callback([&global, &selection, show_arguments] {
    selection.Select(
        [&global, show_arguments] { return RunTransactionShow(global, show_arguments->id); });
  });
  AddTransactionList(*transaction, global, selection);

  auto events_arguments = std::make_shared<EventsArguments>();
  CLI::App* events = app.add_subcommand(
      "events", "Print outbox events (one per committed transaction) as JSON lines");
  events
      ->add_option("--after", events_arguments->after_sequence,
                   "Start after this sequence (the cursor; 0 = from the start)")
      ->check(CLI::NonNegativeNumber);
  events->add_option("--limit", events_arguments->limit, "Events per page")
      ->check(CLI::Range(int64_t{1}, kPageLimitMax))
      ->capture_default_str();
  events->add_flag("--follow", events_arguments->follow,
                   "Keep printing events as they commit (stop with Ctrl-C)");
  events->add_option("--poll-ms", events_arguments->poll_ms,
                     "With --follow: milliseconds between pages once caught up")
      ->check(CLI::Range(int64_t{10}, int64_t{60'000}))
      ->capture_default_str();
  events->add_option("--count", events_arguments->count_max,
                     "With --follow: exit after this many events (0: never)")
      ->check(CLI::NonNegativeNumber);
  events->callback([&global, &selection, events_arguments] {
    selection.Select([&global, events_arguments] { return RunEvents(global, *events_arguments); });
  });
}

}  // namespace ledger::cli
