#include "ledger/read_only_engine.h"

#include <cstdlib>
#include <utility>

#include "base/check.h"

namespace ledger::internal {
namespace {

// Every write entry point ends here: the message names the call that reached the read
// engine, so the bug is found from the abort alone.
[[noreturn]] void WriteReachedReadEngine(const char* call) {
  LEDGER_CHECK(false) << "Engine::" << call
                      << " reached the ledger's read engine: claims, submits, units of work, "
                         "sweeps and idempotency stores go to the primary only";
  std::abort();  // not reached: a failed check aborts
}

}  // namespace

ReadOnlyEngine::ReadOnlyEngine(std::shared_ptr<Engine> reads) : reads_(std::move(reads)) {
  LEDGER_CHECK(reads_ != nullptr) << "a read engine wraps an engine, not null";
}

absl::Status ReadOnlyEngine::Migrate() { WriteReachedReadEngine("Migrate"); }

absl::StatusOr<std::unique_ptr<StorageTransaction>> ReadOnlyEngine::Begin(const BeginOptions&) {
  WriteReachedReadEngine("Begin");
}

absl::Status ReadOnlyEngine::PutAsset(const Asset&) { WriteReachedReadEngine("PutAsset"); }

absl::Status ReadOnlyEngine::InsertAccount(const Account&) { WriteReachedReadEngine("InsertAccount"); }

absl::StatusOr<bool> ReadOnlyEngine::CloseAccountIfZeroBalance(std::string_view) {
  WriteReachedReadEngine("CloseAccountIfZeroBalance");
}

absl::StatusOr<int64_t> ReadOnlyEngine::PruneExpiredKeys(absl::Time, int64_t) {
  WriteReachedReadEngine("PruneExpiredKeys");
}

WorkClaimStore& ReadOnlyEngine::work_claims() { WriteReachedReadEngine("work_claims"); }

WebhookStore& ReadOnlyEngine::webhooks() { WriteReachedReadEngine("webhooks"); }

}  // namespace ledger::internal
