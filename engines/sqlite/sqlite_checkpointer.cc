#include "engines/sqlite/sqlite_checkpointer.h"

#include <sqlite3.h>

#include <utility>

#include "base/check.h"

namespace ledger::sqlite_internal {

Checkpointer::~Checkpointer() {
  std::thread thread;
  {
    absl::MutexLock lock(&mutex_);
    stopping_ = true;
    thread = std::move(thread_);
  }
  if (thread.joinable()) thread.join();
}

void Checkpointer::Attach(Connection& writer) {
  sqlite3_wal_hook(writer.native(), &Checkpointer::OnCommit, this);
}

Checkpointer::Counts Checkpointer::CountsForTesting() {
  absl::MutexLock lock(&mutex_);
  return counts_;
}

int Checkpointer::OnCommit(void* self, sqlite3* database, const char* schema, int frames) {
  static_cast<Checkpointer*>(self)->AfterCommit(database, schema, frames);
  return SQLITE_OK;
}

void Checkpointer::AfterCommit(sqlite3* database, const char* schema, int frames) {
  LEDGER_CHECK(frames >= 0);
  {
    absl::MutexLock lock(&mutex_);
    if (frames < last_frames_) backfilled_frames_ = 0;  // the WAL restarted from its start
    last_frames_ = frames;
    if (frames < kWriterCheckpointFrames) {
      if (frames - backfilled_frames_ >= kBackgroundPassFrames && !pass_requested_ &&
          !stopping_) {
        pass_requested_ = true;  // wakes the thread's Await
        if (!thread_.joinable()) thread_ = std::thread([this] { RunBackgroundPasses(); });
      }
      return;
    }
  }
  // The committing thread's own checkpoint (the header says why). PASSIVE: it waits
  // for no reader; one holding an old snapshot leaves frames for a later commit.
  absl::MutexLock pass(&pass_mutex_);
  int frames_in_log = 0;
  int frames_copied = 0;
  const int result = sqlite3_wal_checkpoint_v2(database, schema, SQLITE_CHECKPOINT_PASSIVE,
                                               &frames_in_log, &frames_copied);
  absl::MutexLock lock(&mutex_);
  ++counts_.writer_checkpoints;
  if (result == SQLITE_OK) backfilled_frames_ = frames_copied;
}

void Checkpointer::RunBackgroundPasses() {
  std::unique_ptr<Connection> connection;  // this thread's own, opened by the first pass
  auto requested_or_stopping = [](Checkpointer* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                                   self->mutex_) { return self->pass_requested_ || self->stopping_; };
  while (true) {
    {
      absl::MutexLock lock(&mutex_);
      mutex_.Await(absl::Condition(+requested_or_stopping, this));
      if (stopping_) return;
    }
    int result = SQLITE_CANTOPEN;
    int frames_copied = 0;
    if (connection == nullptr) {
      absl::StatusOr<std::unique_ptr<Connection>> opened = Connection::Open(settings_);
      if (opened.ok()) connection = *std::move(opened);
    }
    if (connection != nullptr) {
      absl::MutexLock pass(&pass_mutex_);
      int frames_in_log = 0;
      result = sqlite3_wal_checkpoint_v2(connection->native(), "main", SQLITE_CHECKPOINT_PASSIVE,
                                         &frames_in_log, &frames_copied);
    }
    // BUSY: another process was checkpointing. Anything else but OK: the connection is
    // suspect, so the next pass opens a new one. Either way the next commit over the
    // threshold asks again, and the writer's own checkpoint bounds the WAL meanwhile.
    if (result != SQLITE_OK && result != SQLITE_BUSY) connection.reset();
    absl::MutexLock lock(&mutex_);
    pass_requested_ = false;
    if (result == SQLITE_OK) {
      ++counts_.background_passes;
      if (frames_copied > backfilled_frames_) backfilled_frames_ = frames_copied;
    }
  }
}

}  // namespace ledger::sqlite_internal
