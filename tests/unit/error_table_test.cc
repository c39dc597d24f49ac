// The one error table (engines/common/error_table.h): every cell, as
// docs/engines/errors.md states it.
#include "engines/common/error_table.h"

#include "base/status.h"
#include "gtest/gtest.h"

namespace ledger::engine_common {
namespace {

enum class Answer { kRetryable, kInProgress, kInDoubt, kAlreadyExists, kUnavailable,
                    kPermissionDenied, kOwn };

bool Matches(const absl::Status& status, Answer answer) {
  switch (answer) {
    case Answer::kRetryable:
      return IsRetryable(status);
    case Answer::kInProgress:
      return IsInProgress(status);
    case Answer::kInDoubt:
      return IsInDoubt(status);
    case Answer::kAlreadyExists:
      return status.code() == absl::StatusCode::kAlreadyExists && !IsRetryable(status);
    case Answer::kUnavailable:
      return status.code() == absl::StatusCode::kUnavailable;
    case Answer::kPermissionDenied:
      return status.code() == absl::StatusCode::kPermissionDenied && TagOf(status) == ErrorTag::kNone;
    case Answer::kOwn:
      return status.code() == absl::StatusCode::kFailedPrecondition;
  }
  return false;
}

TEST(ErrorTableTest, EveryCellAsDocumented) {
  constexpr ErrorPhase kPhases[] = {ErrorPhase::kClaim, ErrorPhase::kLockAccounts,
                                    ErrorPhase::kWrite, ErrorPhase::kCommit,
                                    ErrorPhase::kWriteAndCommit, ErrorPhase::kStandalone};
  struct Row {
    ErrorClass error_class;
    Answer answers[6];  // in kPhases order
  };
  const Row rows[] = {
      {ErrorClass::kUniqueViolation,
       {Answer::kAlreadyExists, Answer::kRetryable, Answer::kRetryable, Answer::kRetryable,
        Answer::kRetryable, Answer::kAlreadyExists}},
      {ErrorClass::kDeadlockOrSerialization,
       {Answer::kRetryable, Answer::kRetryable, Answer::kRetryable, Answer::kRetryable,
        Answer::kRetryable, Answer::kRetryable}},
      {ErrorClass::kLockWaitTimeout,
       {Answer::kInProgress, Answer::kRetryable, Answer::kRetryable, Answer::kRetryable,
        Answer::kRetryable, Answer::kRetryable}},
      {ErrorClass::kConnectionLost,
       {Answer::kUnavailable, Answer::kUnavailable, Answer::kUnavailable, Answer::kInDoubt,
        Answer::kInDoubt, Answer::kUnavailable}},
      {ErrorClass::kSessionRefused,
       {Answer::kPermissionDenied, Answer::kPermissionDenied, Answer::kPermissionDenied,
        Answer::kInDoubt, Answer::kInDoubt, Answer::kPermissionDenied}},
      {ErrorClass::kOther,
       {Answer::kOwn, Answer::kOwn, Answer::kOwn, Answer::kInDoubt, Answer::kOwn, Answer::kOwn}},
  };
  for (const Row& row : rows) {
    for (int i = 0; i < 6; ++i) {
      absl::Status status = StatusForError(row.error_class, kPhases[i], "engine: step: detail",
                                           absl::FailedPreconditionError("own"));
      EXPECT_TRUE(Matches(status, row.answers[i]))
          << "class " << static_cast<int>(row.error_class) << " phase " << i << ": " << status;
    }
  }
}

// In one call that writes and then commits, only a statement's own check is known to
// have stopped it before COMMIT; any other own status may be COMMIT's.
TEST(ErrorTableTest, WriteAndCommitKeepsOnlyAStatementsOwnCheck) {
  EXPECT_EQ(StatusForError(ErrorClass::kOther, ErrorPhase::kWriteAndCommit, "x",
                           absl::InvalidArgumentError("too long")).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(IsInDoubt(StatusForError(ErrorClass::kOther, ErrorPhase::kWriteAndCommit, "x",
                                       absl::DeadlineExceededError("statement timeout"))));
  EXPECT_TRUE(IsInDoubt(StatusForError(ErrorClass::kOther, ErrorPhase::kWriteAndCommit, "x")));
}

TEST(ErrorTableTest, OtherWithoutAnOwnStatusIsInternal) {
  EXPECT_EQ(StatusForError(ErrorClass::kOther, ErrorPhase::kStandalone, "x").code(),
            absl::StatusCode::kInternal);
}

// The SQLite and MySQL connections tag calls with a context; connecting is standalone,
// so a lost server while connecting is Unavailable, never in doubt.
TEST(ErrorTableTest, EachContextFallsInItsPhase) {
  EXPECT_EQ(PhaseOf(ErrorContext::kConnect), ErrorPhase::kStandalone);
  EXPECT_EQ(PhaseOf(ErrorContext::kClaim), ErrorPhase::kClaim);
  EXPECT_EQ(PhaseOf(ErrorContext::kTransaction), ErrorPhase::kLockAccounts);
  EXPECT_EQ(PhaseOf(ErrorContext::kWrite), ErrorPhase::kWrite);
  EXPECT_EQ(PhaseOf(ErrorContext::kCommit), ErrorPhase::kCommit);
  EXPECT_EQ(PhaseOf(ErrorContext::kWriteAndCommit), ErrorPhase::kWriteAndCommit);
  EXPECT_EQ(PhaseOf(ErrorContext::kStandalone), ErrorPhase::kStandalone);
}

}  // namespace
}  // namespace ledger::engine_common
