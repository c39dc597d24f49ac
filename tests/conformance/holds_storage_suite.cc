// Holds through the storage contract itself, checked identically on every engine: hold
// and settlement transactions written straight through StorageTransaction (no Ledger,
// no SQL), each locking its accounts first as the pipeline does, then read back through
// every read the contract has (GetHold, ListHolds on both sides, ListLapsedHolds,
// HoldTotals, LoadHolds, LoadHoldTotals, transactions with their terms or hold_id, the
// accounts' pending amounts). What only one engine can show (its migrations, rows
// corrupted through SQL, its schema's constraints) stays in tests/engines/<engine>.
#include <algorithm>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "base/status.h"
#include "ledger/engine.h"
#include "ledger/hold.h"
#include "tests/conformance/conformance_fixture.h"
#include "tests/support/hold_writes.h"

namespace ledger::testing {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1'767'225'600);  // 2026-01-01

// PendingHoldTotals flattened and printable, so a mismatch says which total is off.
struct Totals {
  Amount lapsed_debits = 0;
  Amount lapsed_credits = 0;
  int64_t reserving_count = 0;
  Amount reserving_amount = 0;

  static Totals Of(const absl::StatusOr<PendingHoldTotals>& totals) {
    EXPECT_TRUE(totals.ok()) << totals.status();
    if (!totals.ok()) return {.lapsed_debits = -1};
    return {totals->lapsed_debits, totals->lapsed_credits, totals->reserving_since.count,
            totals->reserving_since.amount};
  }
  friend bool operator==(const Totals&, const Totals&) = default;
  friend std::ostream& operator<<(std::ostream& out, const Totals& totals) {
    return out << "lapsed " << totals.lapsed_debits << " out, " << totals.lapsed_credits
               << " in; reserving " << totals.reserving_count << " holds, "
               << totals.reserving_amount;
  }
};

std::vector<std::string> Ids(const absl::StatusOr<std::vector<Hold>>& holds) {
  EXPECT_TRUE(holds.ok()) << holds.status();
  std::vector<std::string> ids;
  if (holds.ok()) {
    for (const Hold& hold : *holds) ids.push_back(hold.id);
  }
  return ids;
}

Hold PendingHold(const Transaction& transaction) {
  return Hold{.id = transaction.id, .terms = *transaction.hold,
              .created_at = transaction.created_at};
}

Account AccountOf(Engine& engine, const std::string& id) {
  absl::StatusOr<std::optional<Account>> account = engine.GetAccount(id);
  EXPECT_TRUE(account.ok() && account->has_value()) << id << ": " << account.status();
  return account.ok() && account->has_value() ? **account : Account{};
}

// ---- hold rows through every read ---------------------------------------------------

TEST_P(ConformanceTest, HoldStorageHoldsReadBackThroughEveryRead) {
  const HoldTerms one{"alice", "bob", "CREDITS", 30, kStart + absl::Hours(1)};
  const HoldTerms two{"bob", "alice", "CREDITS", 5, std::nullopt};
  const HoldTerms three{"alice", "carol", "CREDITS", 7, kStart + absl::Minutes(10)};
  ASSERT_TRUE(PlaceHold(engine(), HoldTransaction("hold-1", one, kStart)).ok());
  ASSERT_TRUE(PlaceHold(engine(), HoldTransaction("hold-2", two, kStart + absl::Seconds(30))).ok());
  ASSERT_TRUE(
      PlaceHold(engine(), HoldTransaction("hold-3", three, kStart + absl::Minutes(1))).ok());

  absl::StatusOr<std::optional<Hold>> hold = engine().GetHold("hold-1");
  ASSERT_TRUE(hold.ok()) << hold.status();
  EXPECT_EQ(*hold, (Hold{.id = "hold-1", .terms = one, .created_at = kStart}));
  EXPECT_EQ(*engine().GetHold("nope"), std::nullopt);
  absl::StatusOr<std::optional<Transaction>> placed = engine().GetTransaction("hold-2");
  ASSERT_TRUE(placed.ok() && placed->has_value()) << placed.status();
  EXPECT_EQ(**placed, HoldTransaction("hold-2", two, kStart + absl::Seconds(30)));
  EXPECT_EQ((*placed)->hold, two);  // no expiry stays none
  EXPECT_FALSE((*placed)->hold_id.has_value());
  EXPECT_TRUE((*placed)->entries.empty());
  EXPECT_EQ(AccountOf(engine(), "alice").pending_debits, 37);
  EXPECT_EQ(AccountOf(engine(), "alice").pending_credits, 5);
  EXPECT_EQ(AccountOf(engine(), "carol").pending_credits, 7);

  // Both sides of an account, in id order, strictly after after_id, at most limit.
  using Names = std::vector<std::string>;
  EXPECT_EQ(Ids(engine().ListHolds("alice", "", 10)), (Names{"hold-1", "hold-2", "hold-3"}));
  EXPECT_EQ(Ids(engine().ListHolds("alice", "hold-1", 10)), (Names{"hold-2", "hold-3"}));
  EXPECT_EQ(Ids(engine().ListHolds("alice", "", 2)), (Names{"hold-1", "hold-2"}));
  EXPECT_EQ(Ids(engine().ListHolds("bob", "", 10)), (Names{"hold-1", "hold-2"}));
  EXPECT_EQ(Ids(engine().ListHolds("carol", "", 10)), (Names{"hold-3"}));
  EXPECT_TRUE(Ids(engine().ListHolds("issuance", "", 10)).empty());
  EXPECT_EQ(Ids(engine().ListHolds("", "", 10)), (Names{"hold-1", "hold-2", "hold-3"}));
  EXPECT_EQ(Ids(engine().ListHolds("", "hold-1", 1)), (Names{"hold-2"}));
  // Lapsed: pending and expires_at <= now, by (expires_at, id); none never lapses.
  EXPECT_EQ(Ids(engine().ListLapsedHolds(kStart + absl::Minutes(10), 10)), (Names{"hold-3"}));
  EXPECT_EQ(Ids(engine().ListLapsedHolds(kStart + absl::Hours(2), 10)),
            (Names{"hold-3", "hold-1"}));
  EXPECT_EQ(Ids(engine().ListLapsedHolds(kStart + absl::Hours(2), 1)), (Names{"hold-3"}));
  EXPECT_TRUE(Ids(engine().ListLapsedHolds(kStart + absl::Minutes(9), 10)).empty());

  // Totals, outside and inside a transaction alike.
  const absl::Time now = kStart + absl::Minutes(15);
  const Totals alice{.lapsed_debits = 7, .lapsed_credits = 0, .reserving_count = 1,
                     .reserving_amount = 30};
  EXPECT_EQ(Totals::Of(engine().HoldTotals("alice", now, kStart)), alice);
  // hold-1 was placed before `since`: it reserves, but not for the velocity window.
  EXPECT_EQ(Totals::Of(engine().HoldTotals("alice", now, kStart + absl::Seconds(1))),
            (Totals{.lapsed_debits = 7}));
  EXPECT_EQ(Totals::Of(engine().HoldTotals("bob", kStart + absl::Hours(2), kStart)),
            (Totals{.lapsed_credits = 30, .reserving_count = 1, .reserving_amount = 5}));
  EXPECT_EQ(Totals::Of(engine().HoldTotals("carol", now, kStart)),
            (Totals{.lapsed_credits = 7}));
  std::vector<Hold> loaded;
  {
    absl::StatusOr<std::unique_ptr<StorageTransaction>> storage = engine().Begin({});
    ASSERT_TRUE(storage.ok()) << storage.status();
    ASSERT_TRUE((*storage)->LockAccounts({"alice"}).ok());
    EXPECT_EQ(Totals::Of((*storage)->LoadHoldTotals("alice", now, kStart)), alice);
    absl::StatusOr<std::vector<Hold>> found = (*storage)->LoadHolds({"hold-3", "nope", "hold-1"});
    ASSERT_TRUE(found.ok()) << found.status();
    loaded = *std::move(found);
    EXPECT_TRUE(Ids((*storage)->LoadHolds({})).empty());
  }
  // Compared once the transaction is over: the memory engine's holds its state lock.
  std::sort(loaded.begin(), loaded.end(), [](const Hold& a, const Hold& b) { return a.id < b.id; });
  ASSERT_EQ(loaded.size(), 2u);
  EXPECT_EQ(loaded[0], (Hold{.id = "hold-1", .terms = one, .created_at = kStart}));
  EXPECT_EQ(loaded[1],
            (Hold{.id = "hold-3", .terms = three, .created_at = kStart + absl::Minutes(1)}));

  // Capture part of hold-1 and void hold-3; hold-2 stays pending (it never lapses).
  ASSERT_TRUE(SettleHold(engine(),
                     Settlement("capture-1", OperationKind::kCapture, "hold-1",
                                kStart + absl::Minutes(2)),
                     one, 20)
                  .ok());
  ASSERT_TRUE(SettleHold(engine(),
                     Settlement("void-3", OperationKind::kVoid, "hold-3",
                                kStart + absl::Minutes(3)),
                     three)
                  .ok());
  EXPECT_EQ(*engine().GetHold("hold-1"),
            (Hold{.id = "hold-1", .terms = one, .created_at = kStart,
                  .status = HoldStatus::kCaptured, .settled_by = "capture-1"}));
  EXPECT_EQ(*engine().GetHold("hold-3"),
            (Hold{.id = "hold-3", .terms = three, .created_at = kStart + absl::Minutes(1),
                  .status = HoldStatus::kVoided, .settled_by = "void-3"}));
  absl::StatusOr<std::optional<Transaction>> capture = engine().GetTransaction("capture-1");
  ASSERT_TRUE(capture.ok() && capture->has_value()) << capture.status();
  EXPECT_EQ((*capture)->hold_id, "hold-1");
  EXPECT_FALSE((*capture)->hold.has_value());
  EXPECT_EQ((*capture)->entries.size(), 2u);
  absl::StatusOr<std::vector<Transaction>> listed = engine().ListTransactions("", 10);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 5u);
  for (const Transaction& transaction : *listed) {
    EXPECT_EQ(*engine().GetTransaction(transaction.id), transaction);
  }
  EXPECT_EQ(Ids(engine().ListHolds("alice", "", 10)), (Names{"hold-1", "hold-2", "hold-3"}))
      << "settled holds stay listed";
  EXPECT_TRUE(Ids(engine().ListLapsedHolds(kStart + absl::Hours(2), 10)).empty());
  EXPECT_EQ(Totals::Of(engine().HoldTotals("alice", kStart + absl::Hours(2), kStart)),
            Totals{});

