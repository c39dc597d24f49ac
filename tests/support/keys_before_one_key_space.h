// The engine-generic half of each SQL engine's test of the one-key-space migration
// (schema/<engine>/*_one_key_space.sql, issue 30): the keys a release before it left
// (the library and the CLI keyed a submit under its kind, the HTTP service under
// "operations"), and what a ledger answers for them once the migration has run. How the
// older database is made (the migrations before that one, through the engine's own
// runner) is each engine's and stays in its tests/engines/<engine>/ test. The migration
// changes no table, so today's engine writes the older database as it is: naming the
// kind as SubmitRequest::key_namespace writes exactly the rows the old default did.
#ifndef LEDGER_TESTS_SUPPORT_KEYS_BEFORE_ONE_KEY_SPACE_H_
#define LEDGER_TESTS_SUPPORT_KEYS_BEFORE_ONE_KEY_SPACE_H_

#include <map>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "ledger/ledger.h"

namespace ledger::testing {

// What WriteKeysOfPerKindSpaces left: for each key, the transaction a resend through
// the default space must replay once the migration has run.
struct KeysBeforeOneKeySpace {
  std::map<std::string, std::string> replayed_transaction_of;
  Amount alice_balance = 0;
  Amount bob_balance = 0;
};

// Through `ledger` (its clock `clock`, which this advances): asset CREDITS, accounts
// issuance (may go negative), alice and bob, and keys as an older release wrote them:
// "pay-1" a top-up under "top_up" (issue 30's example); "shared" a top-up under
// "top_up" with a 1 h TTL and a transfer under "transfer" with 48 h; "http-1" a top-up
// under "operations" (sent over HTTP) and a transfer under "transfer"; "hold-1" a hold
// under "hold". Asserts each committed.
KeysBeforeOneKeySpace WriteKeysOfPerKindSpaces(Ledger& ledger, ManualClock& clock);

// Once the migration has run, through `ledger` (a new Ledger over the migrated engine):
// each key resent with its payload in the default space replays `before`'s transaction
// (the one that expires last where two kinds shared a key, the HTTP one where HTTP had
// it), another payload or kind under it is a conflict, the old per-kind rows still
// replay when their kind is named, nothing posted twice, and the ledger verifies.
void ExpectOldKeysReplayInTheOneKeySpace(Ledger& ledger, const KeysBeforeOneKeySpace& before);

// The migration's SQL names the default space and every kind an older release keyed a
// submit under (every OperationKind but expire, which has no key), so adding a kind or
// renaming the space cannot leave it behind unnoticed.
void ExpectMigrationNamesEveryOldSpace(std::string_view sql);

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_SUPPORT_KEYS_BEFORE_ONE_KEY_SPACE_H_
