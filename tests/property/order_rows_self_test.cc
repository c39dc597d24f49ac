// The order-row checks of the concurrent property runs (order_rows.h) must catch a
// service that commits its order row apart from its payment. Here the units of work post
// the payment in one transaction and insert the order row in a second one, on SQLite,
// under the boundary faults of ConcurrentClientsUnderBoundaryFaults...: a fault that
// hits the second transaction leaves an acknowledged payment without its order, and the
// resend, seeing `duplicate`, skips the insert. The run must report it.
#include <iostream>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/engines/sqlite/sqlite_test_database.h"
#include "tests/property/concurrent_run.h"
#include "tests/support/temporary_databases.h"

namespace ledger::property {
namespace {

constexpr uint64_t kSeed = 3000;  // the boundary-fault concurrent test's default seed

TEST(OrderRowsSelfTest, AnOrderRowCommittedApartFromItsPaymentIsCaught) {
  static testing::TemporaryDatabases databases("ledger-sqlite-order-rows-self-test");
  PropertyContext context;
  context.engine_name = "sqlite";
  context.open_fresh = [] { return testing::OpenFreshSqliteEngine(databases); };
  context.orders_table = "property_orders";
  RunResult result = RunConcurrent(
      context, MakeUniverse(kSeed), kSeed,
      ConcurrentOptions{.threads = 4, .requests_per_thread = 200, .phases = 3,
                        .boundary_faults = true, .order_row_write = OrderRowWrite::kApart});
  ASSERT_TRUE(result.violation.has_value())
      << "the property run missed payments committed without their order rows: "
      << result.stats.ToText();
  EXPECT_TRUE(absl::StrContains(result.violation->message, "without its order row"))
      << result.violation->message;
  std::cout << "caught: " << result.violation->message << std::endl;
}

}  // namespace
}  // namespace ledger::property
