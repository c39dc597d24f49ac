// The error table (engines/common/error_table.h, docs/engines/errors.md) seen from the
// outside: the same situation, provoked for real, gets the same tag on every engine.
// Rows that cannot be provoked portably (a deadlock, a lost connection, an unclassified
// COMMIT failure) are driven through the FaultInjectingEngine in submit_suite.cc
// (RetryableErrorIsRetriedInsideSubmit, FaultAtAnyPointRollsBackAndKeyStaysUnused,
// LostCommitReplyIsInDoubtAndResendReplaysTheCommit); each engine's *_errors test
// checks how it sorts its native codes, and tests/unit/error_table_test.cc every cell.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "base/status.h"
#include "tests/conformance/conformance_fixture.h"

namespace ledger::testing {
namespace {

KeyIdentity Identity(const std::string& key) {
  return KeyIdentity{.key_namespace = "transfer", .scope = Scope{}, .key = key};
}

// Row "unique violation", phase "write": a submit whose transaction id is already
// taken (a race the account locks cannot see) is retryable, and writes nothing.
TEST_P(ConformanceTest, ErrorTableUniqueViolationDuringTheWriteIsRetryable) {
  Fund("alice", 100);
  absl::StatusOr<std::vector<Transaction>> existing = engine().ListTransactions("", 10);
  ASSERT_TRUE(existing.ok()) << existing.status();
  ASSERT_FALSE(existing->empty());
  const Transaction taken = existing->front();
  const Snapshot before = TakeSnapshot();

  absl::StatusOr<std::unique_ptr<StorageTransaction>> storage = engine().Begin({});
  ASSERT_TRUE(storage.ok()) << storage.status();
  ASSERT_TRUE((*storage)->ClaimKey(Identity("dup-id")).ok());
  std::vector<std::string> ids;
  for (const Entry& entry : taken.entries) ids.push_back(entry.account_id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  absl::StatusOr<std::vector<Account>> locked = (*storage)->LockAccounts(ids);
  ASSERT_TRUE(locked.ok()) << locked.status();
  // Engines may buffer writes until COMMIT: the first failure is the answer.
  absl::Status failure = (*storage)->WriteTransaction(taken, *locked);
  if (failure.ok()) {
    failure = (*storage)->RecordKey(KeyRecord{.identity = Identity("dup-id"),
                                              .fingerprint = "f",
                                              .transaction_id = taken.id,
                                              .created_at = clock().Now(),
                                              .expires_at = clock().Now() + absl::Hours(1)});
  }
  if (failure.ok()) failure = (*storage)->Commit();
  EXPECT_TRUE(IsRetryable(failure)) << failure;
  (*storage)->Rollback();
  storage->reset();
  EXPECT_EQ(TakeSnapshot(), before);
}

// Row "unique violation", phase "standalone": the caller chose a taken identity.
TEST_P(ConformanceTest, ErrorTableUniqueViolationOutsideASubmitIsAlreadyExists) {
  absl::StatusOr<std::optional<Account>> alice = engine().GetAccount("alice");
  ASSERT_TRUE(alice.ok() && alice->has_value());
  absl::Status again = engine().InsertAccount(**alice);
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists) << again;
  EXPECT_FALSE(IsRetryable(again));
}

// Row "lock wait timeout", phase "claim": another attempt holds the key.
TEST_P(ConformanceTest, ErrorTableLockWaitInTheClaimIsInProgress) {
  absl::StatusOr<std::unique_ptr<StorageTransaction>> holder = engine().Begin({});
  ASSERT_TRUE(holder.ok()) << holder.status();
  ASSERT_TRUE((*holder)->ClaimKey(Identity("held")).ok());

  absl::StatusOr<std::unique_ptr<StorageTransaction>> second =
      engine().Begin({.wait = WaitPolicy::FailFast()});
  ASSERT_TRUE(second.ok()) << second.status();
  absl::StatusOr<std::optional<KeyRecord>> claimed = (*second)->ClaimKey(Identity("held"));
  EXPECT_TRUE(IsInProgress(claimed.status())) << claimed.status();
  (*second)->Rollback();
  (*holder)->Rollback();
}

// Drift the other cases cannot see: RecordKey replaces only a placeholder or an expired
// record. A live committed record under the identity means the claim was bypassed;
// overwriting it would lose the first commit's replay (MySQL's UPDATE lacked this guard).
TEST_P(ConformanceTest, RecordKeyNeverOverwritesALiveCommittedRecord) {
  Fund("alice", 100);
  ASSERT_TRUE(Submit("live", Operation::Transfer("alice", "bob", "CREDITS", 10)).ok());
  absl::StatusOr<std::vector<KeyRecord>> records = engine().ListKeyRecords(std::nullopt, 100);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_FALSE(records->empty());
  const KeyRecord live = records->back();
  ASSERT_FALSE(live.ExpiredAt(clock().Now()));

  absl::StatusOr<std::unique_ptr<StorageTransaction>> storage = engine().Begin({});
  ASSERT_TRUE(storage.ok()) << storage.status();
  KeyRecord intruder = live;
  intruder.fingerprint = "another payload";
  intruder.transaction_id = "not-a-transaction";
  intruder.created_at = clock().Now();
  intruder.expires_at = clock().Now() + absl::Hours(1);
  absl::Status failure = (*storage)->RecordKey(intruder);
  if (failure.ok()) failure = (*storage)->Commit();
  EXPECT_TRUE(IsRetryable(failure)) << failure;
  (*storage)->Rollback();
  storage->reset();
  EXPECT_EQ(engine().ListKeyRecords(std::nullopt, 100).value(), *records);
}

}  // namespace
}  // namespace ledger::testing
