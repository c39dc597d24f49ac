#include "tests/support/freezing_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ledger::testing {
namespace {

constexpr size_t kTailMax = 256;  // longer than any trigger text

sockaddr_in Loopback(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

bool SendAll(int socket, const char* data, size_t size) {
  while (size > 0) {
    ssize_t sent = ::send(socket, data, size, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    data += sent;
    size -= static_cast<size_t>(sent);
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<FreezingProxy>> FreezingProxy::Start(int server_port) {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) return absl::InternalError(absl::StrCat("proxy: socket: ", std::strerror(errno)));
  sockaddr_in address = Loopback(0);
  socklen_t size = sizeof(address);
  int wake[2] = {-1, -1};
  if (::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::listen(listener, 64) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &size) != 0 ||
      ::pipe2(wake, O_CLOEXEC) != 0) {
    const std::string error = std::strerror(errno);
    ::close(listener);
    return absl::InternalError(absl::StrCat("proxy: cannot listen: ", error));
  }
  std::unique_ptr<FreezingProxy> proxy(new FreezingProxy(listener, wake[0], wake[1], server_port));
  proxy->port_ = ntohs(address.sin_port);
  proxy->thread_ = std::thread([raw = proxy.get()] { raw->Run(); });
  return proxy;
}

FreezingProxy::FreezingProxy(int listener, int wake_read, int wake_write, int server_port)
    : listener_(listener), wake_read_(wake_read), wake_write_(wake_write),
      server_port_(server_port) {}

FreezingProxy::~FreezingProxy() {
  {
    absl::MutexLock lock(&mutex_);
    stopping_ = true;
  }
  Wake();
  if (thread_.joinable()) thread_.join();
  absl::MutexLock lock(&mutex_);
  for (auto& pipe : pipes_) Close(*pipe);
  ::close(listener_);
  ::close(wake_read_);
  ::close(wake_write_);
}

void FreezingProxy::FreezeWhenClientSends(std::string text, Trigger trigger) {
  absl::MutexLock lock(&mutex_);
  trigger_ = std::move(text);
  deliver_trigger_ = trigger == Trigger::kDelivered;
}

void FreezingProxy::FreezeOnConnect() {
  absl::MutexLock lock(&mutex_);
  freeze_on_connect_ = true;
}

int FreezingProxy::frozen() {
  absl::MutexLock lock(&mutex_);
  return frozen_;
}

void FreezingProxy::Reset() {
  {
    absl::MutexLock lock(&mutex_);
    trigger_.clear();
    freeze_on_connect_ = false;
    for (auto& pipe : pipes_) {
      if (pipe->frozen) Close(*pipe);
    }
  }
  Wake();
}

void FreezingProxy::Wake() {
  const char byte = 0;
  (void)!::write(wake_write_, &byte, 1);
}

void FreezingProxy::Close(Pipe& pipe) {
  if (pipe.client >= 0) ::close(pipe.client);
  if (pipe.server >= 0) ::close(pipe.server);
  pipe.client = pipe.server = -1;
}

bool FreezingProxy::Forward(Pipe& pipe, bool from_client) {
  char buffer[16384];
  const int from = from_client ? pipe.client : pipe.server;
  const ssize_t got = ::recv(from, buffer, sizeof(buffer), 0);
  if (got < 0 && errno == EINTR) return true;
  if (got <= 0) return false;
  if (from_client && !trigger_.empty()) {
    pipe.tail.append(buffer, static_cast<size_t>(got));
    if (pipe.tail.find(trigger_) != std::string::npos) {
      // Nothing more moves either way, the message itself only if asked.
      pipe.frozen = true;
      trigger_.clear();
      ++frozen_;
      if (deliver_trigger_) (void)SendAll(pipe.server, buffer, static_cast<size_t>(got));
      return true;
    }
    if (pipe.tail.size() > kTailMax) pipe.tail.erase(0, pipe.tail.size() - kTailMax);
  }
  return SendAll(from_client ? pipe.server : pipe.client, buffer, static_cast<size_t>(got));
}

void FreezingProxy::Run() {
  while (true) {
    std::vector<pollfd> watched = {{listener_, POLLIN, 0}, {wake_read_, POLLIN, 0}};
    std::vector<std::pair<Pipe*, bool>> owners = {{nullptr, false}, {nullptr, false}};
    {
      absl::MutexLock lock(&mutex_);
      if (stopping_) return;
      std::erase_if(pipes_, [](const auto& pipe) { return pipe->client < 0; });
      for (auto& pipe : pipes_) {
        if (pipe->frozen) continue;
        watched.push_back({pipe->client, POLLIN, 0});
        owners.push_back({pipe.get(), true});
        watched.push_back({pipe->server, POLLIN, 0});
        owners.push_back({pipe.get(), false});
      }
    }
    if (::poll(watched.data(), watched.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    absl::MutexLock lock(&mutex_);
    if (stopping_) return;
    if (watched[1].revents != 0) {
      char drained[64];
      (void)!::read(wake_read_, drained, sizeof(drained));
    }
    if (watched[0].revents != 0) {
      const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client >= 0) {
        auto pipe = std::make_unique<Pipe>();
        pipe->client = client;
        if (freeze_on_connect_) {
          pipe->frozen = true;
          ++frozen_;
        } else {
          pipe->server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
          const sockaddr_in server = Loopback(server_port_);
          if (pipe->server < 0 ||
              ::connect(pipe->server, reinterpret_cast<const sockaddr*>(&server),
                        sizeof(server)) != 0) {
            Close(*pipe);
          }
        }
        if (pipe->client >= 0) pipes_.push_back(std::move(pipe));
      }
    }
    for (size_t i = 2; i < watched.size(); ++i) {
      auto [pipe, from_client] = owners[i];
      // Reset may have closed it, or its other side froze it, since the poll.
      if (watched[i].revents == 0 || pipe->client < 0 || pipe->frozen) continue;
      if (!Forward(*pipe, from_client)) Close(*pipe);
    }
  }
}

}  // namespace ledger::testing
