// The SQLite engine's writes outside the submit path: assets, accounts, key pruning,
// run-idempotently work claims and webhook dedup. Each is one short BEGIN IMMEDIATE
// transaction with the default busy timeout (SqliteOptions::busy_timeout).
#include <utility>

#include "absl/strings/str_cat.h"
#include "engines/common/insert_or_read.h"
#include "engines/sqlite/sqlite_engine_internal.h"
#include "engines/sqlite/sqlite_rows.h"
#include "base/status.h"

namespace ledger::sqlite_internal {
namespace {

void BindWorkClaimState(Query& query, const WorkClaim& claim) {
  query.BindText(claim.fingerprint)
      .BindText(WorkStateName(claim.state))
      .BindText(claim.owner)
      .BindInt(claim.attempt)
      .BindTime(claim.lease_expires_at)
      .BindText(claim.result)
      .BindTime(claim.created_at)
      .BindTime(claim.updated_at)
      .BindTime(claim.expires_at);
}

absl::StatusOr<std::optional<int>> SelectAssetScale(Connection& connection,
                                                    std::string_view code) {
  LEDGER_ASSIGN_OR_RETURN(
      Query query, connection.Prepare("SELECT scale FROM assets WHERE code = ?", "select asset"));
  query.BindText(code);
  LEDGER_ASSIGN_OR_RETURN(bool found, query.Step());
  if (!found) return std::nullopt;
  return static_cast<int>(query.Int(0));
}

}  // namespace

absl::Status SqliteEngine::PutAsset(const Asset& asset) {
  return InWriteTransaction([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(std::optional<int> scale, SelectAssetScale(connection, asset.code));
    if (scale.has_value()) {
      if (*scale == asset.scale) return absl::OkStatus();
      return absl::AlreadyExistsError(absl::StrCat("asset ", asset.code,
                                                   " exists with scale ", *scale));
    }
    LEDGER_ASSIGN_OR_RETURN(
        Query query,
        connection.Prepare("INSERT INTO assets (code, scale) VALUES (?, ?)", "insert asset"));
    query.BindText(asset.code).BindInt(asset.scale);
    return query.Run();
  });
}

absl::Status SqliteEngine::InsertAccount(const Account& account) {
  return InWriteTransaction([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(std::optional<int> scale, SelectAssetScale(connection, account.asset));
    if (!scale.has_value()) {
      return absl::FailedPreconditionError(
          absl::StrCat("account ", account.id, ": unknown asset ", account.asset));
    }
    LEDGER_ASSIGN_OR_RETURN(
        Query query, connection.Prepare("INSERT INTO accounts (" LEDGER_SQLITE_ACCOUNT_COLUMNS
                                        ") VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                        "insert account"));
    query.BindText(account.id)
        .BindText(account.asset)
        .BindInt(account.allow_negative ? 1 : 0)
        .BindInt(account.overdraft_limit)
        .BindInt(account.closed ? 1 : 0)
        .BindInt(account.balance)
        .BindInt(account.version)
        .BindTime(account.created_at);
    return Annotate(query.Run(), absl::StrCat("account ", account.id));
  });
}

absl::StatusOr<bool> SqliteEngine::CloseAccountIfZeroBalance(std::string_view id) {
  bool closed = false;
  LEDGER_RETURN_IF_ERROR(InWriteTransaction([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(
        Query query, connection.Prepare("UPDATE accounts SET closed = 1 WHERE id = ? AND balance = 0",
                                        "close account if zero balance"));
    query.BindText(id);
    LEDGER_RETURN_IF_ERROR(query.Run());
    closed = connection.ChangedRows() == 1;  // counts matched rows, changed or not
    return absl::OkStatus();
  }));
  return closed;
}

absl::StatusOr<int64_t> SqliteEngine::PruneExpiredKeys(absl::Time now, int64_t limit) {
  int64_t deleted = 0;
  if (limit <= 0) return deleted;
  LEDGER_RETURN_IF_ERROR(InWriteTransaction([&](Connection& connection) -> absl::Status {
    // The subquery walks idempotency_keys_by_expiry; the batch bounds how long the
    // writer lock is held.
    LEDGER_ASSIGN_OR_RETURN(
        Query query,
        connection.Prepare("DELETE FROM idempotency_keys WHERE (namespace, scope, key) IN"
                           " (SELECT namespace, scope, key FROM idempotency_keys"
                           " WHERE expires_at <= ? AND state = 'committed'"
                           " ORDER BY expires_at LIMIT ?)",
                           "prune expired keys"));
    query.BindTime(now).BindInt(limit);
    LEDGER_RETURN_IF_ERROR(query.Run());
    deleted = connection.ChangedRows();
    return absl::OkStatus();
  }));
  return deleted;
}

absl::StatusOr<WorkClaim> SqliteEngine::InsertWorkClaimIfAbsent(const WorkClaim& fresh) {
  // Inside one write transaction nothing else can insert or delete the row, so the
  // first round always finds it; the shared loop keeps the engines' answers alike.
  return engine_common::InsertOrRead<WorkClaim>(
      "sqlite", "work claim", [&]() -> absl::StatusOr<std::optional<WorkClaim>> {
        std::optional<WorkClaim> stored;
        LEDGER_RETURN_IF_ERROR(InWriteTransaction([&](Connection& connection) -> absl::Status {
          {
            LEDGER_ASSIGN_OR_RETURN(
                Query insert,
                connection.Prepare("INSERT INTO work_claims (" LEDGER_SQLITE_WORK_CLAIM_COLUMNS
                                   ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                                   " ON CONFLICT (namespace, scope, key) DO NOTHING",
                                   "insert work claim"));
            BindIdentity(insert, fresh.identity);
            BindWorkClaimState(insert, fresh);
            LEDGER_RETURN_IF_ERROR(insert.Run());
          }
          LEDGER_ASSIGN_OR_RETURN(
              Query select, connection.Prepare("SELECT " LEDGER_SQLITE_WORK_CLAIM_COLUMNS
                                               " FROM work_claims"
                                               " WHERE namespace = ? AND scope = ? AND key = ?",
                                               "select work claim"));
          BindIdentity(select, fresh.identity);
          LEDGER_ASSIGN_OR_RETURN(bool found, select.Step());
          if (!found) return absl::OkStatus();
          LEDGER_ASSIGN_OR_RETURN(stored, ReadWorkClaim(select));
          return absl::OkStatus();
        }));
        return stored;
      });
}

absl::StatusOr<bool> SqliteEngine::ReplaceWorkClaim(const KeyIdentity& identity,
                                                    const std::string& expected_owner,
                                                    int64_t expected_attempt,
                                                    const WorkClaim& replacement) {
  bool replaced = false;
  LEDGER_RETURN_IF_ERROR(InWriteTransaction([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(
        Query query,
        connection.Prepare("UPDATE work_claims SET fingerprint = ?, state = ?, owner = ?,"
                           " attempt = ?, lease_expires_at = ?, result = ?, created_at = ?,"
                           " updated_at = ?, expires_at = ?"
                           " WHERE namespace = ? AND scope = ? AND key = ?"
                           " AND owner = ? AND attempt = ?",
                           "replace work claim"));
    BindWorkClaimState(query, replacement);
    BindIdentity(query, identity);
    query.BindText(expected_owner).BindInt(expected_attempt);
    LEDGER_RETURN_IF_ERROR(query.Run());
    replaced = connection.ChangedRows() == 1;
    return absl::OkStatus();
  }));
  return replaced;
}

absl::StatusOr<bool> SqliteEngine::DeleteWorkClaim(const KeyIdentity& identity,
                                                   const std::string& owner) {
  bool deleted = false;
  LEDGER_RETURN_IF_ERROR(InWriteTransaction([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(
        Query query,
        connection.Prepare("DELETE FROM work_claims WHERE namespace = ? AND scope = ? AND key = ?"
                           " AND state = 'pending' AND owner = ?",
                           "delete work claim"));
    BindIdentity(query, identity);
    query.BindText(owner);
    LEDGER_RETURN_IF_ERROR(query.Run());
    deleted = connection.ChangedRows() == 1;
    return absl::OkStatus();
  }));
  return deleted;
}

absl::StatusOr<int64_t> SqliteEngine::MarkAbandonedWorkClaims(absl::Time now) {
  int64_t marked = 0;
  LEDGER_RETURN_IF_ERROR(InWriteTransaction([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(
        Query query,
        connection.Prepare("UPDATE work_claims SET state = 'abandoned', updated_at = ?"
                           " WHERE state = 'pending' AND lease_expires_at <= ?",
                           "mark abandoned work claims"));
    query.BindTime(now).BindTime(now);
    LEDGER_RETURN_IF_ERROR(query.Run());
    marked = connection.ChangedRows();
    return absl::OkStatus();
  }));
  return marked;
}

absl::StatusOr<int64_t> SqliteEngine::PruneWorkClaims(absl::Time now) {
  int64_t deleted = 0;
  LEDGER_RETURN_IF_ERROR(InWriteTransaction([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(
        Query query, connection.Prepare("DELETE FROM work_claims WHERE expires_at <= ?",
                                        "prune work claims"));
    query.BindTime(now);
    LEDGER_RETURN_IF_ERROR(query.Run());
    deleted = connection.ChangedRows();
    return absl::OkStatus();
  }));
  return deleted;
}

absl::StatusOr<bool> SqliteEngine::InsertWebhookEventIfAbsent(const std::string& provider,
                                                              const std::string& event_id,
                                                              absl::Time received_at) {
  bool inserted = false;
  LEDGER_RETURN_IF_ERROR(InWriteTransaction([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(
        Query query,
        connection.Prepare("INSERT INTO webhook_events (provider, event_id, received_at)"
                           " VALUES (?, ?, ?) ON CONFLICT (provider, event_id) DO NOTHING",
                           "insert webhook event"));
    query.BindText(provider).BindText(event_id).BindTime(received_at);
    LEDGER_RETURN_IF_ERROR(query.Run());
    inserted = connection.ChangedRows() == 1;
    return absl::OkStatus();
  }));
  return inserted;
}

absl::StatusOr<bool> SqliteEngine::DeleteWebhookEvent(const std::string& provider,
                                                      const std::string& event_id) {
  bool deleted = false;
  LEDGER_RETURN_IF_ERROR(InWriteTransaction([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(
        Query query,
        connection.Prepare("DELETE FROM webhook_events WHERE provider = ? AND event_id = ?",
                           "delete webhook event"));
    query.BindText(provider).BindText(event_id);
    LEDGER_RETURN_IF_ERROR(query.Run());
    deleted = connection.ChangedRows() == 1;
    return absl::OkStatus();
  }));
  return deleted;
}

absl::StatusOr<int64_t> SqliteEngine::PruneWebhookEvents(absl::Time before) {
  int64_t deleted = 0;
  LEDGER_RETURN_IF_ERROR(InWriteTransaction([&](Connection& connection) -> absl::Status {
    LEDGER_ASSIGN_OR_RETURN(
        Query query, connection.Prepare("DELETE FROM webhook_events WHERE received_at < ?",
                                        "prune webhook events"));
    query.BindTime(before);
    LEDGER_RETURN_IF_ERROR(query.Run());
    deleted = connection.ChangedRows();
    return absl::OkStatus();
  }));
  return deleted;
}

}  // namespace ledger::sqlite_internal