  // The pending amounts as written, and closing waits for them.
  const Account after = AccountOf(engine(), "alice");
  EXPECT_EQ(after.pending_debits, 0);
  EXPECT_EQ(after.pending_credits, 5);
  EXPECT_EQ(after.balance, -20);
  EXPECT_EQ(AccountOf(engine(), "bob").pending_debits, 5);
  EXPECT_FALSE(*engine().CloseAccountIfZeroBalance("bob"));  // owes hold-2, balance 20
  EXPECT_EQ(AccountOf(engine(), "carol").pending_credits, 0);
  EXPECT_TRUE(*engine().CloseAccountIfZeroBalance("carol"));
}

// An expiry settles a lapsed hold like a capture or void: the hold reads expired and
// settled by it, and nothing of it is pending or lapsed any more.
TEST_P(ConformanceTest, HoldStorageAnExpiredHoldReadsBackSettledAndReleased) {
  const Transaction hold = HoldTransaction("hold-1", {"alice", "bob", "CREDITS", 300,
                                                      kStart + absl::Hours(1)}, kStart);
  ASSERT_TRUE(PlaceHold(engine(), hold).ok());
  const Hold pending = PendingHold(hold);
  const absl::Time later = kStart + absl::Hours(2);  // past expires_at
  EXPECT_EQ(*engine().GetTransaction(hold.id), hold);
  EXPECT_EQ(engine().ListTransactions("", 10).value(), std::vector<Transaction>{hold});
  EXPECT_TRUE(engine().ListHolds("alice", hold.id, 10)->empty());
  EXPECT_TRUE(engine().ListLapsedHolds(kStart, 10)->empty());
  EXPECT_EQ(engine().ListLapsedHolds(later, 10).value(), std::vector<Hold>{pending});
  EXPECT_EQ(Totals::Of(engine().HoldTotals("alice", kStart, kStart)),
            (Totals{.reserving_count = 1, .reserving_amount = 300}));
  EXPECT_EQ(Totals::Of(engine().HoldTotals("alice", later, kStart)),
            (Totals{.lapsed_debits = 300}));
  {
    absl::StatusOr<std::unique_ptr<StorageTransaction>> storage = engine().Begin({});
    ASSERT_TRUE(storage.ok()) << storage.status();
    EXPECT_EQ((*storage)->LoadHolds({"missing", hold.id}).value(), std::vector<Hold>{pending});
    EXPECT_EQ(Totals::Of((*storage)->LoadHoldTotals("alice", later, kStart)),
              (Totals{.lapsed_debits = 300}));
  }

  const Transaction expired = Settlement("expire-1", OperationKind::kExpire, hold.id, later);
  ASSERT_TRUE(SettleHold(engine(), expired, *hold.hold).ok());
  Hold settled = pending;
  settled.status = HoldStatus::kExpired;
  settled.settled_by = expired.id;
  EXPECT_EQ(*engine().GetHold(hold.id), settled);
  EXPECT_EQ(*engine().GetTransaction(expired.id), expired);
  EXPECT_TRUE(engine().ListLapsedHolds(later, 10)->empty());
  EXPECT_EQ(Totals::Of(engine().HoldTotals("alice", later, kStart)), Totals{});
  EXPECT_EQ(Totals::Of(engine().HoldTotals("bob", later, kStart)), Totals{});
  EXPECT_EQ(AccountOf(engine(), "alice").pending_debits, 0);
  EXPECT_EQ(AccountOf(engine(), "bob").pending_credits, 0);
  EXPECT_EQ(AccountOf(engine(), "alice").balance, 0);
  EXPECT_TRUE(*engine().CloseAccountIfZeroBalance("bob"));  // nothing pending any more
}

