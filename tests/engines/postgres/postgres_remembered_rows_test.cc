// RememberedRows (engines/postgres/postgres_remembered_rows.h) on its own, no server:
// all of a submit's accounts or none, the last write wins, a refusal forgets, the gate
// shuts when guesses keep failing and opens again, and the bound holds.
#include "engines/postgres/postgres_remembered_rows.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ledger::postgres_internal {
namespace {

AccountRow Row(const std::string& id, int64_t version, Amount balance) {
  Account account;
  account.id = id;
  account.version = version;
  account.balance = balance;
  return {account, std::nullopt};
}

TEST(RememberedRowsTest, FindsEveryAccountOrNone) {
  RememberedRows remembered;
  remembered.Remember({Row("a", 1, 10), Row("b", 2, 20)});
  std::optional<std::vector<AccountRow>> both = remembered.Find({"a", "b"});
  ASSERT_TRUE(both.has_value());
  ASSERT_EQ(both->size(), 2u);
  EXPECT_EQ((*both)[0].first.id, "a");
  EXPECT_EQ((*both)[1].first.balance, 20);
  EXPECT_FALSE(remembered.Find({"a", "c"}).has_value());  // c was never written
}

TEST(RememberedRowsTest, TheLastWriteWinsAndARefusalForgets) {
  RememberedRows remembered;
  remembered.Remember({Row("a", 1, 10), Row("b", 1, 5)});
  remembered.Remember({Row("a", 2, 7)});
  std::optional<std::vector<AccountRow>> a = remembered.Find({"a"});
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->front().first.version, 2);
  EXPECT_EQ(a->front().first.balance, 7);
  remembered.Refused({"a"});
  EXPECT_FALSE(remembered.Find({"a"}).has_value());
  EXPECT_TRUE(remembered.Find({"b"}).has_value());  // not part of the refused guess
}

// More than 32 refusals in a window of 256 guesses shut the gate for 4096 lookups.
TEST(RememberedRowsTest, TheGateShutsWhenGuessesKeepFailingAndOpensAgain) {
  RememberedRows remembered;
  for (int i = 0; i < 200; ++i) remembered.Confirmed();
  for (int i = 0; i < 32; ++i) remembered.Refused({"x"});
  remembered.Remember({Row("a", 1, 10)});
  EXPECT_TRUE(remembered.Find({"a"}).has_value()) << "32 refusals of 232 guesses: still open";
  remembered.Refused({"x"});  // the 33rd
  int shut = 0;
  while (!remembered.Find({"a"}).has_value()) {
    ++shut;
    ASSERT_LE(shut, 4096) << "the gate never opened again";
  }
  EXPECT_EQ(shut, 4096);
}

TEST(RememberedRowsTest, RemembersAtMostTheBound) {
  RememberedRows remembered;
  for (size_t i = 0; i < kRememberedRowsMax + 10; ++i) {
    remembered.Remember({Row(absl::StrCat("account-", i), 1, 0)});
  }
  size_t found = 0;
  for (size_t i = 0; i < kRememberedRowsMax + 10; ++i) {
    if (remembered.Find({absl::StrCat("account-", i)}).has_value()) ++found;
  }
  EXPECT_EQ(found, kRememberedRowsMax);
  // The newest is always kept.
  EXPECT_TRUE(remembered.Find({absl::StrCat("account-", kRememberedRowsMax + 9)}).has_value());
}

}  // namespace
}  // namespace ledger::postgres_internal
