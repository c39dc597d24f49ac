// The checks a submit runs before the database: key, scope and operation validation,
// and parsing an operation from its JSON text (the HTTP layer's entry point).
#include <string>

#include "absl/status/status.h"
#include "bench/typical_operations.h"
#include "benchmark/benchmark.h"
#include "idempotency/key.h"
#include "ledger/operation.h"

namespace ledger::bench {
namespace {

void ValidateTypicalOperation(benchmark::State& state, const Operation& op) {
  for (auto _ : state) {
    absl::Status status = ValidateOperation(op);
    if (!status.ok()) state.SkipWithError("the typical operation should be valid");
    benchmark::DoNotOptimize(status);
  }
}
BENCHMARK_CAPTURE(ValidateTypicalOperation, transfer, TypicalTransfer());
BENCHMARK_CAPTURE(ValidateTypicalOperation, spend_with_fee_and_metadata, TypicalSpend());
BENCHMARK_CAPTURE(ValidateTypicalOperation, post_eight_legs, EightLegPost());

void BM_ValidateKeyAndScope(benchmark::State& state) {
  const std::string key = "order-2026-01-01-0000451-attempt";
  const Scope scope{"acme-games", "user-0042"};
  for (auto _ : state) {
    absl::Status key_status = ValidateKey(key);
    absl::Status scope_status = ValidateScope(scope);
    if (!key_status.ok() || !scope_status.ok()) state.SkipWithError("should be valid");
    benchmark::DoNotOptimize(key_status);
    benchmark::DoNotOptimize(scope_status);
  }
}
BENCHMARK(BM_ValidateKeyAndScope);

// A rejected input must be cheap too: it is what a misbehaving client sends in a loop.
void BM_ValidateRejectsSelfTransfer(benchmark::State& state) {
  const Operation op = Operation::Transfer("wallet-000123", "wallet-000123", kBenchAsset, 100);
  for (auto _ : state) {
    absl::Status status = ValidateOperation(op);
    if (status.ok()) state.SkipWithError("a self transfer should be rejected");
    benchmark::DoNotOptimize(status);
  }
}
BENCHMARK(BM_ValidateRejectsSelfTransfer);

void BM_ParseOperationJsonOfTypicalSpend(benchmark::State& state) {
  const std::string text = TypicalSpendJsonText();
  for (auto _ : state) {
    absl::StatusOr<Operation> op = ParseOperationJson(text);
    if (!op.ok()) state.SkipWithError("the typical spend should parse");
    benchmark::DoNotOptimize(op);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_ParseOperationJsonOfTypicalSpend);

}  // namespace
}  // namespace ledger::bench