// Paging by id covers both sides of an account, and LoadHolds answers for more ids than
// one statement takes (SQLite splits at kHoldsPerSelectMax).
TEST_P(ConformanceTest, HoldStorageHoldsPageByIdOverBothSidesAndLoadInBulk) {
  constexpr int kHolds = 37;
  std::vector<Hold> of_alice;
  std::vector<std::string> ids;
  for (int i = 0; i < kHolds; ++i) {
    // alice pays out of half and receives the rest.
    const HoldTerms terms = i % 2 == 0
                                ? HoldTerms{"alice", "bob", "CREDITS", 10 + i, std::nullopt}
                                : HoldTerms{"carol", "alice", "CREDITS", 10 + i, std::nullopt};
    const Transaction hold =
        HoldTransaction(absl::StrCat("hold-", 100 + i), terms, kStart + absl::Seconds(i));
    ASSERT_TRUE(PlaceHold(engine(), hold).ok()) << hold.id;
    of_alice.push_back(PendingHold(hold));
    ids.push_back(hold.id);
  }
  const Transaction unrelated =
      HoldTransaction("hold-999", {"carol", "bob", "CREDITS", 5, std::nullopt}, kStart);
  ASSERT_TRUE(PlaceHold(engine(), unrelated).ok());
  auto by_id = [](const Hold& a, const Hold& b) { return a.id < b.id; };
  std::sort(of_alice.begin(), of_alice.end(), by_id);

  std::vector<Hold> paged;
  std::string after;
  for (int pages = 0; pages <= kHolds; ++pages) {
    absl::StatusOr<std::vector<Hold>> page = engine().ListHolds("alice", after, 5);
    ASSERT_TRUE(page.ok()) << page.status();
    if (page->empty()) break;
    EXPECT_LE(page->size(), 5u);
    paged.insert(paged.end(), page->begin(), page->end());
    after = page->back().id;
  }
  EXPECT_EQ(paged, of_alice);
  EXPECT_EQ(engine().ListHolds("", "", 100)->size(), static_cast<size_t>(kHolds + 1));

  absl::StatusOr<std::unique_ptr<StorageTransaction>> storage = engine().Begin({});
  ASSERT_TRUE(storage.ok()) << storage.status();
  absl::StatusOr<std::vector<Hold>> loaded = (*storage)->LoadHolds(ids);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  std::sort(loaded->begin(), loaded->end(), by_id);
  EXPECT_EQ(*loaded, of_alice);
}

