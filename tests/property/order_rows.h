// The order service the property runs mix with plain submits (docs/unit-of-work.md's
// pattern): a unit of work posts one submit and, when it committed, inserts an order row
// keyed by the submit's idempotency key into an application table beside the ledger's,
// skipping its insert on `duplicate` (the row committed with the first post). After a run
// CheckOrderRows holds the database to it: every order row names the transaction its key
// committed, and every committed key sent in a unit of work has its order row.
//
// Which keys go through a unit is decided by the key alone (SentInUnitOfWork), so every
// delivery and every resend of a key takes the same path.
//
// Thread safety: the functions keep no state; a Ledger is as thread-safe as it is.
#ifndef LEDGER_TESTS_PROPERTY_ORDER_ROWS_H_
#define LEDGER_TESTS_PROPERTY_ORDER_ROWS_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ledger/ledger.h"

namespace ledger::property {

// Every third key, by a hash stable within a build (a seed replays).
bool SentInUnitOfWork(const std::string& key);

// How the order row is written. kApart is the broken service the self-test runs: the
// payment commits in one transaction, the order row in a second one, so a fault or a
// crash between the two leaves a payment without its order (and the resend, seeing
// `duplicate`, skips the insert).
enum class OrderRowWrite { kInTheUnit, kApart };

// The order row's key: the submit's identity (namespace|scope|key).
std::string OrderKeyOf(const KeyIdentity& identity);

// Runs `setup` and creates `table` (order_key, transaction_id) if it is not there, then
// empties it (server databases keep application tables between runs).
absl::Status CreateOrdersTable(Ledger& ledger, const std::string& table,
                               const std::vector<std::string>& setup);

// Transact { Submit; INSERT the order row when committed }, answered as Ledger::Submit
// answers: the outcome once the unit committed; the errors Submit itself returns (bad
// input, conflict, in progress, duplicate under kError, an invariant violation) as they
// are; any other failure of the unit (a fault, a lost session, retries run out, an
// in-doubt COMMIT) as a faulted outcome. `table` empty: the unit holds the submit alone.
SubmitResult SubmitInUnitOfWork(Ledger& ledger, const SubmitRequest& request,
                                const std::string& table,
                                OrderRowWrite write = OrderRowWrite::kInTheUnit);

// Every order row: order key -> transaction id (read a page at a time).
absl::StatusOr<std::map<std::string, std::string>> ReadOrderRows(Ledger& ledger,
                                                                 const std::string& table);

// Each order row names the transaction its key's record names, and its key went through
// a unit (`sent_in_unit`, SentInUnitOfWork unless a run sent none); each key record whose
// key went through a unit has its order row. Empty when they hold, else what broke.
std::string CheckOrderRows(
    const std::map<std::string, std::string>& order_rows, const std::vector<KeyRecord>& keys,
    const std::function<bool(const std::string&)>& sent_in_unit = SentInUnitOfWork);

}  // namespace ledger::property

#endif  // LEDGER_TESTS_PROPERTY_ORDER_ROWS_H_
