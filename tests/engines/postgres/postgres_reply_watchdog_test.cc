// The PostgreSQL engine's reply deadline (postgres_reply_watchdog.h) on a local socket
// pair: a read nobody answers ends when the deadline shuts the socket down; a deadline
// disarmed in time leaves the socket alone. No server needed.
#include "engines/postgres/postgres_reply_watchdog.h"

#include <sys/socket.h>
#include <unistd.h>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace ledger::postgres_internal {
namespace {

class SocketPair {
 public:
  SocketPair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, ends_), 0); }
  ~SocketPair() {
    close(ends_[0]);
    close(ends_[1]);
  }
  int client() const { return ends_[0]; }
  int server() const { return ends_[1]; }

 private:
  int ends_[2] = {-1, -1};
};

TEST(ReplyWatchdogTest, AReadNobodyAnswersEndsAtTheDeadline) {
  ReplyWatchdog watchdog;
  SocketPair sockets;
  ReplyWatchdog::Armed armed = watchdog.Arm(sockets.client(), absl::Milliseconds(50));
  char byte = 0;
  // Blocks until the watchdog shuts the socket down: then end of file.
  EXPECT_EQ(recv(sockets.client(), &byte, 1, 0), 0);
  EXPECT_TRUE(armed.Disarm());
  EXPECT_FALSE(armed.Disarm());  // once
}

TEST(ReplyWatchdogTest, ADeadlineDisarmedInTimeLeavesTheSocketAlone) {
  ReplyWatchdog watchdog;
  SocketPair sockets;
  {
    ReplyWatchdog::Armed armed = watchdog.Arm(sockets.client(), absl::Milliseconds(50));
    ASSERT_EQ(send(sockets.server(), "x", 1, 0), 1);
    char byte = 0;
    ASSERT_EQ(recv(sockets.client(), &byte, 1, 0), 1);
    EXPECT_FALSE(armed.Disarm());
  }
  // Past the disarmed deadline the socket still carries data.
  absl::SleepFor(absl::Milliseconds(100));
  ASSERT_EQ(send(sockets.server(), "y", 1, 0), 1);
  char byte = 0;
  EXPECT_EQ(recv(sockets.client(), &byte, 1, 0), 1);
  EXPECT_EQ(byte, 'y');
}

TEST(ReplyWatchdogTest, EachDeadlineCutsOnlyItsOwnSocket) {
  ReplyWatchdog watchdog;
  SocketPair slow;
  SocketPair patient;
  ReplyWatchdog::Armed long_deadline = watchdog.Arm(patient.client(), absl::Hours(1));
  ReplyWatchdog::Armed short_deadline = watchdog.Arm(slow.client(), absl::Milliseconds(50));
  char byte = 0;
  EXPECT_EQ(recv(slow.client(), &byte, 1, 0), 0);
  EXPECT_TRUE(short_deadline.Disarm());
  ASSERT_EQ(send(patient.server(), "z", 1, 0), 1);
  EXPECT_EQ(recv(patient.client(), &byte, 1, 0), 1);
  EXPECT_FALSE(long_deadline.Disarm());
}

}  // namespace
}  // namespace ledger::postgres_internal
