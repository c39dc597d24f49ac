// The fingerprint every submit computes before it touches the database: the business
// payload as JSON, its RFC 8785 canonical text, and the SHA-256 of that text. Measured
// step by step, then end to end, so a regression points at its stage.
#include <string>

#include "absl/status/statusor.h"
#include "bench/typical_operations.h"
#include "benchmark/benchmark.h"
#include "idempotency/fingerprint.h"
#include "ledger/operation.h"

namespace ledger::bench {
namespace {

void BM_OperationPayloadOfTypicalSpend(benchmark::State& state) {
  const Operation op = TypicalSpend();
  for (auto _ : state) {
    nlohmann::json payload = OperationPayload(op);
    benchmark::DoNotOptimize(payload);
  }
}
BENCHMARK(BM_OperationPayloadOfTypicalSpend);

void BM_CanonicalJsonOfTypicalSpend(benchmark::State& state) {
  const nlohmann::json payload = OperationPayload(TypicalSpend());
  for (auto _ : state) {
    absl::StatusOr<std::string> canonical = CanonicalJson(payload);
    if (!canonical.ok()) state.SkipWithError("canonicalization failed");
    benchmark::DoNotOptimize(canonical);
  }
}
BENCHMARK(BM_CanonicalJsonOfTypicalSpend);

void BM_Sha256OfCanonicalTypicalSpend(benchmark::State& state) {
  const std::string canonical = CanonicalJson(OperationPayload(TypicalSpend())).value();
  for (auto _ : state) {
    std::string digest = Sha256Hex(canonical);
    benchmark::DoNotOptimize(digest);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(canonical.size()));
}
BENCHMARK(BM_Sha256OfCanonicalTypicalSpend);

// What Ledger::Submit pays per call: payload, canonical form, digest.
void FingerprintOperation(benchmark::State& state, const Operation& op) {
  for (auto _ : state) {
    absl::StatusOr<std::string> fingerprint = Fingerprint(OperationPayload(op));
    if (!fingerprint.ok()) state.SkipWithError("fingerprint failed");
    benchmark::DoNotOptimize(fingerprint);
  }
}
BENCHMARK_CAPTURE(FingerprintOperation, transfer, TypicalTransfer());
BENCHMARK_CAPTURE(FingerprintOperation, spend_with_fee_and_metadata, TypicalSpend());
BENCHMARK_CAPTURE(FingerprintOperation, post_eight_legs, EightLegPost());

// The HTTP path later: strict parse of the request text, then canonical form.
void BM_CanonicalizeJsonTextOfTypicalSpend(benchmark::State& state) {
  const std::string text = TypicalSpendJsonText();
  for (auto _ : state) {
    absl::StatusOr<std::string> canonical = CanonicalizeJsonText(text);
    if (!canonical.ok()) state.SkipWithError("canonicalization failed");
    benchmark::DoNotOptimize(canonical);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_CanonicalizeJsonTextOfTypicalSpend);

}  // namespace
}  // namespace ledger::bench