TEST_P(ConformanceTest, HoldStoragePendingAmountsKeepAnAccountOpen) {
  const HoldTerms terms{"alice", "bob", "CREDITS", 9, std::nullopt};
  ASSERT_TRUE(PlaceHold(engine(), HoldTransaction("hold-1", terms, kStart)).ok());
  EXPECT_FALSE(*engine().CloseAccountIfZeroBalance("alice"));  // pending debits
  EXPECT_FALSE(*engine().CloseAccountIfZeroBalance("bob"));    // pending credits
  const Transaction voided = Settlement("void-1", OperationKind::kVoid, "hold-1", kStart);
  ASSERT_TRUE(SettleHold(engine(), voided, terms).ok());
  EXPECT_TRUE(*engine().CloseAccountIfZeroBalance("alice"));
  EXPECT_TRUE(*engine().CloseAccountIfZeroBalance("bob"));
}

// ---- what a write refuses -----------------------------------------------------------

// A hold is settled once: a second capture, void or expire of it fails retryably, like a
// taken reversal_of (the rerun re-reads the hold and rejects), and leaves nothing behind.
TEST_P(ConformanceTest, HoldStorageSecondSettlementOfAHoldIsRetryableAndWritesNothing) {
  const HoldTerms terms{"alice", "bob", "CREDITS", 30, kStart + absl::Hours(1)};
  ASSERT_TRUE(PlaceHold(engine(), HoldTransaction("hold-1", terms, kStart)).ok());
  const Transaction voided = Settlement("void-1", OperationKind::kVoid, "hold-1", kStart);
  ASSERT_TRUE(SettleHold(engine(), voided, terms).ok());

  for (OperationKind kind : {OperationKind::kCapture, OperationKind::kVoid,
                             OperationKind::kExpire}) {
    const std::string id = absl::StrCat("second-", View(OperationKindName(kind)));
    SCOPED_TRACE(id);
    absl::Status settled =
        SettleHold(engine(), Settlement(id, kind, "hold-1", kStart + absl::Hours(2)), terms,
               kind == OperationKind::kCapture ? 30 : 0);
    EXPECT_TRUE(IsRetryable(settled)) << settled;
    EXPECT_EQ(*engine().GetTransaction(id), std::nullopt);  // rolled back: nothing stays
  }
  EXPECT_EQ(*engine().GetHold("hold-1"),
            (Hold{.id = "hold-1", .terms = terms, .created_at = kStart,
                  .status = HoldStatus::kVoided, .settled_by = "void-1"}));
  EXPECT_EQ(*engine().GetTransaction("void-1"), voided);
  EXPECT_EQ(engine().ListTransactions("", 10)->size(), 2u);
  for (const char* id : {"alice", "bob"}) {
    const Account account = AccountOf(engine(), id);
    EXPECT_EQ(account.pending_debits, 0) << id;
    EXPECT_EQ(account.pending_credits, 0) << id;
    EXPECT_EQ(account.balance, 0) << id;
  }
}

