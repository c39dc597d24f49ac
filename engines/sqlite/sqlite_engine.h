// The SQLite engine: the embedded default, durable in one file.
//
//   ledger::SqliteOptions options{.path = "ledger.db"};
//   absl::StatusOr<std::unique_ptr<ledger::Engine>> engine = ledger::OpenSqliteEngine(options);
//
// WAL mode; each submit is one BEGIN IMMEDIATE transaction, so writers are serialized
// by the database and the idempotency table's primary key is the guard. Every write
// runs on the engine's one writer connection, in turn, so its page cache stays warm;
// reads take a connection per concurrent caller from a pool. Thread-safe.
#ifndef LEDGER_ENGINES_SQLITE_SQLITE_ENGINE_H_
#define LEDGER_ENGINES_SQLITE_SQLITE_ENGINE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ledger/engine.h"

struct sqlite3;

namespace ledger {

class UnitOfWork;  // ledger/unit_of_work.h

struct SqliteOptions {
  // The database file. Default: "ledger.db".
  std::string path = "ledger.db";
  // Create the file when it does not exist. When false, a missing file is refused like
  // a server's missing database (PermissionDenied, "does not exist"), so a mistyped path
  // never becomes a new empty ledger. Default: true.
  bool create_if_missing = true;
  // How long a writer waits for the database lock when the submit's own wait policy
  // does not say (reads, account administration). Not negative. Default: 10 s.
  absl::Duration busy_timeout = absl::Seconds(10);
  // "FULL" (default: an acknowledged commit survives power loss; the WAL is synced on
  // every commit), "EXTRA", or "NORMAL" (an explicit opt-in: survives a process crash,
  // but the last commits before a power loss or OS crash may vanish). In a URL:
  // sqlite:PATH?synchronous=normal. Default: "FULL".
  std::string synchronous = "FULL";
  // Each connection's page cache, in KiB, 64..4194304 (SQLite's own default is 2,000 KiB). A
  // cache fills only as pages are read (a memory-mapped page is not copied into it
  // unless written), so this bounds memory per connection, it does not allocate it.
  // In a URL: cache_size_kib=N. Default: 65536 (64 MiB).
  int64_t cache_size_kib = 65536;
  // How much of the database file each connection reads through a read-only memory map
  // instead of pread, in MiB, 0..65536 (0: off; SQLite caps it at its compile-time
  // maximum, 2 GiB by default). Off by default: it halves the preads but costs page
  // faults and a remap per connection whenever the file grew, and measured no less CPU
  // per submit (docs/benchmarks.md). Commits still write through the WAL, so durability
  // is the same; an I/O error while reading a mapped page becomes SIGBUS instead of an
  // error status. In a URL: mmap_size_mib=N. Default: 0.
  int64_t mmap_size_mib = 0;
  // Readers' connections kept open, 1..1024; readers beyond it wait for one. Writes
  // (submits, account administration, stores, migrations) do not use the pool: they
  // take turns on one more connection, the writer's, opened by the first write.
  // Default: 16.
  int pool_size = 16;
  // How long a read waits for a pooled connection when all pool_size are on loan
  // (then Unavailable). A write waits for the writer's turn instead: a submit its own
  // claim wait bound, anything else busy_timeout. Default: 10 s
  // (engines/common/connection_pool.h).
  absl::Duration pool_acquire_wait = absl::Seconds(10);
  // Apply pending migrations on open. Default: true.
  bool migrate = true;
};

absl::StatusOr<std::unique_ptr<Engine>> OpenSqliteEngine(const SqliteOptions& options);

// The options a URL names: sqlite:PATH or sqlite://PATH, with optional parameters
// synchronous=full (the default) | extra | normal, cache_size_kib=N and mmap_size_mib=N
// (decimal, in the ranges above). Any other parameter, or another value, is
// InvalidArgument.
absl::StatusOr<SqliteOptions> SqliteOptionsFromUrl(std::string_view url);

// The SQLite handle a unit of work runs on (ledger/unit_of_work.h), inside its open
// transaction, for the caller's own driver code: valid only during the `work` call; never
// COMMIT, ROLLBACK or close it. A unit on another engine: FailedPrecondition.
absl::StatusOr<sqlite3*> SqliteHandleOf(UnitOfWork& unit);

}  // namespace ledger

#endif  // LEDGER_ENGINES_SQLITE_SQLITE_ENGINE_H_
