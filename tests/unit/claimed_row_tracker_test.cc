// The key rows a claim wrote (engines/common/claimed_row_tracker.h): each decision of
// RecordKey, the unrecorded rows Commit drops, and the checks that catch misuse.
#include "engines/common/claimed_row_tracker.h"

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace ledger::engine_common {
namespace {

using RecordKind = ClaimedRowTracker::RecordKind;

KeyRecord RecordOf(const std::string& key, const std::string& transaction_id) {
  return KeyRecord{.identity = {.key_namespace = "operations", .scope = {}, .key = key},
                   .fingerprint = "fingerprint-" + transaction_id,
                   .transaction_id = transaction_id,
                   .created_at = absl::FromUnixSeconds(1000),
                   .expires_at = absl::FromUnixSeconds(1000 + 86400)};
}

TEST(ClaimedRowTrackerTest, RecordingTheClaimedRecordSendsNothingAndLeavesNothingToDrop) {
  ClaimedRowTracker tracker;
  tracker.Claimed(RecordOf("k1", "t1"));
  EXPECT_EQ(tracker.Record(RecordOf("k1", "t1")).kind, RecordKind::kNothingToSend);
  EXPECT_TRUE(tracker.TakeUnrecorded().empty());
}

TEST(ClaimedRowTrackerTest, AnotherRecordOfAClaimedKeyRewritesTheRowTheClaimWrote) {
  ClaimedRowTracker tracker;
  tracker.Claimed(RecordOf("k1", "t1"));
  const ClaimedRowTracker::RecordDecision decision = tracker.Record(RecordOf("k1", "t2"));
  EXPECT_EQ(decision.kind, RecordKind::kRewrite);
  ASSERT_TRUE(decision.claimed.has_value());
  EXPECT_EQ(*decision.claimed, RecordOf("k1", "t1"));
  // Recorded: a second record of the key goes the normal path, and Commit keeps the row.
  EXPECT_EQ(tracker.Record(RecordOf("k1", "t3")).kind, RecordKind::kNotClaimed);
  EXPECT_TRUE(tracker.TakeUnrecorded().empty());
}

TEST(ClaimedRowTrackerTest, AKeyNeverClaimedGoesTheNormalPath) {
  ClaimedRowTracker tracker;
  tracker.Claimed(RecordOf("k1", "t1"));
  EXPECT_EQ(tracker.Record(RecordOf("k2", "t2")).kind, RecordKind::kNotClaimed);
  EXPECT_EQ(tracker.TakeUnrecorded(), std::vector<KeyRecord>{RecordOf("k1", "t1")});
}

TEST(ClaimedRowTrackerTest, AKeyClaimedWithoutARowIsInsertedEveryTimeItIsRecorded) {
  ClaimedRowTracker tracker;
  tracker.ClaimedWithoutRow(RecordOf("k1", "t1").identity);
  EXPECT_EQ(tracker.Record(RecordOf("k1", "t1")).kind, RecordKind::kClaimedWithoutRow);
  EXPECT_EQ(tracker.Record(RecordOf("k1", "t2")).kind, RecordKind::kClaimedWithoutRow);
  EXPECT_TRUE(tracker.TakeUnrecorded().empty());
}

TEST(ClaimedRowTrackerTest, CommitDropsTheUnrecordedRowsInIdentityOrderOnce) {
  ClaimedRowTracker tracker;
  tracker.Claimed(RecordOf("k3", "t3"));
  tracker.Claimed(RecordOf("k1", "t1"));
  tracker.Claimed(RecordOf("k2", "t2"));
  EXPECT_EQ(tracker.Record(RecordOf("k2", "t2")).kind, RecordKind::kNothingToSend);
  EXPECT_EQ(tracker.TakeUnrecorded(),
            (std::vector<KeyRecord>{RecordOf("k1", "t1"), RecordOf("k3", "t3")}));
  EXPECT_TRUE(tracker.TakeUnrecorded().empty());
}

TEST(ClaimedRowTrackerTest, TheClaimsOwnRowReadBackIsRecognizedByItsTransactionId) {
  ClaimedRowTracker tracker;
  tracker.Claimed(RecordOf("k1", "t1"));
  EXPECT_TRUE(tracker.IsClaimedRow(RecordOf("k1", "t1")));
  EXPECT_FALSE(tracker.IsClaimedRow(RecordOf("k1", "t0")));  // committed by another
  EXPECT_FALSE(tracker.IsClaimedRow(RecordOf("k2", "t1")));  // never claimed
  tracker.Record(RecordOf("k1", "t1"));
  EXPECT_FALSE(tracker.IsClaimedRow(RecordOf("k1", "t1")));  // recorded: a committed record
}

TEST(ClaimedRowTrackerTest, ClaimingTheSameRowAgainKeepsTheLatestNote) {
  ClaimedRowTracker tracker;
  tracker.Claimed(RecordOf("k1", "t1"));
  KeyRecord again = RecordOf("k1", "t1");
  again.created_at += absl::Seconds(1);
  tracker.Claimed(again);
  EXPECT_EQ(tracker.Record(again).kind, RecordKind::kNothingToSend);
}

TEST(ClaimedRowTrackerTest, ClearForgetsEveryClaim) {
  ClaimedRowTracker tracker;
  tracker.Claimed(RecordOf("k1", "t1"));
  tracker.ClaimedWithoutRow(RecordOf("k2", "t2").identity);
  tracker.Clear();
  EXPECT_TRUE(tracker.TakeUnrecorded().empty());
  for (const KeyRecord& record : {RecordOf("k1", "t1"), RecordOf("k2", "t2")}) {
    EXPECT_EQ(tracker.Record(record).kind, RecordKind::kNotClaimed) << record.identity.Encoded();
  }
}

TEST(ClaimedRowTrackerDeathTest, ASecondClaimedRowUnderOneKeyAborts) {
  ClaimedRowTracker tracker;
  tracker.Claimed(RecordOf("k1", "t1"));
  EXPECT_DEATH(tracker.Claimed(RecordOf("k1", "t2")), "a second claimed row under key");
}

TEST(ClaimedRowTrackerDeathTest, AClaimedRowWithoutATransactionIdAborts) {
  ClaimedRowTracker tracker;
  EXPECT_DEATH(tracker.Claimed(RecordOf("k1", "")), "a claimed row without a transaction id");
}

TEST(ClaimedRowTrackerDeathTest, AKeyClaimedWithoutARowWhileItsRowIsHeldAborts) {
  ClaimedRowTracker tracker;
  tracker.Claimed(RecordOf("k1", "t1"));
  EXPECT_DEATH(tracker.ClaimedWithoutRow(RecordOf("k1", "t1").identity),
               "claimed without a row while this transaction holds its row");
}

// Two identities whose encodings collide (a '/' in the tenant, which validation refuses
// before any engine sees it): the rewrite would update the other identity's row.
TEST(ClaimedRowTrackerDeathTest, ARewriteUnderAnotherIdentityAborts) {
  KeyRecord claimed = RecordOf("k1", "t1");
  claimed.identity.scope = {.tenant = "a/b", .actor = "c"};
  KeyRecord other = RecordOf("k1", "t2");
  other.identity.scope = {.tenant = "a", .actor = "b/c"};
  ASSERT_EQ(claimed.identity.Encoded(), other.identity.Encoded());
  ClaimedRowTracker tracker;
  tracker.Claimed(claimed);
  EXPECT_DEATH(tracker.Record(other), "a claimed row rewritten under another identity");
  EXPECT_DEATH(tracker.IsClaimedRow(other), "read back under another identity");
}

}  // namespace
}  // namespace ledger::engine_common
