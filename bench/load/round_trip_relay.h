// A loopback TCP relay that counts round trips on the wire: ledger_load
// --count-round-trips puts it between the ledger and its database server, so the round
// trips a submit costs are counted from the bytes that travel, not from the engine's
// own word. A round trip is a turn of the conversation: data from the client after the
// server last sent something (or the first data of a connection). A request written in
// several pieces before any reply is one turn; so is a multi-statement script.
//
//   LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<RoundTripRelay> relay,
//                           RoundTripRelay::Start("127.0.0.1", 5432));
//   // connect to 127.0.0.1:relay->port() instead
//   int64_t before = relay->round_trips();
//
// The relay adds a hop to every round trip, so runs that count are not runs that time,
// unless the hop is the point: with an added latency the relay holds each turn's first
// request that long before it passes it on, as a database on another host would answer
// later (ledger_load --round-trip-latency). A sleep: at least the latency, never less.
// Thread-safe; the destructor stops it and closes every connection (bounded: each
// relaying thread polls with a short timeout).
#ifndef LEDGER_BENCH_LOAD_ROUND_TRIP_RELAY_H_
#define LEDGER_BENCH_LOAD_ROUND_TRIP_RELAY_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ledger::load {

class RoundTripRelay {
 public:
  // Listens on 127.0.0.1 (a free port) and relays each connection to target_host
  // (an IPv4 address) : target_port.
  // `added_latency` (zero: none) delays each round trip as described above.
  static absl::StatusOr<std::unique_ptr<RoundTripRelay>> Start(
      const std::string& target_host, int target_port,
      absl::Duration added_latency = absl::ZeroDuration());
  ~RoundTripRelay();
  RoundTripRelay(const RoundTripRelay&) = delete;
  RoundTripRelay& operator=(const RoundTripRelay&) = delete;

  int port() const { return port_; }
  // Turns of every connection so far.
  int64_t round_trips() const { return round_trips_.load(std::memory_order_relaxed); }
  // For tests of a lost answer: the next data a server sends, on any connection, is
  // dropped and that connection closed on both sides, as a network cut between the
  // server's reply and the client would. Once.
  void CutAtNextReply() { cut_at_next_reply_.store(true); }
  // For tests of a request still on its way when its client was cut off: the next turn a
  // client starts, on any connection, is held back from the server (all it sends until
  // it has been quiet for 100 ms) and the client's side is closed, while the server's side
  // stays open, as a network that lost the client with its request in flight would. Once.
  void HoldNextRequest() { hold_next_request_.store(true); }
  // Passes the held request on to the server if the server's side is still open and the
  // server has said nothing since (a server says so before it ends a session), and says
  // whether the server answered it; false when nothing is held. Waits at most 5 s.
  bool ReleaseHeld();

 private:
  RoundTripRelay(int listener, int port, std::string target_host, int target_port,
                 absl::Duration added_latency)
      : listener_(listener), port_(port), target_host_(std::move(target_host)),
        target_port_(target_port), added_latency_(added_latency) {}
  // Where a held request stands (HoldNextRequest).
  enum class Held { kNothing, kHeld, kReleaseAsked, kAnswered, kServerGone };
  void AcceptLoop();
  void Relay(int client, int server);
  // Holds the turn that began with `first` (HoldNextRequest) until it is released or
  // the server's side closes; closes `client`.
  void HoldTurn(int client, int server, std::string first);

  const int listener_;
  const int port_;
  const std::string target_host_;
  const int target_port_;
  const absl::Duration added_latency_;
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> round_trips_{0};
  std::atomic<bool> cut_at_next_reply_{false};
  std::atomic<bool> hold_next_request_{false};
  absl::Mutex held_mutex_;
  Held held_ ABSL_GUARDED_BY(held_mutex_) = Held::kNothing;
  std::thread acceptor_;
  absl::Mutex mutex_;
  std::vector<std::thread> relays_ ABSL_GUARDED_BY(mutex_);
};

// `url` (postgres://, postgresql://, mysql://) with its host:port replaced by
// 127.0.0.1:relay_port, and the original host and port. InvalidArgument when the URL
// names no IPv4 host with an explicit port.
struct RelayedUrl {
  std::string url;
  std::string host;
  int port = 0;
};
absl::StatusOr<RelayedUrl> RelayUrl(const std::string& url, int relay_port);
// The host and port `url` names (what RelayUrl replaces).
absl::StatusOr<RelayedUrl> UrlTarget(const std::string& url);

}  // namespace ledger::load

#endif  // LEDGER_BENCH_LOAD_ROUND_TRIP_RELAY_H_
