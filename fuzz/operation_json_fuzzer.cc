// libFuzzer target: the operation JSON parser (ParseOperationJson), the input every
// client request goes through before its fingerprint is taken.
//
// Invariants beyond "no crash, no sanitizer report":
// - a rejected input is InvalidArgument, never another code;
// - an accepted operation's business payload has a canonical form, and that form is a
//   fixed point: parsing it gives an operation with the same payload, hence the same
//   fingerprint (parse -> payload -> parse round-trips);
// - validation answers with a status and never throws.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "idempotency/fingerprint.h"
#include "ledger/operation.h"

namespace {

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "operation_json_fuzzer: %s: %s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<ledger::Operation> operation = ledger::ParseOperationJson(text);
  if (!operation.ok()) {
    if (!absl::IsInvalidArgument(operation.status()))
      Fail("rejected with a code other than InvalidArgument", operation.status().ToString());
    return 0;
  }
  (void)ledger::ValidateOperation(*operation);
  absl::StatusOr<std::string> canonical =
      ledger::CanonicalJson(ledger::OperationPayload(*operation));
  if (!canonical.ok())
    Fail("an accepted operation's payload has no canonical form", canonical.status().ToString());
  // Canonical numbers can be longer than their input (1e20 is 21 digits): the size
  // limit may then refuse the canonical text, which is fine.
  if (canonical->size() > ledger::kOperationJsonBytesMax) return 0;
  absl::StatusOr<ledger::Operation> again = ledger::ParseOperationJson(*canonical);
  if (!again.ok())
    Fail("the canonical payload does not parse back",
         again.status().ToString() + " in " + *canonical);
  absl::StatusOr<std::string> canonical_again =
      ledger::CanonicalJson(ledger::OperationPayload(*again));
  if (!canonical_again.ok() || *canonical_again != *canonical) {
    Fail("parse -> payload -> parse changed the payload",
         *canonical + " became " + canonical_again.value_or("(error)"));
  }
  return 0;
}
