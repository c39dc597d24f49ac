#include "engines/common/row_readers.h"

#include "absl/strings/str_cat.h"
#include "base/status.h"

namespace ledger::engine_common {

absl::Status CorruptRow(std::string_view engine, std::string_view table,
                        const absl::Status& cause) {
  return absl::DataLossError(absl::StrCat(View(engine), ": unreadable ", View(table),
                                          " row: ", cause.message()));
}

absl::StatusOr<Scope> DecodeScope(std::string_view encoded) {
  const size_t slash = encoded.find('/');
  if (slash == std::string_view::npos) {
    return absl::DataLossError(absl::StrCat("scope \"", View(encoded), "\" has no '/'"));
  }
  return Scope{std::string(encoded.substr(0, slash)), std::string(encoded.substr(slash + 1))};
}

}  // namespace ledger::engine_common
