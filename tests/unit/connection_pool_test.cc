// The shared connection pool (engines/common/connection_pool.h) over a fake
// connection: no database needed.
#include "engines/common/connection_pool.h"

#include <atomic>
#include <memory>
#include <thread>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace ledger::engine_common {
namespace {

struct FakeConnection {
  int serial = 0;
  bool broken = false;
  bool alive = true;  // false: the "server" dropped it while idle
};

class ConnectionPoolTest : public ::testing::Test {
 protected:
  std::shared_ptr<ConnectionPool<FakeConnection>> MakePool(int size) {
    PoolHooks<FakeConnection> hooks;
    hooks.open = [this]() -> absl::StatusOr<std::unique_ptr<FakeConnection>> {
      if (refuse_opens_) return absl::UnavailableError("fake: server unreachable");
      auto connection = std::make_unique<FakeConnection>();
      connection->serial = ++opened_;
      return connection;
    };
    hooks.still_alive = [](FakeConnection& connection) { return connection.alive; };
    hooks.reusable = [](FakeConnection& connection) { return !connection.broken; };
    return ConnectionPool<FakeConnection>::Create({.engine = "fake", .size = size},
                                                  std::move(hooks))
        .value();
  }

  std::atomic<int> opened_{0};
  bool refuse_opens_ = false;
};

TEST_F(ConnectionPoolTest, SizeOutsideItsRangeIsInvalidArgument) {
  PoolHooks<FakeConnection> hooks;
  for (int size : {0, -1, kPoolSizeMax + 1}) {
    EXPECT_EQ(ConnectionPool<FakeConnection>::Create({.engine = "fake", .size = size}, hooks)
                  .status()
                  .code(),
              absl::StatusCode::kInvalidArgument)
        << size;
  }
  EXPECT_EQ(ConnectionPool<FakeConnection>::Create(
                {.engine = "fake", .size = 1, .acquire_wait = absl::Seconds(-1)}, hooks)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(ConnectionPoolTest, ReturnedConnectionIsReused) {
  auto pool = MakePool(2);
  int first_serial = 0;
  {
    ConnectionPool<FakeConnection>::Lease lease = pool->Acquire().value();
    EXPECT_FALSE(lease.reused());
    first_serial = lease->serial;
  }
  EXPECT_EQ(pool->IdleCountForTesting(), 1u);
  ConnectionPool<FakeConnection>::Lease again = pool->Acquire().value();
  EXPECT_TRUE(again.reused());
  EXPECT_EQ(again->serial, first_serial);
  EXPECT_EQ(opened_, 1);
}

TEST_F(ConnectionPoolTest, BoundedAcquireGivesUpWithUnavailable) {
  auto pool = MakePool(1);
  ConnectionPool<FakeConnection>::Lease held = pool->Acquire().value();
  absl::StatusOr<ConnectionPool<FakeConnection>::Lease> waited =
      pool->Acquire(absl::Milliseconds(20));
  EXPECT_EQ(waited.status().code(), absl::StatusCode::kUnavailable) << waited.status();
  // A zero wait is one try.
  EXPECT_EQ(pool->Acquire(absl::ZeroDuration()).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(opened_, 1);  // nothing opened beyond the size
}

TEST_F(ConnectionPoolTest, ReleaseWakesAWaiter) {
  auto pool = MakePool(1);
  std::optional<ConnectionPool<FakeConnection>::Lease> held = pool->Acquire().value();
  const int held_serial = (*held)->serial;
  absl::Notification waiting;
  absl::StatusOr<ConnectionPool<FakeConnection>::Lease> waited =
      absl::UnknownError("not run");
  std::thread waiter([&] {
    waiting.Notify();
    // Far longer than the test runs: only a release can end this wait successfully.
    waited = pool->Acquire(absl::Hours(1));
  });
  waiting.WaitForNotification();
  held.reset();  // returns the one connection
  waiter.join();
  ASSERT_TRUE(waited.ok()) << waited.status();
  EXPECT_EQ((*waited)->serial, held_serial);
}

TEST_F(ConnectionPoolTest, BrokenConnectionIsDiscardedNotReturned) {
  auto pool = MakePool(1);
  {
    ConnectionPool<FakeConnection>::Lease lease = pool->Acquire().value();
    lease->broken = true;  // the engine saw the session die
  }
  EXPECT_EQ(pool->IdleCountForTesting(), 0u);
  {
    ConnectionPool<FakeConnection>::Lease lease = pool->Acquire().value();
    EXPECT_EQ(lease->serial, 2);  // a new connection, in the freed slot
    lease.Discard();              // state unknown: the engine gives it up
  }
  EXPECT_EQ(pool->IdleCountForTesting(), 0u);
  ConnectionPool<FakeConnection>::Lease third = pool->Acquire(absl::ZeroDuration()).value();
  EXPECT_EQ(third->serial, 3);
}

TEST_F(ConnectionPoolTest, IdleConnectionTheServerDroppedIsReplaced) {
  auto pool = MakePool(1);
  {
    ConnectionPool<FakeConnection>::Lease lease = pool->Acquire().value();
    lease->alive = false;  // dropped while it will sit idle
  }
  ConnectionPool<FakeConnection>::Lease lease = pool->Acquire().value();
  EXPECT_EQ(lease->serial, 2);
  EXPECT_FALSE(lease.reused());
}

TEST_F(ConnectionPoolTest, FailedOpenFreesItsSlot) {
  auto pool = MakePool(1);
  refuse_opens_ = true;
  EXPECT_EQ(pool->Acquire().status().code(), absl::StatusCode::kUnavailable);
  refuse_opens_ = false;
  EXPECT_TRUE(pool->Acquire(absl::ZeroDuration()).ok());  // the slot came back
}

TEST_F(ConnectionPoolTest, AcquireFreshOpensANewConnectionEvenWithOneIdle) {
  auto pool = MakePool(1);
  { ConnectionPool<FakeConnection>::Lease lease = pool->Acquire().value(); }
  ConnectionPool<FakeConnection>::Lease fresh = pool->AcquireFresh().value();
  EXPECT_EQ(fresh->serial, 2);
  EXPECT_FALSE(fresh.reused());
}

TEST(PoolAcquireWaitTest, SubmitWaitsItsOwnBoundAndFailFastWaitsTheDefault) {
  EXPECT_EQ(PoolAcquireWait(absl::Seconds(3), kPoolAcquireWaitDefault), absl::Seconds(3));
  EXPECT_EQ(PoolAcquireWait(absl::ZeroDuration(), absl::Seconds(7)), absl::Seconds(7));
}

}  // namespace
}  // namespace ledger::engine_common
