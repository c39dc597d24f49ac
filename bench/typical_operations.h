// Operations shaped like the traffic of an economy backend, shared by the
// micro-benchmarks so each measures the same inputs:
//
//   ledger::Operation op = ledger::bench::TypicalSpend();  // spend with a fee and metadata
//
// Thread-safe: every function returns a fresh value.
#ifndef LEDGER_BENCH_TYPICAL_OPERATIONS_H_
#define LEDGER_BENCH_TYPICAL_OPERATIONS_H_

#include <string>

#include "ledger/operation.h"

namespace ledger::bench {

inline constexpr char kBenchAsset[] = "CREDITS";

// A wallet-to-wallet transfer without metadata: the smallest realistic payload.
Operation TypicalTransfer();

// A purchase: wallet pays a merchant, the platform takes a fee, and the caller attaches
// an order reference and a little context, as a storefront does.
Operation TypicalSpend();

// A power-user posting with eight legs (a split settlement).
Operation EightLegPost();

// The JSON text a client would send for TypicalSpend(), as the HTTP layer will parse it.
std::string TypicalSpendJsonText();

}  // namespace ledger::bench

#endif  // LEDGER_BENCH_TYPICAL_OPERATIONS_H_
