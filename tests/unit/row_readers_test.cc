// The row readers every SQL engine shares (engines/common/row_readers.h): what a row
// means, and the one answer for a corrupt row, over a row of strings.
#include "engines/common/row_readers.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace ledger::engine_common {
namespace {

// A driver row as the readers see it: text cells, nullopt for NULL.
struct FakeRow {
  std::vector<std::optional<std::string>> cells;
  std::string_view engine() const { return "fake"; }
  std::string Text(int column) const { return cells.at(column).value(); }
  std::optional<std::string> OptionalText(int column) const { return cells.at(column); }
  int64_t Int(int column) const { return std::stoll(Text(column)); }
  bool Bool(int column) const { return Text(column) == "1"; }
  absl::Time Time(int column) const { return absl::FromUnixMicros(Int(column)); }
};

FakeRow KeyRow(std::string scope, std::string state, std::optional<std::string> transaction_id) {
  return FakeRow{{"transfer", scope, "k-1", "f", state, transaction_id, "10", "20"}};
}

TEST(RowReadersTest, CommittedKeyRowIsItsRecordAndAPlaceholderIsNone) {
  absl::StatusOr<std::optional<KeyRecord>> record =
      ReadKeyRow(KeyRow("acme/user-1", "committed", "tx-1"));
  ASSERT_TRUE(record.ok()) << record.status();
  ASSERT_TRUE(record->has_value());
  EXPECT_EQ((*record)->identity.scope, (Scope{"acme", "user-1"}));
  EXPECT_EQ((*record)->transaction_id, "tx-1");
  EXPECT_EQ((*record)->expires_at, absl::FromUnixMicros(20));

  absl::StatusOr<std::optional<KeyRecord>> placeholder =
      ReadKeyRow(KeyRow("acme/user-1", "pending", std::nullopt));
  ASSERT_TRUE(placeholder.ok()) << placeholder.status();
  EXPECT_FALSE(placeholder->has_value());
}

TEST(RowReadersTest, CorruptRowsAreDataLossNamingEngineAndTable) {
  for (const FakeRow& row : {KeyRow("no-slash", "committed", "tx-1"),
                             KeyRow("acme/user-1", "committing", "tx-1"),
                             KeyRow("acme/user-1", "committed", std::nullopt)}) {
    absl::StatusOr<std::optional<KeyRecord>> record = ReadKeyRow(row);
    EXPECT_EQ(record.status().code(), absl::StatusCode::kDataLoss) << record.status();
    EXPECT_TRUE(absl::StartsWith(record.status().message(), "fake: unreadable idempotency_keys"))
        << record.status();
  }
  FakeRow claim{{"gateway", "acme/user-1", "k", "f", "lost", "w", "1", "0", "", "0", "0", "0"}};
  EXPECT_EQ(ReadWorkClaim(claim).status().code(), absl::StatusCode::kDataLoss);
  FakeRow transaction{{"tx-1", "teleport", "0", "{}", std::nullopt, "f"}};
  EXPECT_EQ(ReadTransactionHeader(transaction).status().code(), absl::StatusCode::kDataLoss);
}

TEST(RowReadersTest, ScopeSplitsAtTheFirstSlash) {
  EXPECT_EQ(DecodeScope("acme/user/1").value(), (Scope{"acme", "user/1"}));
  EXPECT_EQ(DecodeScope("/").value(), (Scope{"", ""}));
  EXPECT_EQ(DecodeScope("acme").status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace ledger::engine_common
