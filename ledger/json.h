// The JSON form of every domain type, the one vocabulary that the `ledger` tool and the
// HTTP service both print: transactions, holds, outcomes, accounts, history entries,
// outbox events and assets.
//
//   nlohmann::json body = ledger::TransactionToJson(outcome->transaction);
//
// Amounts are decimal strings of minor units and instants RFC 3339 UTC strings, so no
// consumer ever parses a float. The field names are part of the CLI's and the HTTP API's
// contract (docs/cli.md, docs/http.md, docs/openapi.json): renaming one breaks clients.
//
// Thread-safe: pure functions over values.
#ifndef LEDGER_LEDGER_JSON_H_
#define LEDGER_LEDGER_JSON_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "ledger/account.h"
#include "ledger/engine.h"
#include "ledger/hold.h"
#include "ledger/outcome.h"
#include "ledger/transaction.h"
#include "nlohmann/json.hpp"

namespace ledger {

nlohmann::json TransactionToJson(const Transaction& transaction);
// TransactionToJson(transaction) printed compact (keys sorted, UTF-8 kept, invalid UTF-8
// replaced), to the byte, but written without building the tree: the HTTP service's
// 201 hot path. What it does not write itself (a hold's terms, invalid UTF-8, metadata
// other than {}) it leaves to the tree.
std::string TransactionToJsonText(const Transaction& transaction);
// A hold as stored, with its status (its terms alone are part of the hold transaction).
nlohmann::json HoldToJson(const Hold& hold);
nlohmann::json HoldTermsToJson(const HoldTerms& terms);
nlohmann::json OutcomeToJson(const Outcome& outcome);
// balance is the posted balance; pending_debits and pending_credits what pending holds
// reserve out of and for the account; available = balance - pending_debits.
nlohmann::json AccountToJson(const Account& account);
// With the transaction's story when Ledger::ListHistory filled it: "kind",
// "counterparties" (the other accounts of its entries), "metadata".
nlohmann::json HistoryEntryToJson(const HistoryEntry& line);
// A committed key record: namespace, tenant, actor, key, fingerprint, transaction_id,
// created_at, expires_at.
nlohmann::json KeyRecordToJson(const KeyRecord& record);
nlohmann::json EventToJson(const OutboxEvent& event);
nlohmann::json AssetToJson(const Asset& asset);
// A dry run's decision (Ledger::DryRun), one shape for the CLI and the HTTP service:
// OutcomeToJson plus "dry_run": true, and a conflict (IsConflict) as {"dry_run": true,
// "outcome": "conflict", "detail": ...}. Any other error decided nothing: nullopt, and
// the caller reports it as it would for a submit.
std::optional<nlohmann::json> DryRunToJson(const absl::StatusOr<Outcome>& result);

}  // namespace ledger

#endif  // LEDGER_LEDGER_JSON_H_