// Hold fields that do not fit the kind are refused before anything is written.
TEST_P(ConformanceTest, HoldStorageHoldFieldsThatDoNotFitTheKindWriteNothing) {
  const HoldTerms terms{"alice", "bob", "CREDITS", 5, std::nullopt};
  Transaction terms_on_a_void = HoldTransaction("void-1", terms, kStart);
  terms_on_a_void.kind = OperationKind::kVoid;
  Transaction hold_without_terms = HoldTransaction("hold-2", terms, kStart);
  hold_without_terms.hold.reset();
  Transaction transfer_naming_a_hold{.id = "transfer-1", .kind = OperationKind::kTransfer,
                                     .created_at = kStart};
  transfer_naming_a_hold.hold_id = "hold-1";
  Transaction capture_without_hold_id = Settlement("capture-1", OperationKind::kCapture, "",
                                                   kStart);
  capture_without_hold_id.hold_id.reset();
  for (const Transaction& bad : {terms_on_a_void, hold_without_terms, transfer_naming_a_hold,
                                 capture_without_hold_id}) {
    SCOPED_TRACE(bad.id);
    absl::Status refused =
        WriteThroughStorage(engine(), bad, {"alice", "bob"}, [](std::vector<Account>&) {});
    EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << refused;
    EXPECT_EQ(*engine().GetTransaction(bad.id), std::nullopt);
  }
  EXPECT_TRUE(engine().ListTransactions("", 10)->empty());
  EXPECT_TRUE(engine().ListHolds("", "", 10)->empty());
}

}  // namespace
}  // namespace ledger::testing
