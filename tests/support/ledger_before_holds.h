// The engine-generic half of each engine's holds-migration test: a ledger written before
// holds existed, what it must still read as once the holds migration has run, and that
// the migrated ledger then takes holds. How the older schema is made and filled (twin
// databases, a renamed schema, an attached file) is each engine's own and stays in its
// tests/engines/<engine>/*_holds_test.cc.
#ifndef LEDGER_TESTS_SUPPORT_LEDGER_BEFORE_HOLDS_H_
#define LEDGER_TESTS_SUPPORT_LEDGER_BEFORE_HOLDS_H_

#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "ledger/engine.h"
#include "ledger/ledger.h"

namespace ledger::testing {

// Writes through `ledger` every operation kind there was before holds: asset CREDITS;
// accounts issuance (may go negative), platform, alice, bob and carol (overdraft 50); a
// top-up, a transfer and its reversal, another transfer, a spend with a fee, a posting
// and a payout. Asserts each committed.
void WriteLedgerBeforeHolds(Ledger& ledger);
// What WriteLedgerBeforeHolds leaves.
inline constexpr int64_t kAccountsBeforeHolds = 5;
inline constexpr int64_t kTransactionsBeforeHolds = 7;

// Everything a ledger's rows read back as, and its verify report (JSON text).
struct LedgerRows {
  std::vector<Account> accounts;
  std::vector<Transaction> transactions;
  std::vector<KeyRecord> keys;
  std::vector<OutboxEvent> events;
  std::string verify_report;
};
// Reads `engine`'s rows (asserts every read succeeds and the ledger verifies).
LedgerRows ReadLedgerRows(Engine& engine);

// `migrated`, once the holds migration has run, reads back `before` exactly, with
// nothing pending, no hold fields on any transaction and no hold, and verifies alike.
void ExpectRowsSurviveTheHoldsMigration(Engine& migrated, const LedgerRows& before);

// A Ledger over `migrated` takes holds: one captured in part (alice's available balance
// drops at once), one voided; the ledger still verifies.
void ExpectMigratedLedgerTakesHolds(std::shared_ptr<Engine> migrated, Clock* clock);

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_SUPPORT_LEDGER_BEFORE_HOLDS_H_
