#include "bench/load/round_trip_relay.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <regex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace ledger::load {
namespace {

constexpr int kPollMillis = 100;  // how soon a relaying thread sees the relay stop
constexpr size_t kBufferBytes = 64 * 1024;

absl::Status Errno(const char* what) {
  return absl::UnavailableError(absl::StrCat("round-trip relay: ", what, ": ", std::strerror(errno)));
}

void NoDelay(int socket) {
  int on = 1;
  setsockopt(socket, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

// Writes all of `bytes`; false when the peer is gone.
bool SendAll(int socket, const char* bytes, size_t size) {
  while (size > 0) {
    ssize_t sent = send(socket, bytes, size, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    bytes += sent;
    size -= static_cast<size_t>(sent);
  }
  return true;
}

// The URL's authority: scheme://[userinfo@]host:port/...
const std::regex& AuthorityPattern() {
  static const std::regex pattern(R"(^([a-z]+://(?:[^@/]*@)?)([0-9.]+):([0-9]+)(.*)$)");
  return pattern;
}

}  // namespace

absl::StatusOr<std::unique_ptr<RoundTripRelay>> RoundTripRelay::Start(
    const std::string& target_host, int target_port, absl::Duration added_latency) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0) return Errno("socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  if (bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      listen(listener, 128) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    absl::Status failed = Errno("listen");
    close(listener);
    return failed;
  }
  std::unique_ptr<RoundTripRelay> relay(
      new RoundTripRelay(listener, ntohs(address.sin_port), target_host, target_port,
                         added_latency));
  relay->acceptor_ = std::thread([raw = relay.get()] { raw->AcceptLoop(); });
  return relay;
}

RoundTripRelay::~RoundTripRelay() {
  stopping_ = true;
  acceptor_.join();
  close(listener_);
  absl::MutexLock lock(&mutex_);
  for (std::thread& relay : relays_) relay.join();
}

void RoundTripRelay::AcceptLoop() {
  while (!stopping_) {
    pollfd waiting{.fd = listener_, .events = POLLIN, .revents = 0};
    if (poll(&waiting, 1, kPollMillis) <= 0) continue;
    int client = accept(listener_, nullptr, nullptr);
    if (client < 0) continue;
    int server = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in target{};
    target.sin_family = AF_INET;
    target.sin_port = htons(static_cast<uint16_t>(target_port_));
    if (server < 0 || inet_pton(AF_INET, target_host_.c_str(), &target.sin_addr) != 1 ||
        connect(server, reinterpret_cast<sockaddr*>(&target), sizeof target) != 0) {
      if (server >= 0) close(server);
      close(client);
      continue;
    }
    NoDelay(client);
    NoDelay(server);
    absl::MutexLock lock(&mutex_);
    relays_.emplace_back([this, client, server] { Relay(client, server); });
  }
}

void RoundTripRelay::Relay(int client, int server) {
  std::vector<char> buffer(kBufferBytes);
  bool server_spoke_last = true;  // the first request opens a turn
  while (!stopping_) {
    pollfd sides[2] = {{.fd = client, .events = POLLIN, .revents = 0},
                       {.fd = server, .events = POLLIN, .revents = 0}};
    if (poll(sides, 2, kPollMillis) <= 0) continue;
    bool open = true;
    for (int side = 0; side < 2 && open; ++side) {
      if (sides[side].revents == 0) continue;
      ssize_t received = recv(sides[side].fd, buffer.data(), buffer.size(), 0);
      if (received < 0 && errno == EINTR) continue;
      if (received <= 0) {
        open = false;
        break;
      }
      const bool from_client = side == 0;
      if (!from_client && cut_at_next_reply_.exchange(false)) {
        open = false;
        break;
      }
      if (from_client && server_spoke_last && hold_next_request_.exchange(false)) {
        HoldTurn(client, server, std::string(buffer.data(), static_cast<size_t>(received)));
        close(server);
        return;
      }
      if (from_client && server_spoke_last) {
        round_trips_.fetch_add(1, std::memory_order_relaxed);
        // Only this connection's thread sleeps: other connections' turns go on.
        if (added_latency_ > absl::ZeroDuration()) absl::SleepFor(added_latency_);
      }
      server_spoke_last = !from_client;
      open = SendAll(from_client ? server : client, buffer.data(), static_cast<size_t>(received));
    }
    if (!open) break;
  }
  close(client);
  close(server);
}

void RoundTripRelay::HoldTurn(int client, int server, std::string held) {
  constexpr int kQuietMillis = 100;
  char buffer[16 * 1024];
  for (;;) {  // the rest of the turn: libpq writes a pipeline in pieces
    pollfd more{.fd = client, .events = POLLIN, .revents = 0};
    if (poll(&more, 1, kQuietMillis) <= 0) break;
    ssize_t received = recv(client, buffer, sizeof buffer, 0);
    if (received <= 0) break;
    held.append(buffer, static_cast<size_t>(received));
  }
  close(client);
  {
    absl::MutexLock lock(&held_mutex_);
    held_ = Held::kHeld;
  }
  // Until the release, the server's side is only watched. A server that ends the session
  // says so first (an error message, then the close), and an idle one says nothing else:
  // once it has spoken, or closed, the held request is never sent.
  bool spoke = false, sent = false;
  auto heard = [&](int wait_millis) {  // read what the server sent; false once it closed
    pollfd side{.fd = server, .events = POLLIN, .revents = 0};
    if (poll(&side, 1, wait_millis) <= 0) return true;
    if (recv(server, buffer, sizeof buffer, 0) <= 0) return false;
    if (sent) {
      absl::MutexLock lock(&held_mutex_);
      held_ = Held::kAnswered;  // later answers are read and dropped
    } else {
      spoke = true;
    }
    return true;
  };
  while (!stopping_) {
    bool release = false;
    {
      absl::MutexLock lock(&held_mutex_);
      release = !sent && held_ == Held::kReleaseAsked;
    }
    if (release) {
      sent = heard(0) && !spoke && SendAll(server, held.data(), held.size());
      if (!sent) break;
    }
    if (!heard(10)) break;
  }
  absl::MutexLock lock(&held_mutex_);
  if (held_ != Held::kAnswered) held_ = Held::kServerGone;
}

bool RoundTripRelay::ReleaseHeld() {
  absl::MutexLock lock(&held_mutex_);
  if (held_ == Held::kHeld) held_ = Held::kReleaseAsked;
  if (held_ != Held::kReleaseAsked) return held_ == Held::kAnswered;
  held_mutex_.AwaitWithTimeout(
      absl::Condition(+[](Held* held) { return *held == Held::kAnswered || *held == Held::kServerGone; },
                      &held_),
      absl::Seconds(5));
  return held_ == Held::kAnswered;
}

absl::StatusOr<RelayedUrl> UrlTarget(const std::string& url) {
  std::smatch match;
  int port = 0;
  if (!std::regex_match(url, match, AuthorityPattern()) || !absl::SimpleAtoi(match[3].str(), &port)) {
    return absl::InvalidArgumentError(
        "--count-round-trips needs a postgres:// or mysql:// URL with an IPv4 host and a port "
        "(e.g. postgresql://user@127.0.0.1:5432/db)");
  }
  return RelayedUrl{.url = url, .host = match[2].str(), .port = port};
}

absl::StatusOr<RelayedUrl> RelayUrl(const std::string& url, int relay_port) {
  absl::StatusOr<RelayedUrl> target = UrlTarget(url);
  if (!target.ok()) return target.status();
  std::smatch match;
  std::regex_match(url, match, AuthorityPattern());
  target->url = absl::StrCat(match[1].str(), "127.0.0.1:", relay_port, match[4].str());
  return target;
}

}  // namespace ledger::load
