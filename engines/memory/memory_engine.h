// The memory engine: the whole ledger in process memory, for tests and examples.
//
//   std::unique_ptr<ledger::Engine> engine = ledger::OpenMemoryEngine();
//
// Same observable semantics as the database engines: a submit's writes become visible
// at commit, all at once; submitters of the same key park until the first finishes.
// Thread-safe. Nothing survives the process.
#ifndef LEDGER_ENGINES_MEMORY_MEMORY_ENGINE_H_
#define LEDGER_ENGINES_MEMORY_MEMORY_ENGINE_H_

#include <memory>

#include "ledger/engine.h"

namespace ledger {

std::unique_ptr<Engine> OpenMemoryEngine();

}  // namespace ledger

#endif  // LEDGER_ENGINES_MEMORY_MEMORY_ENGINE_H_
