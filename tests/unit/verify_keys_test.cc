// VerifyLedger's key audit over an engine whose key listing has been tampered with: a
// key that names a missing transaction and a key whose fingerprint is not its
// transaction's are each one violation; the untouched keys are not. The audit reads a
// page's transactions in one GetTransactions call, counted here.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engines/memory/memory_engine.h"
#include "gtest/gtest.h"
#include "ledger/ledger.h"
#include "ledger/verify.h"
#include "tests/support/forwarding_engine.h"
#include "tests/support/open_ledger.h"

namespace ledger::testing {
namespace {

class TamperedKeysEngine final : public ForwardingEngine {
 public:
  using ForwardingEngine::ForwardingEngine;

  absl::StatusOr<std::vector<KeyRecord>> ListKeyRecords(const std::optional<KeyIdentity>& after,
                                                        int64_t limit) override {
    absl::StatusOr<std::vector<KeyRecord>> records = ForwardingEngine::ListKeyRecords(after, limit);
    if (!records.ok() || !tamper) return records;
    for (KeyRecord& record : *records) {
      if (record.identity.key == "t-3") record.transaction_id = "no-such-transaction";
      if (record.identity.key == "t-5") record.fingerprint = "0000";
    }
    return records;
  }

  absl::StatusOr<std::vector<Transaction>> GetTransactions(
      const std::vector<std::string>& ids) override {
    get_transactions_calls += 1;
    return ForwardingEngine::GetTransactions(ids);
  }

  bool tamper = false;
  int get_transactions_calls = 0;
};

TEST(VerifyKeys, AKeyWithAMissingTransactionOrAnotherFingerprintIsAViolation) {
  auto engine = std::make_shared<TamperedKeysEngine>(OpenMemoryEngine());
  Ledger ledger = OpenTestLedger(engine);
  ASSERT_TRUE(ledger.DefineAsset({"CREDITS", 0}).ok());
  ASSERT_TRUE(ledger.OpenAccount({.id = "issuance", .asset = "CREDITS", .allow_negative = true}).ok());
  ASSERT_TRUE(ledger.OpenAccount({.id = "alice", .asset = "CREDITS"}).ok());
  for (int i = 0; i < 8; ++i) {
    absl::StatusOr<Outcome> outcome = ledger.Submit(SubmitRequest{
        .key = absl::StrCat("t-", i), .operation = Operation::TopUp("issuance", "alice", "CREDITS", 10)});
    ASSERT_TRUE(outcome.ok() && outcome->kind == OutcomeKind::kCommitted) << outcome.status();
  }

  absl::StatusOr<VerifyReport> clean = VerifyLedger(*engine);
  ASSERT_TRUE(clean.ok()) << clean.status();
  EXPECT_TRUE(clean->ok()) << clean->ToText();
  EXPECT_EQ(clean->key_records, 8);
  EXPECT_EQ(engine->get_transactions_calls, 1);  // one page of keys, one read

  engine->tamper = true;
  absl::StatusOr<VerifyReport> tampered = VerifyLedger(*engine);
  ASSERT_TRUE(tampered.ok()) << tampered.status();
  EXPECT_EQ(tampered->key_records, 8);
  ASSERT_EQ(tampered->violation_count, 2) << tampered->ToText();
  std::string text = tampered->ToText();
  EXPECT_TRUE(absl::StrContains(text, "t-3 points at missing transaction no-such-transaction"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "t-5 fingerprint differs from its transaction's")) << text;
}

}  // namespace
}  // namespace ledger::testing
