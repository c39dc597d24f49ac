// A TCP proxy in front of a test's database server that freezes one connection at a
// chosen point of its protocol: when the client sends a message holding a given text
// (a statement, "pg_advisory_lock", "schema_migrations"), or as soon as it connects.
// A frozen connection forwards nothing more either way, but stays open: the client's
// kernel still gets its bytes acknowledged, so, as with a server stopped by SIGSTOP,
// only the client's own bounds end its wait. The message that froze it reaches the
// server or not, as asked: frozen before the server ran it, or while it ran (its answer
// never comes back). The other connections pass through untouched.
//
//   absl::StatusOr<std::unique_ptr<FreezingProxy>> proxy = FreezingProxy::Start(port);
//   (*proxy)->FreezeWhenClientSends("pg_advisory_lock");
//   ... open an engine on 127.0.0.1:(*proxy)->port() ...
//   EXPECT_EQ((*proxy)->frozen(), 1);   // the point was reached
//   (*proxy)->Reset();                  // frozen connections closed, nothing frozen
//
// The texts are matched in the bytes of one connection's client side (no TLS).
// Thread-safe.
#ifndef LEDGER_TESTS_SUPPORT_FREEZING_PROXY_H_
#define LEDGER_TESTS_SUPPORT_FREEZING_PROXY_H_

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace ledger::testing {

class FreezingProxy {
 public:
  // Listens on 127.0.0.1 (a free port) and forwards every connection to
  // 127.0.0.1:`server_port`. Internal when it cannot listen.
  static absl::StatusOr<std::unique_ptr<FreezingProxy>> Start(int server_port);
  ~FreezingProxy();  // closes every connection
  FreezingProxy(const FreezingProxy&) = delete;
  FreezingProxy& operator=(const FreezingProxy&) = delete;

  int port() const { return port_; }

  enum class Trigger { kWithheld, kDelivered };
  // From now on, the first connection whose client sends `text` freezes (one only). The
  // bytes that carried it are withheld from the server, or delivered first.
  void FreezeWhenClientSends(std::string text, Trigger trigger = Trigger::kWithheld)
      ABSL_LOCKS_EXCLUDED(mutex_);
  // From now on, every new connection freezes as it is accepted: the client's TCP
  // connect succeeds, and nothing is ever answered (not even the server's greeting).
  void FreezeOnConnect() ABSL_LOCKS_EXCLUDED(mutex_);
  // Connections frozen so far.
  int frozen() ABSL_LOCKS_EXCLUDED(mutex_);
  // Closes the frozen connections (the server sees its clients leave) and stops
  // freezing.
  void Reset() ABSL_LOCKS_EXCLUDED(mutex_);

 private:
  struct Pipe {
    int client = -1;
    int server = -1;  // -1: frozen at accept, no server connection
    bool frozen = false;
    std::string tail;  // the client's last bytes, for a text split between two reads
  };

  FreezingProxy(int listener, int wake_read, int wake_write, int server_port);
  void Run() ABSL_LOCKS_EXCLUDED(mutex_);
  void Wake();
  void Close(Pipe& pipe);
  // Forwards what `from` has; false when the pipe ended. Freezes on the trigger text.
  bool Forward(Pipe& pipe, bool from_client) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  const int listener_;
  const int wake_read_;
  const int wake_write_;
  const int server_port_;
  int port_ = 0;
  absl::Mutex mutex_;
  std::vector<std::unique_ptr<Pipe>> pipes_ ABSL_GUARDED_BY(mutex_);
  std::string trigger_ ABSL_GUARDED_BY(mutex_);
  bool deliver_trigger_ ABSL_GUARDED_BY(mutex_) = false;
  bool freeze_on_connect_ ABSL_GUARDED_BY(mutex_) = false;
  int frozen_ ABSL_GUARDED_BY(mutex_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_SUPPORT_FREEZING_PROXY_H_
