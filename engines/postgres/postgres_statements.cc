// The engine's SQL (postgres_statements.h). The write statement's parameters are
// written by name (WriteParameter); WriteStatementOf checks their positions.
#include "engines/postgres/postgres_statements.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"
#include "base/check.h"
#include "base/status.h"
#include "engines/postgres/postgres_rows.h"

namespace ledger::postgres_internal {
namespace {

using P = WriteParameter;

// lock_timeout is an int of milliseconds on the server.
constexpr int64_t kLockTimeoutMillisMax = 2'147'483'647;

// The claimed keys as a relation c(namespace, scope, key, position), position in claim
// order, from the three text[] parameters starting at $first. (Every pool session plans
// its statements generically, plan_cache_mode = force_generic_plan: SessionSettingsSql.)
std::string ClaimedKeysRelation(int first) {
  return absl::StrCat("unnest($", first, "::text[], $", first + 1, "::text[], $", first + 2,
                      "::text[]) WITH ORDINALITY AS c(namespace, scope, key, position)");
}

// The key row of each c (ClaimedKeysRelation), looked up by its primary key: a LATERAL
// subquery with LIMIT (the key is unique) is not flattened into a join, which the
// planner would answer with a scan of the whole table, as long as the table of every
// key recorded within their TTL.
std::string KeyRowOfEach(const char* columns, absl::string_view condition, const char* locking) {
  return absl::StrCat(" CROSS JOIN LATERAL (SELECT ", columns,
                      " FROM idempotency_keys k WHERE k.namespace = c.namespace"
                      " AND k.scope = c.scope AND k.key = c.key",
                      condition, locking, " LIMIT 1) AS k");
}

std::string Sql(std::initializer_list<absl::string_view> parts) { return absl::StrJoin(parts, ""); }

using Columns = std::initializer_list<WriteParameter>;

// The values a parameter takes in `shape`: one array, or one scalar per row (inline).
int ParameterWidth(WriteParameter parameter, const WriteShape& shape) {
  return shape.inline_rows.has_value()
             ? static_cast<int>(WriteParameterRows(parameter, *shape.inline_rows))
             : 1;
}

// The 0-based position of a parameter's first (or only) value in `shape`: the widths of
// the shape's parameters before it. Checked: its part is one of the shape's.
int PositionOf(WriteParameter parameter, const WriteShape& shape) {
  LEDGER_CHECK(shape.parts.Has(WritePartOf(parameter)))
      << "write parameter " << static_cast<int>(parameter) << " is of part "
      << WritePartName(WritePartOf(parameter)) << ", not in the shape " << shape.parts.bits();
  int position = 0;
  for (int i = 0; i < static_cast<int>(parameter); ++i) {
    const auto before = static_cast<WriteParameter>(i);
    if (shape.parts.Has(WritePartOf(before))) position += ParameterWidth(before, shape);
  }
  return position;
}

// How many values the parts' parameters take (the expected counts not included).
int PartParameterCount(const WriteShape& shape) {
  int count = 0;
  for (int i = 0; i < kWriteParameterCount; ++i) {
    const auto parameter = static_cast<WriteParameter>(i);
    if (shape.parts.Has(WritePartOf(parameter))) count += ParameterWidth(parameter, shape);
  }
  return count;
}

// A parameter's value as the statement reads it, cast to its type: "$7::text[]"
// (arrays) or, for row `row`, "$8::text" (inline).
std::string ValueSql(WriteParameter parameter, const WriteShape& shape, int row) {
  const char* type = ArrayElementName(WriteParameterElement(parameter));
  if (!shape.inline_rows.has_value()) {
    return absl::StrCat("$", PositionOf(parameter, shape) + 1, "::", type, "[]");
  }
  return absl::StrCat("$", PositionOf(parameter, shape) + row + 1, "::", type);
}

// The arrays of `columns`, as unnest takes them: "$7::text[], $8::bigint[]".
std::string Arrays(const WriteShape& shape, Columns columns) {
  std::vector<std::string> arrays;
  for (WriteParameter column : columns) arrays.push_back(ValueSql(column, shape, 0));
  return absl::StrJoin(arrays, ", ");
}

// The inline rows of `columns` (all of one part's rows), each followed by `tail` (a
// literal, or nothing): "VALUES ($7::text, $9::bigint), ($8::text, $10::bigint)".
std::string ValuesRows(const WriteShape& shape, Columns columns, absl::string_view tail = "") {
  const int64_t rows = WriteParameterRows(*columns.begin(), *shape.inline_rows);
  std::vector<std::string> lists;
  for (int row = 0; row < rows; ++row) {
    std::vector<std::string> values;
    for (WriteParameter column : columns) {
      LEDGER_CHECK(WriteParameterRows(column, *shape.inline_rows) == rows)
          << "write parameters of different rows in one VALUES list";
      values.push_back(ValueSql(column, shape, row));
    }
    if (!tail.empty()) values.emplace_back(tail);
    lists.push_back(absl::StrCat("(", absl::StrJoin(values, ", "), ")"));
  }
  return absl::StrCat("VALUES ", absl::StrJoin(lists, ", "));
}

// The rows of `columns`, each followed by `tail` if any, as an INSERT's source.
std::string RowsToInsert(const WriteShape& shape, Columns columns, absl::string_view tail = "") {
  if (shape.inline_rows.has_value()) return ValuesRows(shape, columns, tail);
  return absl::StrCat("SELECT *", tail.empty() ? "" : ", ", tail, " FROM unnest(",
                      Arrays(shape, columns), ")");
}

// The rows of `columns` as a FROM item, for the caller to name: "unnest(...)" or
// "(VALUES ...)".
std::string RowsToJoin(const WriteShape& shape, Columns columns) {
  if (shape.inline_rows.has_value()) return absl::StrCat("(", ValuesRows(shape, columns), ")");
  return absl::StrCat("unnest(", Arrays(shape, columns), ")");
}

// The key records of new_keys (`replaced` false) or replaced_keys as rows of
// idempotency_keys.
std::string KeyRecordRows(const WriteShape& shape, bool replaced) {
  const std::string rows =
      replaced ? RowsToInsert(shape,
                              {P::kReplacedKeyNamespaces, P::kReplacedKeyScopes, P::kReplacedKeys,
                               P::kReplacedKeyFingerprints, P::kReplacedKeyTransactionIds,
                               P::kReplacedKeyCreatedAt, P::kReplacedKeyExpiresAt},
                              "'committed'")
               : RowsToInsert(shape,
                              {P::kNewKeyNamespaces, P::kNewKeyScopes, P::kNewKeys,
                               P::kNewKeyFingerprints, P::kNewKeyTransactionIds,
                               P::kNewKeyCreatedAt, P::kNewKeyExpiresAt},
                              "'committed'");
  return Sql({"(namespace, scope, key, fingerprint, transaction_id, created_at, expires_at, state)\n  ",
              rows});
}

// The statement of one counted part in `shape`, without its RETURNING.
//
// A key whose claim found no row is recorded by a plain INSERT (new_keys); only a key
// whose row the claim saw (an expired record) takes the upsert (replaced_keys). ON
// CONFLICT costs every row a second index probe and a confirm record in the WAL; should
// a row have appeared since the claim after all, the plain INSERT fails on the primary
// key and the batch is retried.
//
// The rows the claim inserted (row mode only) that no item committed are deleted by
// dropped_claims (each is this transaction's own, locked since its claim). Like every
// part, planned once per session: a plan made while idempotency_keys was tiny may scan
// it (docs/engines/postgres.md, the known hazard), but only when there are rows to drop. A
// settlement's UPDATE (settled_holds) cannot see a hold inserted by this same statement;
// the pipeline never settles a hold placed in the same batch (it is not found yet). It
// settles only holds still pending: the caller compares the count.
std::string PartSql(WritePart part, const WriteShape& shape) {
  const WriteParts parts = shape.parts;
  switch (part) {
    case WritePart::kTransactions: {
      const bool hold_ids = parts.Has(WritePart::kSettledHolds);
      return Sql({"INSERT INTO transactions (id, kind, created_at, metadata, reversal_of, fingerprint",
                  hold_ids ? ", hold_id" : "", ")\n  ",
                  hold_ids ? RowsToInsert(shape, {P::kTransactionIds, P::kTransactionKinds,
                                                  P::kTransactionCreatedAt, P::kTransactionMetadata,
                                                  P::kTransactionReversalOf,
                                                  P::kTransactionFingerprints,
                                                  P::kTransactionHoldIds})
                           : RowsToInsert(shape, {P::kTransactionIds, P::kTransactionKinds,
                                                  P::kTransactionCreatedAt, P::kTransactionMetadata,
                                                  P::kTransactionReversalOf,
                                                  P::kTransactionFingerprints})});
    }
    case WritePart::kMetadata:
      return Sql({"INSERT INTO transaction_metadata (member_name, member_value, created_at, "
                  "transaction_id)\n  ",
                  RowsToInsert(shape, {P::kMetadataNames, P::kMetadataValues,
                                       P::kMetadataCreatedAt, P::kMetadataTransactionIds})});
    case WritePart::kEntries:
      return Sql({R"sql(INSERT INTO entries (account_id, account_version, transaction_id, entry_index, asset, amount,
                       balance_after, created_at, created_at_running_max)
  )sql",
                  RowsToInsert(shape, {P::kEntryAccountIds, P::kEntryAccountVersions,
                                       P::kEntryTransactionIds, P::kEntryIndexes, P::kEntryAssets,
                                       P::kEntryAmounts, P::kEntryBalancesAfter,
                                       P::kEntryCreatedAt, P::kEntryRunningMaxima})});
    case WritePart::kAccounts: {
      const bool pending = parts.Has(WritePart::kPendingAmounts);
      return Sql({R"sql(UPDATE accounts SET balance = changed.balance, version = changed.version,
    entries_running_max = COALESCE(changed.entries_running_max, accounts.entries_running_max))sql",
                  pending ? ", pending_debits = changed.pending_debits, "
                            "pending_credits = changed.pending_credits"
                          : "",
                  "\n  FROM ",
                  pending ? RowsToJoin(shape, {P::kAccountIds, P::kAccountBalances,
                                               P::kAccountVersions, P::kAccountLockedVersions,
                                               P::kAccountEntriesRunningMax,
                                               P::kAccountPendingDebits, P::kAccountPendingCredits})
                          : RowsToJoin(shape, {P::kAccountIds, P::kAccountBalances,
                                               P::kAccountVersions, P::kAccountLockedVersions,
                                               P::kAccountEntriesRunningMax}),
                  R"sql(
       AS changed (id, balance, version, locked_version, entries_running_max)sql",
                  pending ? ", pending_debits, pending_credits" : "", R"sql()
  WHERE accounts.id = changed.id
    AND (changed.locked_version IS NULL OR accounts.version = changed.locked_version))sql"});
    }
    case WritePart::kNewKeys:
      return Sql({"INSERT INTO idempotency_keys ", KeyRecordRows(shape, /*replaced=*/false)});
    case WritePart::kReplacedKeys:
      return Sql({"INSERT INTO idempotency_keys AS existing ",
                  KeyRecordRows(shape, /*replaced=*/true), R"sql(
  ON CONFLICT (namespace, scope, key) DO UPDATE
    SET fingerprint = EXCLUDED.fingerprint, state = 'committed',
        transaction_id = EXCLUDED.transaction_id, created_at = EXCLUDED.created_at,
        expires_at = EXCLUDED.expires_at
    WHERE existing.state = 'pending' OR existing.expires_at <= EXCLUDED.created_at)sql"});
    case WritePart::kEvents: {
      // In the batch's order, which the sequencer numbers them by: a VALUES list inserts
      // in its own order; unnest's is kept by its ordinality.
      const Columns events = {P::kEventTransactionIds, P::kEventTypes, P::kEventPayloads,
                              P::kEventCreatedAt};
      if (shape.inline_rows.has_value()) {
        return Sql({"INSERT INTO outbox_events (transaction_id, type, payload, created_at)\n  ",
                    ValuesRows(shape, events)});
      }
      return Sql({R"sql(INSERT INTO outbox_events (transaction_id, type, payload, created_at)
  SELECT event.transaction_id, event.type, event.payload, event.created_at
  FROM unnest()sql",
                  Arrays(shape, events), R"sql() WITH ORDINALITY
       AS event (transaction_id, type, payload, created_at, position)
  ORDER BY event.position)sql"});
    }
    case WritePart::kDroppedClaims:
      return Sql({"DELETE FROM idempotency_keys AS claimed\n  USING ",
                  RowsToJoin(shape, {P::kUnusedClaimNamespaces, P::kUnusedClaimScopes,
                                     P::kUnusedClaimKeys}),
                  R"sql( AS unused (namespace, scope, key)
  WHERE claimed.namespace = unused.namespace AND claimed.scope = unused.scope
    AND claimed.key = unused.key)sql"});
    case WritePart::kNewHolds:
      return Sql({"INSERT INTO holds (id, from_account, to_account, asset, amount, expires_at, "
                  "created_at, status)\n  ",
                  RowsToInsert(shape,
                               {P::kHoldIds, P::kHoldFromAccounts, P::kHoldToAccounts,
                                P::kHoldAssets, P::kHoldAmounts, P::kHoldExpiresAt,
                                P::kHoldCreatedAt},
                               "'pending'")});
    case WritePart::kSettledHolds:
      return Sql({"UPDATE holds SET status = settled.status, settled_by = settled.settled_by\n  FROM ",
                  RowsToJoin(shape, {P::kSettledHoldIds, P::kSettledHoldStatuses,
                                     P::kSettledHoldSettledBy}),
                  R"sql( AS settled (id, status, settled_by)
  WHERE holds.id = settled.id AND holds.status = 'pending')sql"});
    case WritePart::kPendingAmounts:
      break;
  }
  LEDGER_CHECK(false) << "write part " << static_cast<int>(part) << " has no statement of its own";
  return "";
}

// One statement writes everything a batch posts: the transactions, their entries, the
// accounts' new balances and versions, the key records and the outbox events, each
// batch of rows carried as arrays or inline (WriteShape), one CTE per part present. It
// is sent once, at Commit, so a submit costs the same round trips whatever the number
// of entries. Its SELECT hands the row count of each part, with the counts the caller
// expects (the last parameters), to kCheckWriteCountsFunction: a difference raises, and
// the statement writes nothing.
//
// Only the parts with rows are in it: the generic plan of a part without rows still
// opens its table and indexes at every call. (It also once joined an empty array with
// a scan of the whole key table, on every commit: 0.7 ms of a write's 0.9 ms at 32
// clients, docs/benchmarks.md; a part now runs only with rows.)
std::string WriteBatchSqlText(const WriteShape& shape) {
  std::vector<std::string> ctes, counts, expected;
  int position = PartParameterCount(shape);
  for (int i = 0; i < kCountedWritePartCount; ++i) {
    const auto part = static_cast<WritePart>(i);
    if (!shape.parts.Has(part)) continue;
    ctes.push_back(absl::StrCat(WritePartName(part), " AS (\n  ", PartSql(part, shape),
                                "\n  RETURNING 1)"));
    counts.push_back(absl::StrCat("(SELECT count(*) FROM ", WritePartName(part), ")"));
    expected.push_back(absl::StrCat("$", ++position, "::bigint"));
  }
  // Arrays: the expected counts are one bigint[]; inline: a bigint each.
  const std::string expected_sql =
      shape.inline_rows.has_value()
          ? absl::StrCat("ARRAY[", absl::StrJoin(expected, ", "), "]")
          : absl::StrCat("$", PartParameterCount(shape) + 1, "::bigint[]");
  return absl::StrCat("WITH ", absl::StrJoin(ctes, ",\n"), "\nSELECT ",
                      kCheckWriteCountsFunction, "(ARRAY[", absl::StrJoin(counts, ", "), "], ",
                      expected_sql, ")\n");
}

// An account's pending holds at $2 (PendingHoldTotals): out of it, the lapsed amounts
// and the still-reserving holds placed since $3, in one pass over its pending holds
// (holds_pending_by_from_account); into it, the lapsed amounts
// (holds_pending_by_to_account). numeric sums cannot overflow; each saturates at the
// bigint maximum.
constexpr char kHoldTotalsSql[] =
    "SELECT d.lapsed, c.lapsed, d.reserving_count, d.reserving_amount FROM "
    "(SELECT LEAST(COALESCE(sum(amount::numeric) FILTER (WHERE expires_at <= $2), 0), "
    "9223372036854775807)::bigint AS lapsed, "
    "count(*) FILTER (WHERE (expires_at IS NULL OR expires_at > $2) AND created_at >= $3) "
    "AS reserving_count, "
    "LEAST(COALESCE(sum(amount::numeric) FILTER (WHERE (expires_at IS NULL OR expires_at > $2) "
    "AND created_at >= $3), 0), 9223372036854775807)::bigint AS reserving_amount "
    "FROM holds WHERE status = 'pending' AND from_account = $1) d, "
    "(SELECT LEAST(COALESCE(sum(amount::numeric), 0), 9223372036854775807)::bigint AS lapsed "
    "FROM holds WHERE status = 'pending' AND to_account = $1 AND expires_at <= $2) c";

std::vector<std::pair<const char*, std::string>> Statements() {
  return {
      {statement::kPutAsset,
       "WITH inserted AS (INSERT INTO assets (code, scale) VALUES ($1, $2) "
       "ON CONFLICT (code) DO NOTHING RETURNING scale) "
       "SELECT scale FROM inserted UNION ALL "
       "SELECT scale FROM assets WHERE code = $1 AND NOT EXISTS (SELECT 1 FROM inserted)"},
      {statement::kSelectAsset, Sql({"SELECT ", kAssetColumns, " FROM assets WHERE code = $1"})},
      {statement::kListAssets, Sql({"SELECT ", kAssetColumns, " FROM assets ORDER BY code"})},
      {statement::kInsertAccount,
       Sql({"INSERT INTO accounts (", kAccountColumns,
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"})},
      {statement::kSelectAccount,
       Sql({"SELECT ", kAccountColumns, " FROM accounts WHERE id = $1"})},
      {statement::kListAccounts,
       Sql({"SELECT ", kAccountColumns, " FROM accounts WHERE id > $1 ORDER BY id LIMIT $2"})},
      {statement::kCloseAccountIfZeroBalance,
       "UPDATE accounts SET closed = TRUE WHERE id = $1 AND balance = 0 "
       "AND pending_debits = 0 AND pending_credits = 0"},
      {statement::kSelectTransaction,
       Sql({"SELECT ", kTransactionWithEntryColumns, " FROM transactions t", kTransactionJoins,
            " WHERE t.id = $1 ORDER BY e.entry_index"})},
      {statement::kSelectTransactions, SelectTransactionsSql()},
      {statement::kListTransactions,
       Sql({"SELECT ", kTransactionWithEntryColumns,
            " FROM (SELECT * FROM transactions WHERE id > $1 ORDER BY id LIMIT $2) t",
            kTransactionJoins, " ORDER BY t.id, e.entry_index"})},
      {statement::kListEntries,
       "SELECT account_id, asset, amount, balance_after, account_version, transaction_id, "
       "created_at FROM entries "
       "WHERE account_id = $1 AND account_version > $2 ORDER BY account_version LIMIT $3"},
      {statement::kListKeyRecordsFirst, Sql({"SELECT ", kKeyColumns,
                                             " FROM idempotency_keys WHERE state = 'committed' "
                                             "ORDER BY namespace, scope, key LIMIT $1"})},
      {statement::kListKeyRecordsAfter,
       Sql({"SELECT ", kKeyColumns,
            " FROM idempotency_keys WHERE state = 'committed' "
            "AND (namespace, scope, key) > ($1, $2, $3) ORDER BY namespace, scope, key LIMIT $4"})},
      // SKIP LOCKED: a row a claimer holds (row mode) is being replaced; leave it to it.
      {statement::kPruneExpiredKeys,
       "DELETE FROM idempotency_keys AS k USING (SELECT namespace, scope, key "
       "FROM idempotency_keys WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2 "
       "FOR UPDATE SKIP LOCKED) AS expired WHERE k.namespace = expired.namespace "
       "AND k.scope = expired.scope AND k.key = expired.key"},
      {statement::kListEvents,
       Sql({"SELECT ", kEventColumns,
            " FROM outbox_events WHERE sequence > $1 ORDER BY sequence LIMIT $2"})},
      {statement::kIsReversed, "SELECT EXISTS (SELECT 1 FROM transactions WHERE reversal_of = $1)"},
      // Rows are locked in the order LockRows receives them: the caller's order.
      {statement::kLockAccounts,
       Sql({"SELECT ", kAccountColumnsOfA, ", a.entries_running_max"
            " FROM unnest($1::text[]) WITH ORDINALITY AS wanted (id, position) "
            "JOIN accounts a ON a.id = wanted.id ORDER BY wanted.position FOR UPDATE OF a"})},
      // numeric sums cannot overflow; the total saturates at the bigint maximum.
      {statement::kDebitUsage,
       "SELECT count(*), LEAST(COALESCE(sum(-(amount::numeric)), 0), 9223372036854775807)::bigint "
       "FROM entries WHERE account_id = $1 AND created_at >= $2 AND amount < 0"},
      {statement::kSelectHold, Sql({"SELECT ", kHoldColumns, " FROM holds WHERE id = $1"})},
      // The entry with the greatest version whose created_at_running_max is <= $2, by a
      // binary search over the primary key (account_id, account_version), no index of its
      // own (schema/postgres/0007_fewer_reads_indexes.sql). Correct because the running
      // maximum never decreases along an account's versions
      // (engines/common/entry_running_max.h) and the versions run 1..N without a gap (the
      // posting invariants, checked on every write; `ledger verify`). `bounds` keeps
      // [low, high]: every version <= low is at most $2 (0: none), every version > high
      // after it; each step probes the middle version (one entries_pkey lookup) and halves
      // the range: at most ceil(log2(N + 1)) probes, in one snapshot. The narrowest row
      // names the answer; column 7 is false when the search stopped short (only a missing
      // version can: data loss), the entry's columns NULL when no version qualifies.
      {statement::kSelectEntryAsOf,
       "WITH RECURSIVE bounds (low, high) AS ("
       " SELECT 0::bigint, coalesce((SELECT account_version FROM entries WHERE account_id = $1"
       " ORDER BY account_version DESC LIMIT 1), 0)"
       " UNION ALL"
       " SELECT CASE WHEN probe.created_at_running_max <= $2 THEN probe.account_version"
       " ELSE bounds.low END,"
       " CASE WHEN probe.created_at_running_max <= $2 THEN bounds.high"
       " ELSE probe.account_version - 1 END"
       " FROM bounds JOIN entries AS probe ON probe.account_id = $1"
       " AND probe.account_version = (bounds.low + bounds.high + 1) / 2"
       " WHERE bounds.low < bounds.high)"
       " SELECT e.account_id, e.asset, e.amount, e.balance_after, e.account_version,"
       " e.transaction_id, e.created_at, narrowest.low = narrowest.high"
       " FROM (SELECT low, high FROM bounds ORDER BY high - low LIMIT 1) AS narrowest"
       " LEFT JOIN entries AS e ON e.account_id = $1 AND e.account_version = narrowest.low"},
      {statement::kSelectCommittedKey,
       Sql({"SELECT ", kKeyColumns, " FROM idempotency_keys WHERE namespace = $1",
            " AND scope = $2 AND key = $3 AND state = 'committed'"})},
      {statement::kSelectHolds,
       Sql({"SELECT ", kHoldColumns, " FROM holds WHERE id = ANY ($1::text[])"})},
      {statement::kListHolds,
       Sql({"SELECT ", kHoldColumns, " FROM holds WHERE id > $1 ORDER BY id LIMIT $2"})},
      // One branch per side, each an ordered range of its (account, id) index; UNION
      // drops the second copy of a hold from an account to itself.
      {statement::kListAccountHolds,
       Sql({"(SELECT ", kHoldColumns,
            " FROM holds WHERE from_account = $1 AND id > $2 ORDER BY id LIMIT $3) UNION "
            "(SELECT ", kHoldColumns,
            " FROM holds WHERE to_account = $1 AND id > $2 ORDER BY id LIMIT $3) "
            "ORDER BY id LIMIT $3"})},
      // A range of holds_pending_by_expiry, in its order.
      {statement::kListLapsedHolds,
       Sql({"SELECT ", kHoldColumns,
            " FROM holds WHERE status = 'pending' AND expires_at IS NOT NULL "
            "AND expires_at <= $1 ORDER BY expires_at, id LIMIT $2"})},
      {statement::kHoldTotals, kHoldTotalsSql},
      {statement::kInsertWorkClaim,
       Sql({"WITH inserted AS (INSERT INTO work_claims (", kWorkClaimColumns,
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) "
            "ON CONFLICT (namespace, scope, key) DO NOTHING RETURNING ",
            kWorkClaimColumns, ") SELECT ", kWorkClaimColumns, " FROM inserted UNION ALL SELECT ",
            kWorkClaimColumns,
            " FROM work_claims WHERE namespace = $1 AND scope = $2 AND key = $3 "
            "AND NOT EXISTS (SELECT 1 FROM inserted)"})},
      {statement::kReplaceWorkClaim,
       "UPDATE work_claims SET fingerprint = $6, state = $7, owner = $8, attempt = $9, "
       "lease_expires_at = $10, result = $11, created_at = $12, updated_at = $13, "
       "expires_at = $14 WHERE namespace = $1 AND scope = $2 AND key = $3 AND owner = $4 "
       "AND attempt = $5"},
      {statement::kDeleteWorkClaim,
       "DELETE FROM work_claims WHERE namespace = $1 AND scope = $2 AND key = $3 "
       "AND owner = $4 AND state = 'pending'"},
      {statement::kMarkAbandonedWorkClaims,
       "UPDATE work_claims SET state = 'abandoned', updated_at = $1 "
       "WHERE state = 'pending' AND lease_expires_at <= $1"},
      {statement::kPruneWorkClaims, "DELETE FROM work_claims WHERE expires_at <= $1"},
      {statement::kInsertWebhookEvent,
       "INSERT INTO webhook_events (provider, event_id, received_at) VALUES ($1, $2, $3) "
       "ON CONFLICT (provider, event_id) DO NOTHING"},
      {statement::kDeleteWebhookEvent,
       "DELETE FROM webhook_events WHERE provider = $1 AND event_id = $2"},
      {statement::kPruneWebhookEvents, "DELETE FROM webhook_events WHERE received_at < $1"},
  };
}


// The sequencer (schema/postgres/0002): numbers the committed, unnumbered events in
// insert order after the highest sequence, under one transaction-scoped advisory lock.
// Each statement takes its own snapshot (READ COMMITTED), so the UPDATE sees every
// number the previous sequencer committed: sequences follow commit order, and an event
// in flight is numbered only once it committed, after every event already numbered.
constexpr char kSequenceCommittedEvents[] = R"sql(
BEGIN;
SELECT pg_advisory_xact_lock(hashtextextended('ledger.outbox_sequencer', $LOCK_SEED));
WITH unsequenced AS (
  SELECT insert_order, row_number() OVER (ORDER BY insert_order) AS n
  FROM outbox_events WHERE sequence IS NULL ORDER BY insert_order LIMIT 10000),
last AS (SELECT COALESCE(max(sequence), 0) AS sequence FROM outbox_events)
UPDATE outbox_events AS e SET sequence = last.sequence + unsequenced.n
FROM unsequenced, last WHERE e.insert_order = unsequenced.insert_order;
COMMIT;
)sql";

}  // namespace

// Each id by the indexes: LATERAL subqueries behind OFFSET 0 are not flattened into
// joins, which the planner answers with scans of the tables (they grow with history).
const std::string& SelectTransactionsSql() {
  static const std::string* const sql = new std::string(
      Sql({"SELECT ", kTransactionWithEntryColumns,
           " FROM unnest($1::text[]) AS wanted (id)"
           " CROSS JOIN LATERAL (SELECT * FROM transactions WHERE id = wanted.id OFFSET 0) t"
           " LEFT JOIN LATERAL (SELECT * FROM holds WHERE id = t.id OFFSET 0) h ON true"
           " LEFT JOIN LATERAL (SELECT * FROM entries WHERE transaction_id = t.id OFFSET 0) e"
           " ON true ORDER BY t.id, e.entry_index"}));
  return *sql;
}

const char* WritePartName(WritePart part) {
  switch (part) {
    case WritePart::kTransactions: return "new_transactions";
    case WritePart::kMetadata: return "new_metadata";
    case WritePart::kEntries: return "new_entries";
    case WritePart::kAccounts: return "updated_accounts";
    case WritePart::kNewKeys: return "new_keys";
    case WritePart::kReplacedKeys: return "replaced_keys";
    case WritePart::kEvents: return "new_events";
    case WritePart::kDroppedClaims: return "dropped_claims";
    case WritePart::kNewHolds: return "new_holds";
    case WritePart::kSettledHolds: return "settled_holds";
    case WritePart::kPendingAmounts: return "pending_amounts";
  }
  return "?";
}

WritePart WritePartOf(WriteParameter parameter) {
  // The enum lists each part's parameters together (postgres_statements.h): the first of
  // each run, and its part.
  static constexpr std::pair<WriteParameter, WritePart> kFirsts[] = {
      {P::kTransactionIds, WritePart::kTransactions},
      {P::kTransactionHoldIds, WritePart::kSettledHolds},
      {P::kMetadataNames, WritePart::kMetadata},
      {P::kEntryAccountIds, WritePart::kEntries},
      {P::kAccountIds, WritePart::kAccounts},
      {P::kAccountPendingDebits, WritePart::kPendingAmounts},
      {P::kNewKeyNamespaces, WritePart::kNewKeys},
      {P::kReplacedKeyNamespaces, WritePart::kReplacedKeys},
      {P::kEventTransactionIds, WritePart::kEvents},
      {P::kUnusedClaimNamespaces, WritePart::kDroppedClaims},
      {P::kHoldIds, WritePart::kNewHolds},
      {P::kSettledHoldIds, WritePart::kSettledHolds},
  };
  WritePart part = WritePart::kTransactions;
  for (const auto& [first, first_part] : kFirsts) {
    if (static_cast<int>(first) > static_cast<int>(parameter)) break;
    part = first_part;
  }
  return part;
}

ArrayElement WriteParameterElement(WriteParameter parameter) {
  switch (parameter) {
    case P::kEntryIndexes:
      return ArrayElement::kInteger;
    case P::kTransactionCreatedAt:
    case P::kMetadataCreatedAt:
    case P::kEntryAccountVersions:
    case P::kEntryAmounts:
    case P::kEntryBalancesAfter:
    case P::kEntryCreatedAt:
    case P::kEntryRunningMaxima:
    case P::kAccountBalances:
    case P::kAccountVersions:
    case P::kAccountLockedVersions:
    case P::kAccountEntriesRunningMax:
    case P::kAccountPendingDebits:
    case P::kAccountPendingCredits:
    case P::kNewKeyCreatedAt:
    case P::kNewKeyExpiresAt:
    case P::kReplacedKeyCreatedAt:
    case P::kReplacedKeyExpiresAt:
    case P::kEventCreatedAt:
    case P::kHoldAmounts:
    case P::kHoldExpiresAt:
    case P::kHoldCreatedAt:
      return ArrayElement::kBigint;
    default:  // ids, names, keys, fingerprints, metadata, payloads, statuses
      return ArrayElement::kText;
  }
}

int64_t WriteParameterRows(WriteParameter parameter, const WriteBatchCounts& rows) {
  switch (WritePartOf(parameter)) {
    case WritePart::kSettledHolds:
      // kTransactionHoldIds is a column of each transaction; the others are settlements.
      return parameter == P::kTransactionHoldIds ? rows[WritePart::kTransactions]
                                                 : rows[WritePart::kSettledHolds];
    case WritePart::kPendingAmounts:
      return rows[WritePart::kAccounts];  // columns of each account
    default:
      return rows[WritePartOf(parameter)];
  }
}

int WriteParameterIndex(WriteParameter parameter, WriteParts parts) {
  return PositionOf(parameter, WriteShape{.parts = parts});
}

std::string WriteParameterSql(WriteParameter parameter, WriteParts parts) {
  return absl::StrCat("$", WriteParameterIndex(parameter, parts) + 1);
}

WriteParameters::WriteParameters(WriteParts parts)
    : parts_(parts), values_(kWriteParameterCount) {}

void WriteParameters::Set(WriteParameter parameter, BinaryArray value) {
  const size_t position = static_cast<size_t>(parameter);
  LEDGER_CHECK(!values_[position].has_value()) << "write parameter " << position << " set twice";
  LEDGER_CHECK(value.element == WriteParameterElement(parameter))
      << "write parameter " << position << " is a " << ArrayElementName(value.element)
      << "[], not the " << ArrayElementName(WriteParameterElement(parameter)) << "[] of its SQL";
  if (!parts_.Has(WritePartOf(parameter))) {
    // The part is not in the statement: were there rows for it, they would be lost.
    LEDGER_CHECK(value.length == 0) << "write parameter " << position << " has " << value.length
                                    << " rows but its part " << WritePartName(WritePartOf(parameter))
                                    << " is not in the statement";
  }
  values_[position] = std::move(value);
}

std::vector<BinaryArray> WriteParameters::Take() && {
  std::vector<BinaryArray> values;
  values.reserve(values_.size());
  for (size_t i = 0; i < values_.size(); ++i) {
    if (!parts_.Has(WritePartOf(static_cast<WriteParameter>(i)))) continue;
    LEDGER_CHECK(values_[i].has_value()) << "write parameter " << i << " was not set";
    values.push_back(*std::move(values_[i]));
  }
  return values;
}

std::string WriteStatementName(const WriteShape& shape) {
  std::string name = absl::StrCat("write_batch_", absl::Hex(shape.parts.bits()));
  if (!shape.inline_rows.has_value()) return name;
  absl::StrAppend(&name, "_rows");
  for (int i = 0; i < kCountedWritePartCount; ++i) {
    const auto part = static_cast<WritePart>(i);
    if (shape.parts.Has(part)) absl::StrAppend(&name, "_", (*shape.inline_rows)[part]);
  }
  return name;
}

const WriteStatement& WriteStatementOf(const WriteShape& shape) {
  using ShapeKey = std::pair<uint32_t, std::optional<decltype(WriteBatchCounts::rows)>>;
  static absl::Mutex mutex(absl::kConstInit);
  static auto* const built =
      new std::map<ShapeKey, std::unique_ptr<const WriteStatement>>();  // ABSL_GUARDED_BY(mutex)
  const WriteParts parts = shape.parts;
  absl::MutexLock lock(&mutex);
  std::unique_ptr<const WriteStatement>& statement = (*built)[ShapeKey(
      parts.bits(), shape.inline_rows.has_value()
                        ? std::make_optional(shape.inline_rows->rows)
                        : std::nullopt)];
  if (statement != nullptr) return *statement;
  LEDGER_CHECK(!parts.empty()) << "a write statement of no part";
  LEDGER_CHECK(!parts.Has(WritePart::kPendingAmounts) || parts.Has(WritePart::kAccounts))
      << "pending amounts without the accounts they belong to";
  LEDGER_CHECK(!parts.Has(WritePart::kSettledHolds) || parts.Has(WritePart::kTransactions))
      << "settlements without the transactions that carry their hold_id";
  auto made = std::make_unique<WriteStatement>();
  made->shape = shape;
  made->name = WriteStatementName(shape);
  int counted_parts = 0;
  for (int i = 0; i < kCountedWritePartCount; ++i) {
    const auto part = static_cast<WritePart>(i);
    if (parts.Has(part)) ++counted_parts;
    if (!shape.inline_rows.has_value()) continue;
    const int64_t rows = (*shape.inline_rows)[part];
    LEDGER_CHECK(parts.Has(part) ? rows > 0 : rows == 0)
        << "inline rows of " << WritePartName(part) << ": " << rows << " for a part "
        << (parts.Has(part) ? "in" : "not in") << " the shape";
  }
  made->sql = WriteBatchSqlText(shape);
  // and the expected counts: one array, or one each
  made->parameter_count =
      PartParameterCount(shape) + (shape.inline_rows.has_value() ? counted_parts : 1);
  const ParameterUse use = ParameterUseOf(made->sql);
  LEDGER_CHECK(use.highest == made->parameter_count && use.contiguous)
      << made->name << " uses $1..$" << use.highest << (use.contiguous ? "" : " with gaps")
      << ", not the " << made->parameter_count << " of its parts and the expected counts";
  statement = std::move(made);
  return *statement;
}

ParameterUse ParameterUseOf(std::string_view sql) {
  std::set<int> used;
  for (size_t i = 0; i < sql.size(); ++i) {
    if (sql[i] != '$' || i + 1 >= sql.size() ||
        !std::isdigit(static_cast<unsigned char>(sql[i + 1]))) {
      continue;
    }
    int number = 0;
    size_t j = i + 1;
    for (; j < sql.size() && std::isdigit(static_cast<unsigned char>(sql[j])); ++j) {
      number = number * 10 + (sql[j] - '0');
    }
    used.insert(number);
    i = j - 1;
  }
  ParameterUse use;
  if (used.empty()) return use;
  use.highest = *used.rbegin();
  use.contiguous = static_cast<int>(used.size()) == use.highest && *used.begin() == 1;
  return use;
}

void DeclareStatements(pqxx::connection_base& connection) {
  for (const auto& [name, sql] : Statements()) connection.prepare(name, sql);
}

// Advisory mode: takes pg_advisory_xact_lock on each identity's hash, in order; the key
// rows are read by the next statement, whose READ COMMITTED snapshot is taken after the
// locks were granted and so sees whatever the previous holders committed. The
// subquery's ORDER BY keeps it from being flattened, so the locks are taken row by row
// as sorted. One key: the same lock, on the identity given.
std::string AdvisoryLocksSql(std::string_view lock_seed, ClaimKeys keys) {
  if (keys == ClaimKeys::kOne) {
    return absl::StrCat("SELECT pg_advisory_xact_lock(hashtextextended($1::text, ",
                        View(lock_seed), "))");
  }
  return absl::StrCat("SELECT pg_advisory_xact_lock(hashtextextended(c.identity, ",
                      View(lock_seed),
                      ")) FROM (SELECT identity FROM unnest($1::text[]) WITH ORDINALITY "
                      "AS u(identity, position) ORDER BY position) c");
}

std::string RememberedRowsCheckSql(std::string_view lock_seed) {
  // The accounts' lock is an InitPlan of the CASE branch: taken only once every key's
  // lock is and no row is under any key, so a resend never waits for its accounts. The
  // locks' subquery is sorted (not flattened), so they are tried row by row, in order.
  return absl::StrCat(
      "WITH probe AS (SELECT"
      " (SELECT count(*) FROM (SELECT pg_try_advisory_xact_lock(hashtextextended(c.identity, ",
      View(lock_seed), ")) AS locked FROM (SELECT identity FROM unnest($1::text[])"
      " WITH ORDINALITY AS u(identity, position) ORDER BY position) c) l WHERE l.locked)"
      " AS locked, (SELECT count(*) FROM idempotency_keys k"
      " JOIN unnest($2::text[], $3::text[], $4::text[]) AS u(namespace, scope, key)"
      " ON k.namespace = u.namespace AND k.scope = u.scope AND k.key = u.key) AS key_rows)"
      " SELECT ", kCheckWriteCountsFunction, "(ARRAY[p.locked, p.key_rows,"
      " CASE WHEN p.locked = cardinality($1::text[]) AND p.key_rows = 0 THEN"
      " (SELECT count(*) FROM (SELECT * FROM accounts WHERE id = ANY($5::text[])"
      " ORDER BY id FOR UPDATE) a"
      " JOIN unnest($5::text[], $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[],"
      " $10::bigint[], $11::bigint[])"
      " AS r(id, version, balance, pending_debits, pending_credits, closed, running_max)"
      " ON a.id = r.id AND a.version = r.version AND a.balance = r.balance"
      " AND a.pending_debits = r.pending_debits AND a.pending_credits = r.pending_credits"
      " AND a.closed::int = r.closed"
      " AND a.entries_running_max IS NOT DISTINCT FROM r.running_max)"
      " ELSE 0 END]::bigint[],"
      " ARRAY[cardinality($1::text[]), 0, cardinality($5::text[])]::bigint[]) FROM probe p");
}

namespace {

// The key row of the one key ($first, $first + 1, $first + 2), by its primary key.
std::string OneKeyRow(int first) {
  return absl::StrCat("idempotency_keys k WHERE k.namespace = $", first, " AND k.scope = $",
                      first + 1, " AND k.key = $", first + 2);
}

// "NULL, NULL, ..." : `count` columns of a UNION branch that the other branch fills.
std::string NullColumns(int count) {
  std::vector<absl::string_view> nulls(count, "NULL");
  return absl::StrJoin(nulls, ", ");
}

// A statement's two forms, built once.
ClaimStatement FormOf(ClaimKeys keys, const char* one_name, const std::string* one_sql,
                      const char* many_name, const std::string* many_sql) {
  return keys == ClaimKeys::kOne ? ClaimStatement{one_name, *one_sql}
                                 : ClaimStatement{many_name, *many_sql};
}

}  // namespace

// Row mode: inserts each key's final record (the one the ledger will commit, so the
// write sends no key row for it) unless its row exists (waiting for a concurrent
// inserter of the same key to finish), then locks the rows FOR UPDATE (waiting for a
// concurrent replacer), both in claim order. A new key is claimed by its uncommitted
// record, which no other session reads and every other claimer of it waits for in its
// own INSERT; the row locks of existing keys are taken in the global order; a deadlock
// the server still finds is RetryableError, and the batch reruns.
ClaimStatement InsertRecordsStatement(ClaimKeys keys) {
  static const std::string* const many = new std::string(
      "INSERT INTO idempotency_keys (namespace, scope, key, fingerprint, state, "
      "transaction_id, created_at, expires_at) SELECT c.namespace, c.scope, c.key, "
      "c.fingerprint, 'committed', c.transaction_id, c.created_at, c.expires_at "
      "FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], "
      "$7::bigint[]) WITH ORDINALITY AS c(namespace, scope, key, fingerprint, transaction_id, "
      "created_at, expires_at, position) "
      "ORDER BY c.position ON CONFLICT (namespace, scope, key) DO NOTHING");
  static const std::string* const one = new std::string(
      "INSERT INTO idempotency_keys (namespace, scope, key, fingerprint, state, "
      "transaction_id, created_at, expires_at) VALUES ($1::text, $2::text, $3::text, "
      "$4::text, 'committed', $5::text, $6::bigint, $7::bigint) "
      "ON CONFLICT (namespace, scope, key) DO NOTHING");
  return FormOf(keys, "claim_insert_record", one, "claim_insert_records", many);
}

ClaimStatement LockKeyRowsStatement(ClaimKeys keys) {
  static const std::string* const many = new std::string(
      absl::StrCat("SELECT 1 FROM ", ClaimedKeysRelation(1), KeyRowOfEach("1", "", " FOR UPDATE")));
  static const std::string* const one =
      new std::string(absl::StrCat("SELECT 1 FROM ", OneKeyRow(1), " FOR UPDATE"));
  return FormOf(keys, "claim_lock_key_row", one, "claim_lock_key_rows", many);
}

ClaimStatement ReadKeyStatement() {
  static const std::string* const sql =
      new std::string(absl::StrCat("SELECT ", kKeyColumnsOfK, " FROM ", OneKeyRow(1)));
  return {"claim_read_key", *sql};
}

// The lock's NOT EXISTS is uncorrelated, so the server evaluates it once, before it
// reads or locks any account row; in the statement's snapshot, taken after the claim was
// granted (the claim's advisory lock or row lock is held, so no other writer of these
// keys can commit meanwhile). In row mode the rows the claim itself inserted carry its
// transaction ids ($5; another transaction's would still be uncommitted and the claim
// would have waited), so they do not stop the locks; an expired committed record does
// (the ledger replaces it, after a lock_accounts of its own).
namespace {

// The accounts ($1) locked unless `committed_key` ("<relation> k WHERE ...") finds a row.
std::string LockAccountsUnlessSql(absl::string_view committed_key) {
  return absl::StrCat(
      "SELECT ", kAccountColumnsOfA, ", a.entries_running_max"
      " FROM unnest($1::text[]) WITH ORDINALITY AS wanted (id, position)"
      " JOIN accounts a ON a.id = wanted.id WHERE NOT EXISTS (SELECT 1 FROM ", committed_key,
      ") ORDER BY wanted.position FOR UPDATE OF a");
}

constexpr char kCommitted[] = "k.state = 'committed'";

// Row mode: not a row the claim itself inserted (it carries the claim's transaction id).
constexpr char kNotClaimsOwn[] = " AND k.transaction_id <> ALL ($5::text[])";
constexpr char kNotClaimsOwnOne[] = " AND k.transaction_id <> $5::text";

}  // namespace

ClaimStatement LockAccountsUnlessReplayedStatement(bool row_mode) {
  static const std::string* const advisory =
      new std::string(LockAccountsUnlessSql(absl::StrCat(OneKeyRow(2), " AND ", kCommitted)));
  static const std::string* const row = new std::string(
      LockAccountsUnlessSql(absl::StrCat(OneKeyRow(2), " AND ", kCommitted, kNotClaimsOwnOne)));
  return row_mode ? ClaimStatement{"lock_accounts_unless_replayed_row_mode_one_key", *row}
                  : ClaimStatement{"lock_accounts_unless_replayed_one_key", *advisory};
}

// The claimed_keys CTE reads the key rows once; the lock's test reads that CTE.
ClaimStatement ReadKeysAndLockAccountsStatement(bool row_mode) {
  auto make = [](absl::string_view not_claims_own) {
    return new std::string(absl::StrCat(
        "WITH claimed_keys AS MATERIALIZED (SELECT k.* FROM ", ClaimedKeysRelation(2),
        KeyRowOfEach(kKeyColumnsOfK, "", ""), "),"
        " locked_accounts AS MATERIALIZED (",
        LockAccountsUnlessSql(absl::StrCat("claimed_keys k WHERE ", kCommitted, not_claims_own)),
        ")"
        " SELECT k.*, ", NullColumns(kReadKeysAccountColumnCount), " FROM claimed_keys k"
        " UNION ALL SELECT ", NullColumns(kReadKeysAccountColumn), ", a.* FROM locked_accounts a"));
  };
  static const std::string* const advisory = make("");
  static const std::string* const row = make(kNotClaimsOwn);
  return row_mode ? ClaimStatement{"read_keys_lock_accounts_row_mode", *row}
                  : ClaimStatement{"read_keys_lock_accounts", *advisory};
}

std::string ClaimLockTimeout(absl::Duration wait_max) {
  int64_t millis = absl::ToInt64Milliseconds(absl::Ceil(wait_max, absl::Milliseconds(1)));
  millis = std::clamp<int64_t>(millis, 1, kLockTimeoutMillisMax);
  return absl::StrCat(millis, "ms");
}

std::string SessionSettingsSql(std::string_view lock_timeout,
                               std::string_view statement_timeout) {
  return absl::StrCat("SET lock_timeout = '", View(lock_timeout), "'; SET statement_timeout = '",
                      View(statement_timeout),
                      "'; SET plan_cache_mode = force_generic_plan; SET enable_seqscan = off");
}

std::string SearchPathSql(std::string_view schema) {
  return absl::StrCat("SET search_path TO ", View(schema));
}

namespace {
// The two starts that name a server process (ServerBackend), as microseconds since the
// epoch: written once, since each is compared with what the other statements read.
constexpr char kBackendStartMicros[] = "(extract(epoch FROM backend_start) * 1000000)::bigint";
constexpr char kServerStartMicros[] =
    "(extract(epoch FROM pg_postmaster_start_time()) * 1000000)::bigint";

// The pg_stat_activity row of one server process (integers only: nothing to quote).
std::string ServerBackendRow(int pid, int64_t started_micros) {
  return absl::StrCat("FROM pg_stat_activity WHERE pid = ", pid, " AND ", kBackendStartMicros,
                      " = ", started_micros);
}
}  // namespace

std::string ServerBackendOfSessionSql() {
  return absl::StrCat("SELECT pid, ", kBackendStartMicros, ", ", kServerStartMicros,
                      " FROM pg_stat_activity WHERE pid = pg_backend_pid()");
}

// pg_terminate_backend without its wait argument (PostgreSQL 14): the caller polls.
std::string TerminateServerBackendSql(int pid, int64_t started_micros) {
  return absl::StrCat("SELECT count(pg_terminate_backend(pid)) ",
                      ServerBackendRow(pid, started_micros));
}

std::string ServerBackendPresentSql(int pid, int64_t started_micros,
                                    int64_t server_started_micros) {
  return absl::StrCat("SELECT CASE WHEN ", kServerStartMicros, " = ", server_started_micros,
                      " THEN (SELECT count(*) ", ServerBackendRow(pid, started_micros),
                      ") ELSE -1 END");
}

std::string AdvisoryLockSeed(std::string_view schema) {
  if (schema.empty()) return "0";
  return absl::StrCat("hashtextextended('", View(schema), "', 0)");
}

std::string SequenceCommittedEventsSql(std::string_view schema) {
  return absl::StrReplaceAll(kSequenceCommittedEvents, {{"$LOCK_SEED", AdvisoryLockSeed(schema)}});
}

std::string MigrationLockSql(std::string_view schema) {
  return absl::StrCat("hashtextextended('ledger.schema_migrations', ", AdvisoryLockSeed(schema),
                      ")");
}

std::string TryMigrationLockSql(std::string_view schema) {
  return absl::StrCat("SELECT pg_try_advisory_lock(", MigrationLockSql(schema), ")");
}

std::string ReleaseMigrationLockSql(std::string_view schema) {
  return absl::StrCat("SELECT pg_advisory_unlock(", MigrationLockSql(schema), ")");
}

std::string CreateSchemaSql(std::string_view schema) {
  return absl::StrCat("CREATE SCHEMA IF NOT EXISTS ", View(schema));
}

std::string RecordMigrationSql(std::string_view begin, int version,
                               std::string_view quoted_name) {
  return absl::StrCat(View(begin),
                      "INSERT INTO schema_migrations (version, name, applied_at) VALUES (", version,
                      ", ", View(quoted_name),
                      ", (extract(epoch FROM clock_timestamp()) * 1000000)::bigint);\nCOMMIT");
}

}  // namespace ledger::postgres_internal
