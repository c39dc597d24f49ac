// libFuzzer target: the strict JSON parser and the RFC 8785 canonicalizer
// (ParseJsonStrict, CanonicalizeJsonText), whose output every fingerprint hashes.
//
// Invariants beyond "no crash, no sanitizer report":
// - a rejected input is InvalidArgument, never another code;
// - the canonical form is a fixed point: canonicalizing it again gives the same text,
//   so two texts with one meaning share one fingerprint and a stored fingerprint never
//   drifts;
// - the fingerprint of the parsed value is the SHA-256 of that canonical text.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "idempotency/fingerprint.h"

namespace {

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "canonical_json_fuzzer: %s: %s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<nlohmann::json> parsed = ledger::ParseJsonStrict(text);
  absl::StatusOr<std::string> canonical = ledger::CanonicalizeJsonText(text);
  if (canonical.ok() && !parsed.ok())
    Fail("canonicalized what the strict parser refused", *canonical);
  if (!canonical.ok()) {
    if (!absl::IsInvalidArgument(canonical.status()))
      Fail("rejected with a code other than InvalidArgument", canonical.status().ToString());
    return 0;
  }
  absl::StatusOr<std::string> again = ledger::CanonicalizeJsonText(*canonical);
  if (!again.ok())
    Fail("the canonical text does not canonicalize",
         again.status().ToString() + " for " + *canonical);
  if (*again != *canonical)
    Fail("the canonical form is not a fixed point", *canonical + " became " + *again);
  absl::StatusOr<std::string> fingerprint = ledger::Fingerprint(*parsed);
  if (!fingerprint.ok() || *fingerprint != ledger::Sha256Hex(*canonical)) {
    Fail("the fingerprint is not the hash of the canonical text", *canonical);
  }
  return 0;
}
