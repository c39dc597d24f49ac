// The SQLite engine's WAL checkpoints, mostly off the committing thread.
//
// Left to itself SQLite checkpoints the WAL (copies its frames into the database file,
// then syncs that file) in the COMMIT that finds the WAL over 1,000 pages, on the
// committing thread, so inside the engine's writer turn: a fifth of the process's CPU
// at 32 group-committed callers, and a sync of the database file in the serial path
// every hundred submits or so (docs/benchmarks.md, "One writer connection"). Instead
// the writer's connection reports each commit's WAL size here (sqlite3_wal_hook, which
// replaces SQLite's auto-checkpoint on that connection):
// - once kBackgroundPassFrames frames were added since the last checkpoint, a
//   background thread runs a PASSIVE checkpoint on a connection of its own, beside the
//   writer (it waits for no reader and no writer);
// - once the WAL holds kWriterCheckpointFrames frames, the committing thread
//   checkpoints itself (PASSIVE, after a background pass in progress). Only a
//   checkpoint with no commit after it can copy every frame, which lets the next write
//   transaction restart the WAL from its start; under a steady stream of group commits
//   the background passes always trail the latest commit, so without this step the WAL
//   would grow without bound. The background passes leave it little to copy.
// So the WAL file stays under about kWriterCheckpointFrames frames plus what one
// transaction writes, as with SQLite's default (1,000) unless a reader holds an old
// snapshot, which delays any checkpoint alike.
//
//   Checkpointer checkpointer(settings);   // starts nothing yet
//   checkpointer.Attach(writer_connection); // before its first write transaction
//
// Internal to engines/sqlite. Thread-safe; the background thread starts with the first
// pass it is asked for and stops when the Checkpointer is destroyed, which must happen
// after the connections attached to it are closed.
#ifndef LEDGER_ENGINES_SQLITE_SQLITE_CHECKPOINTER_H_
#define LEDGER_ENGINES_SQLITE_SQLITE_CHECKPOINTER_H_

#include <cstdint>
#include <memory>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "engines/sqlite/sqlite_connection.h"

struct sqlite3;

namespace ledger::sqlite_internal {

// Frames (pages) committed since the last checkpoint before a background pass is asked
// for: a pass every fifty submits or so at 32 callers.
inline constexpr int kBackgroundPassFrames = 500;
// Frames in the WAL at which the committing thread checkpoints (about 16 MiB of WAL at
// SQLite's 4 KiB pages).
inline constexpr int kWriterCheckpointFrames = 4000;
static_assert(kBackgroundPassFrames < kWriterCheckpointFrames);

class Checkpointer {
 public:
  // `settings` open the background pass's connection.
  explicit Checkpointer(ConnectionSettings settings) : settings_(std::move(settings)) {}
  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;
  // Stops the background thread, after the pass it may be running.
  ~Checkpointer() ABSL_LOCKS_EXCLUDED(mutex_);

  // Routes `writer`'s commits through this checkpointer (and turns SQLite's own
  // auto-checkpoint off for it). `writer` must be closed before this is destroyed.
  void Attach(Connection& writer);

  struct Counts {
    int64_t background_passes = 0;   // PASSIVE checkpoints run by the background thread
    int64_t writer_checkpoints = 0;  // by the committing thread
  };
  Counts CountsForTesting() ABSL_LOCKS_EXCLUDED(mutex_);

 private:
  // sqlite3_wal_hook's callback: after each commit of an attached connection, with the
  // number of frames now in the WAL. Always SQLITE_OK: the commit has happened, and a
  // checkpoint that could not run is retried at a later commit.
  static int OnCommit(void* self, sqlite3* database, const char* schema, int frames);
  void AfterCommit(sqlite3* database, const char* schema, int frames) ABSL_LOCKS_EXCLUDED(mutex_);
  void RunBackgroundPasses() ABSL_LOCKS_EXCLUDED(mutex_);

  const ConnectionSettings settings_;
  // Held for each checkpoint, so the writer's waits for a background pass in progress
  // instead of failing on SQLite's checkpoint lock (which answers BUSY at once).
  absl::Mutex pass_mutex_ ABSL_ACQUIRED_BEFORE(mutex_);
  absl::Mutex mutex_;
  bool pass_requested_ ABSL_GUARDED_BY(mutex_) = false;
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  // The WAL frames copied by the last checkpoint (0 after the WAL restarted).
  int backfilled_frames_ ABSL_GUARDED_BY(mutex_) = 0;
  int last_frames_ ABSL_GUARDED_BY(mutex_) = 0;
  Counts counts_ ABSL_GUARDED_BY(mutex_);
  std::thread thread_ ABSL_GUARDED_BY(mutex_);  // started by the first request
};

}  // namespace ledger::sqlite_internal

#endif  // LEDGER_ENGINES_SQLITE_SQLITE_CHECKPOINTER_H_
