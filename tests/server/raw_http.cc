#include "tests/server/raw_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace ledger::testing {

std::string RawResponse::Header(std::string_view name) const {
  for (absl::string_view line : absl::StrSplit(head, "\r\n")) {
    size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    if (absl::EqualsIgnoreCase(line.substr(0, colon), absl::string_view(name.data(), name.size()))) {
      return std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    }
  }
  return "";
}

std::unique_ptr<RawConnection> RawConnection::Open(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) {
    ADD_FAILURE() << "socket: " << errno;
    return nullptr;
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ADD_FAILURE() << "connect to port " << port << ": errno " << errno;
    close(fd);
    return nullptr;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return std::unique_ptr<RawConnection>(new RawConnection(fd));
}

RawConnection::~RawConnection() { close(fd_); }

bool RawConnection::Send(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t sent = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(sent));
  }
  return true;
}

bool RawConnection::Readable(absl::Duration timeout) {
  if (!buffered_.empty()) return true;
  pollfd descriptor{.fd = fd_, .events = POLLIN, .revents = 0};
  return poll(&descriptor, 1, static_cast<int>(absl::ToInt64Milliseconds(timeout))) > 0;
}

bool RawConnection::Fill(absl::Time deadline) {
  absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) return false;
  pollfd descriptor{.fd = fd_, .events = POLLIN, .revents = 0};
  if (poll(&descriptor, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1) <= 0) return false;
  char chunk[64 * 1024];
  ssize_t received = recv(fd_, chunk, sizeof(chunk), 0);
  if (received <= 0) return false;
  buffered_.append(chunk, static_cast<size_t>(received));
  return true;
}

std::optional<RawResponse> RawConnection::ReadResponse(absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  size_t head_end = std::string::npos;
  while ((head_end = buffered_.find("\r\n\r\n")) == std::string::npos) {
    if (!Fill(deadline)) return std::nullopt;
  }
  RawResponse response;
  response.head = buffered_.substr(0, head_end);
  response.status_line = response.head.substr(0, response.head.find("\r\n"));
  std::vector<std::string> words = absl::StrSplit(response.status_line, ' ');
  if (words.size() < 2 || !absl::SimpleAtoi(words[1], &response.status)) return std::nullopt;
  size_t length = 0;
  if (response.status >= 200 && !absl::SimpleAtoi(response.Header("Content-Length"), &length)) length = 0;
  size_t total = head_end + 4 + length;
  while (buffered_.size() < total) {
    if (!Fill(deadline)) return std::nullopt;
  }
  response.body = buffered_.substr(head_end + 4, length);
  buffered_.erase(0, total);
  return response;
}

bool RawConnection::WaitForClose(absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    pollfd descriptor{.fd = fd_, .events = POLLIN, .revents = 0};
    int left = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now())) + 1;
    if (poll(&descriptor, 1, left) <= 0) return false;
    char chunk[64 * 1024];
    ssize_t received = recv(fd_, chunk, sizeof(chunk), 0);
    if (received <= 0) return true;  // EOF, or reset
  }
  return false;
}

int64_t ProcessMemoryBytes(int pid, std::string_view field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (!absl::StartsWith(line, absl::string_view(field.data(), field.size())) ||
        line.size() <= field.size() || line[field.size()] != ':') {
      continue;
    }
    std::vector<std::string> words =
        absl::StrSplit(line.substr(field.size() + 1), absl::ByAnyChar(" \t"), absl::SkipEmpty());
    int64_t kilobytes = 0;
    if (!words.empty() && absl::SimpleAtoi(words[0], &kilobytes)) return kilobytes * 1024;
  }
  return -1;
}

}  // namespace ledger::testing
