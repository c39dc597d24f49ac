// A client socket that sends HTTP bytes exactly as written, for what a library client
// will not send: pipelined requests, trickled bytes, chunked bodies without end,
// Expect: 100-continue, HTTP/1.0. Every read is bounded by a timeout.
//
// Not thread-safe: one thread per connection.
#ifndef LEDGER_TESTS_SERVER_RAW_HTTP_H_
#define LEDGER_TESTS_SERVER_RAW_HTTP_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/time/time.h"

namespace ledger::testing {

struct RawResponse {
  std::string status_line;  // HTTP/1.1 201 Created
  int status = 0;
  std::string head;         // the status line and headers, as received
  std::string body;
  // The first header of that name (case-insensitive), "" when absent.
  std::string Header(std::string_view name) const;
};

class RawConnection {
 public:
  // A connected socket to 127.0.0.1:port, or null (and a test failure).
  static std::unique_ptr<RawConnection> Open(int port);
  ~RawConnection();

  // Writes every byte; false when the server has closed or reset the connection.
  bool Send(std::string_view bytes);
  // One response: the head, then Content-Length body bytes (a 1xx has none). nullopt
  // when the connection ends or `timeout` passes first. Bytes after it stay buffered
  // for the next call (pipelined answers).
  std::optional<RawResponse> ReadResponse(absl::Duration timeout);
  // True when bytes (or the end of the connection) can be read within `timeout`.
  bool Readable(absl::Duration timeout);
  // True when the server ends the connection (EOF or reset) within `timeout`; what it
  // sends before is dropped.
  bool WaitForClose(absl::Duration timeout);

 private:
  explicit RawConnection(int fd) : fd_(fd) {}
  // Reads what is there into buffered_; false at the end of the connection or timeout.
  bool Fill(absl::Time deadline);
  int fd_;
  std::string buffered_;
};

// The process's resident set (VmRSS) or its peak (VmHWM) in bytes from
// /proc/PID/status; -1 when unreadable.
int64_t ProcessMemoryBytes(int pid, std::string_view field);

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_SERVER_RAW_HTTP_H_
