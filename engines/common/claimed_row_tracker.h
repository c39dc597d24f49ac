// The key rows a storage transaction's claim wrote that no item has recorded yet: the
// bookkeeping of every engine whose claim inserts the key's final record, the record the
// pipeline says it will commit (MySQL, PostgreSQL's row mode, SQLite), in one place.
// Each engine keeps its own SQL; this class only decides which of it to send:
//   - RecordKey of exactly the record a claimed row holds sends nothing (the usual case:
//     the row was written once, by the claim);
//   - RecordKey of another record for that key (a batch's second item of the key, a unit
//     of work's second submit of it) rewrites the claimed row, found by the identity and
//     the transaction id the claim wrote (rare);
//   - a key whose claim wrote no row goes the engine's normal path;
//   - at Commit, the claimed rows no RecordKey stored are dropped: their items were
//     rejected, so their keys stay unused;
//   - a rollback, or a claim that starts over, forgets them all.
// PostgreSQL also notes the keys its claim found no row of (ClaimedWithoutRow): their
// records go in by a plain INSERT rather than over an expired record.
//
//   ClaimedRowTracker claimed_rows;
//   claimed_rows.Claimed(intended);                     // the claim's INSERT wrote it
//   if (claimed_rows.IsClaimedRow(read_back)) ...       // the claim's own row: key unused
//   ClaimedRowTracker::RecordDecision decision = claimed_rows.Record(record);  // RecordKey
//   if (decision.kind == ClaimedRowTracker::RecordKind::kRewrite) {
//     // UPDATE ... WHERE <identity> AND transaction_id = decision.claimed->transaction_id
//   }
//   for (const KeyRecord& unused : claimed_rows.TakeUnrecorded()) ...  // Commit: DELETE
//   claimed_rows.Clear();                               // rolled back
//
// Misuse (a second claimed row under one key, a record of another identity under the
// same encoded one) fails a LEDGER_CHECK, in release builds too.
//
// Internal to engines/. Not thread-safe: owned by one storage transaction and used on
// the thread that runs it.
#ifndef LEDGER_ENGINES_COMMON_CLAIMED_ROW_TRACKER_H_
#define LEDGER_ENGINES_COMMON_CLAIMED_ROW_TRACKER_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "idempotency/key.h"

namespace ledger::engine_common {

class ClaimedRowTracker {
 public:
  // What RecordKey of a record sends, by what the claim did with its key.
  enum class RecordKind {
    kNothingToSend,      // the claimed row holds exactly this record
    kRewrite,            // the claimed row holds another record: rewrite it
    kClaimedWithoutRow,  // the claim found no row (ClaimedWithoutRow): a plain INSERT
    kNotClaimed,         // no row of this transaction's claim: the engine's normal path
  };
  struct RecordDecision {
    RecordKind kind = RecordKind::kNotClaimed;
    // kRewrite only: the record the claimed row holds (its transaction_id finds the row).
    std::optional<KeyRecord> claimed;
  };

  // The claim wrote (or read back as its own) the row holding `record`. A note under an
  // identity already claimed replaces it only for the same transaction id: two rows of
  // one transaction's claims under one key cannot both exist.
  void Claimed(const KeyRecord& record);
  // The claim found no row under `identity` (PostgreSQL): never for a key whose claimed
  // row is unrecorded, which this transaction holds.
  void ClaimedWithoutRow(const KeyIdentity& identity);
  // Whether `row`, read back under its key, is the unrecorded row this transaction's
  // claim wrote (a unit of work claims the key again after its item was rejected): the
  // key is then still unused.
  bool IsClaimedRow(const KeyRecord& row) const;
  // What RecordKey of `record` sends; a claimed row counts as recorded from then on (a
  // unit of work may send its writes before COMMIT, which must not drop the row).
  RecordDecision Record(const KeyRecord& record);
  // At Commit: the claimed rows no record was stored in, in encoded identity order, to
  // be dropped. The tracker forgets them.
  std::vector<KeyRecord> TakeUnrecorded();
  // Rolled back, or a claim that starts over: nothing is claimed.
  void Clear();

 private:
  // The unrecorded claimed rows, by KeyIdentity::Encoded(), each as the claim wrote it.
  std::map<std::string, KeyRecord> unrecorded_;
  // The encoded identities the claim found no row of (kept after their record).
  std::set<std::string> without_row_;
};

}  // namespace ledger::engine_common

#endif  // LEDGER_ENGINES_COMMON_CLAIMED_ROW_TRACKER_H_
