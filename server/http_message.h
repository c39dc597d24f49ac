// The request and response one route handler sees (server/router.h), free of the HTTP
// stack's own types: the stack (server/http_server.h, Boost.Beast) fills an HttpRequest
// from what it parsed and writes an HttpResponse back. The member functions are the few
// the routes use: header and query lookups on the request, status, headers and body on
// the response.
//
//   std::string after = request.get_param_value("after");   // "" when absent
//   response.status = 200;
//   response.set_content(JsonText(json), "application/json");
//
// Plain values: not thread-safe, one handler at a time.
#ifndef LEDGER_SERVER_HTTP_MESSAGE_H_
#define LEDGER_SERVER_HTTP_MESSAGE_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/time/time.h"

namespace ledger::server {

using HttpFields = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;  // GET, POST, ...: as sent
  std::string target;  // the request target as sent: /v1/events?after=3
  std::string path;    // the target's path, percent-decoded
  unsigned version = 11;  // 10 for HTTP/1.0, 11 for HTTP/1.1
  HttpFields headers;  // in the order sent; names as sent (lookups ignore case)
  HttpFields params;   // the query string, percent-decoded, in order
  std::string body;
  // When the server had read the request's headers: a handler's deadlines count from it,
  // so a long poll called again (HttpResponse::CallAgainAfter) keeps its first deadline.
  absl::Time received = absl::InfinitePast();

  // The first header of that name (case-insensitive), "" when absent.
  std::string get_header_value(std::string_view name) const;
  size_t get_header_value_count(std::string_view name) const;
  bool has_header(std::string_view name) const;
  // The first query parameter of that name, "" when absent.
  std::string get_param_value(std::string_view name) const;
  bool has_param(std::string_view name) const;

  // Splits `target` into `path` and `params`, percent-decoding both ('+' is a space in
  // the query). False when a percent escape is malformed.
  bool SplitTarget();
};

struct HttpResponse {
  int status = 200;
  HttpFields headers;  // besides Content-Type, Content-Length and Connection
  std::string body;
  std::string content_type;
  // Set by a handler whose answer is not ready (a long poll with nothing to show yet):
  // the server discards this response and calls the handler again after the delay,
  // without holding a worker thread meanwhile.
  std::optional<absl::Duration> call_again_after;

  // Replaces a header of that name (case-insensitive) or adds it.
  void set_header(std::string_view name, std::string value);
  void set_content(std::string content, std::string_view type);
  std::string get_header_value(std::string_view name) const;
  size_t get_header_value_count(std::string_view name) const;
  bool has_header(std::string_view name) const;
  void CallAgainAfter(absl::Duration delay) { call_again_after = delay; }
};

}  // namespace ledger::server

#endif  // LEDGER_SERVER_HTTP_MESSAGE_H_
