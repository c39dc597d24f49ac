#include "server/http_server.h"

#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/check.h"
#include "server/problem.h"

namespace ledger::server {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

constexpr int kListenBacklog = 1024;
// After an answer that ends a connection whose request was not read whole (413, 431,
// 400), what the client still sends is read and dropped this long, so that closing does
// not reset the connection before the client has read the answer.
constexpr auto kLingerMax = std::chrono::seconds(2);
// Accepting failed (out of file descriptors): try again after this pause.
constexpr auto kAcceptRetryDelay = std::chrono::milliseconds(50);
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

std::chrono::steady_clock::duration Steady(absl::Duration duration) {
  return std::chrono::microseconds(absl::ToInt64Microseconds(duration));
}

// Runs tasks on a fixed set of threads. The queue needs no bound of its own: every task
// is a request the Router admitted under the in-flight limit.
class WorkerPool {
 public:
  explicit WorkerPool(int threads) {
    LEDGER_CHECK(threads >= 1);
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
  }
  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& thread : threads_) thread.join();
  }
  void Submit(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(std::move(task));
    }
    wake_.notify_one();
  }

 private:
  void Work() {
    while (true) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, and nothing left
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      task();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

class SessionBase {
 public:
  virtual ~SessionBase() = default;
  virtual void Shutdown() = 0;  // any thread
};

// An event loop: one io_context run by one thread. Each connection stays on the loop that
// accepted it, so its handlers never pass between the loop threads (one io_context run
// by all of them woke one thread for another through a futex about once per request,
// docs/benchmarks.md "Over HTTP").
std::vector<std::unique_ptr<net::io_context>> MakeLoops(int count) {
  std::vector<std::unique_ptr<net::io_context>> loops;
  for (int i = 0; i < count; ++i) loops.push_back(std::make_unique<net::io_context>(1));
  return loops;
}

// What every connection shares.
struct ServerCore {
  ServerCore(const ServerOptions& options, const Router& router, HttpServer::Logger log, int io_threads)
      : options(options), router(router), log(std::move(log)), loops(MakeLoops(io_threads)),
        io(*loops.front()), workers(options.worker_threads) {}

  const ServerOptions& options;
  const Router& router;
  HttpServer::Logger log;
  std::vector<std::unique_ptr<net::io_context>> loops;  // at least one; each run by one thread
  net::io_context& io;                                  // the first loop: the acceptor's
  std::optional<net::ssl::context> tls;
  WorkerPool workers;
  std::atomic<bool> stopping{false};
  std::atomic<int> connections{0};
  std::mutex sessions_mutex;
  std::unordered_map<const SessionBase*, std::weak_ptr<SessionBase>> sessions;
};

// The bytes of a whole response that answers `problem` and closes the connection.
std::string ClosingProblemResponse(const Problem& problem) {
  HttpResponse answer;
  WriteProblem(answer, problem);
  http::response<http::string_body> response{static_cast<http::status>(answer.status), 11};
  for (const auto& [name, value] : answer.headers) response.insert(name, value);
  response.set(http::field::content_type, answer.content_type);
  response.body() = answer.body;
  response.keep_alive(false);
  response.prepare_payload();
  std::ostringstream text;
  text << response;
  return text.str();
}

// Router::Finish on an event loop: the log line is written once the loop's handlers that
// were ready with this one have run (Router::FlushLog), with theirs.
template <class Executor>
void FinishAndLog(const Router& router, RouterCall& call, const Executor& loop) {
  const bool flush_due = !Router::HoldsLog();
  router.Finish(call);
  if (flush_due) net::post(loop, [] { Router::FlushLog(); });
}

// One connection: reads a request, has it handled, writes the answer, reads the next.
// Every member runs on the connection's strand, but the handler itself (on a worker,
// while state_ is kHandling and nothing else touches call_).
template <class Stream>
class Session : public SessionBase, public std::enable_shared_from_this<Session<Stream>> {
 public:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  template <class... Arguments>
  explicit Session(ServerCore& core, Arguments&&... arguments)
      : core_(core), stream_(std::forward<Arguments>(arguments)...), timer_(stream_.get_executor()) {
    core_.connections.fetch_add(1);
  }
  ~Session() override {
    {
      std::lock_guard<std::mutex> lock(core_.sessions_mutex);
      core_.sessions.erase(this);
    }
    core_.connections.fetch_sub(1);
  }

  void Start() {
    {
      std::lock_guard<std::mutex> lock(core_.sessions_mutex);
      core_.sessions.emplace(this, this->shared_from_this());
    }
    net::dispatch(stream_.get_executor(), [self = this->shared_from_this()] { self->Begin(); });
  }

  void Shutdown() override {
    net::post(stream_.get_executor(), [self = this->shared_from_this()] { self->OnShutdown(); });
  }

  // Keeps the connection's loop running while a call is away (on a worker, or in the
  // group committer) and will be handed back to it.
  auto Tracked() { return net::prefer(stream_.get_executor(), net::execution::outstanding_work.tracked); }

 private:
  enum class State { kReading, kHandling, kWaiting, kWriting, kClosing };

  auto& Lowest() { return beast::get_lowest_layer(stream_); }

  void Begin() {
    if constexpr (kTls) {
      state_ = State::kReading;
      Lowest().expires_after(Steady(core_.options.read_timeout));
      stream_.async_handshake(net::ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code error) {
                                if (error) return self->Close(/*linger=*/false);
                                self->ReadRequest();
                              });
    } else {
      ReadRequest();
    }
  }

  void OnShutdown() {
    switch (state_) {
      case State::kReading:
        Lowest().cancel();  // the read ends with operation_aborted: closed
        break;
      case State::kWaiting:
        timer_.cancel();  // the handler runs again at once and sees the server stopping
        break;
      default:
        break;  // the answer being prepared or written says Connection: close
    }
  }

  // The deadline covers everything from here to the request's last body byte.
  void ReadRequest() {
    if (core_.stopping.load()) return Close(/*linger=*/false);
    state_ = State::kReading;
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(core_.options.header_bytes_max));
    parser_->body_limit(core_.options.body_bytes_max);
    Lowest().expires_after(Steady(core_.options.read_timeout));
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = this->shared_from_this()](beast::error_code error, size_t) {
                              self->OnHeader(error);
                            });
  }

  void OnHeader(beast::error_code error) {
    if (error) return OnReadError(error);
    started_ = absl::Now();
    const auto& header = parser_->get();
    if (header.method() == http::verb::post && !parser_->content_length().has_value() &&
        !parser_->chunked()) {
      return AnswerUnread(MakeProblem("length_required",
                                      "send Content-Length (curl: -d '' for an empty body)"));
    }
    auto expect = header.find(http::field::expect);
    if (expect != header.end() && !parser_->is_done() && header.version() >= 11 &&
        absl::EqualsIgnoreCase(absl::string_view(expect->value().data(), expect->value().size()),
                               "100-continue")) {
      net::async_write(stream_, net::buffer(kContinue.data(), kContinue.size()),
                       [self = this->shared_from_this()](beast::error_code error, size_t) {
                         if (error) return self->Close(/*linger=*/false);
                         self->ReadBody();
                       });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    if (parser_->is_done()) return Dispatch();
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code error, size_t) {
                       if (error) return self->OnReadError(error);
                       self->Dispatch();
                     });
  }

  void OnReadError(beast::error_code error) {
    if (error == http::error::header_limit) {
      return AnswerUnread(MakeProblem(
          "request_header_fields_too_large",
          absl::StrCat("the request line and headers are over ", core_.options.header_bytes_max, " bytes")));
    }
    if (error == http::error::body_limit) {
      return AnswerUnread(MakeProblem(
          "payload_too_large", absl::StrCat("bodies are limited to ", core_.options.body_bytes_max, " bytes")));
    }
    // The client went away, the deadline passed, or the server is stopping: nothing to answer.
    if (error == http::error::end_of_stream || error == http::error::partial_message ||
        error.category() != http::make_error_code(http::error::bad_method).category()) {
      return Close(/*linger=*/false);
    }
    AnswerUnread(MakeProblem("malformed_request", "the request could not be read as HTTP/1.1 (RFC 9112)"));
  }

  // Answers a request that was not (or not wholly) read, and closes the connection.
  void AnswerUnread(const Problem& problem) {
    call_ = std::make_unique<RouterCall>();
    call_->started = started_.value_or(absl::Now());
    if (parser_.has_value() && parser_->is_header_done()) {
      call_->request.method = std::string(parser_->get().method_string());
      call_->request.version = parser_->get().version();
    }
    WriteProblem(call_->response, problem);
    Respond(/*closing_unread=*/true);
  }

  void Dispatch() {
    auto& message = parser_->get();
    call_ = std::make_unique<RouterCall>();
    call_->started = started_.value_or(absl::Now());
    HttpRequest& request = call_->request;
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    request.version = message.version();
    for (const auto& field : message) {
      request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    request.body = std::move(message.body());
    request.received = call_->started;
    keep_alive_ = message.keep_alive();
    parser_.reset();
    started_.reset();
    Lowest().expires_never();  // a handler's time is bounded by its own waits
    if (!request.SplitTarget()) {
      WriteProblem(call_->response,
                   MakeProblem("malformed_request", "the request target has a malformed percent escape"));
      return Respond(/*closing_unread=*/false);
    }
    if (!core_.router.Admit(*call_)) return Respond(/*closing_unread=*/false);
    RunOnLoop();
  }

  // A route's handler for the event loop (a submit handed to the group committer) takes
  // the request right here when nothing on its way can block: one hand-off fewer than
  // a worker. The next request of the connection is read only once this one is answered,
  // as on a worker, so pipelined requests stay in order whichever runs them.
  void RunOnLoop() {
    state_ = State::kHandling;
    SetResume();
    switch (core_.router.RunOnLoop(*call_)) {
      case Router::LoopResult::kNeedsWorker:
        return RunOnWorker();
      case Router::LoopResult::kAnswered:
        return AfterRun();
      case Router::LoopResult::kAnswersLater:
        return;  // call_->resume brings it back
    }
  }

  void SetResume() {
    call_->resume = [self = this->shared_from_this(), work = Tracked()] {
      net::post(self->stream_.get_executor(), [self] { self->AfterRun(); });
    };
  }

  // The handler runs on a worker. It answers at once, or hands its work on (a submit to
  // the group committer) and answers later through call_->resume: the connection then
  // holds no worker, only its in-flight slot and a hold on the event loop (so Run does
  // not return before the answer is written). A client that closes meanwhile is seen
  // only when the answer is written: the submit completes either way, and its outcome is
  // what a resend with the same key gets.
  void RunOnWorker() {
    state_ = State::kHandling;
    SetResume();
    core_.workers.Submit([self = this->shared_from_this(), work = Tracked()] {
      if (self->core_.router.Run(*self->call_)) {
        net::post(self->stream_.get_executor(), [self] { self->AfterRun(); });
      }
    });
  }

  void AfterRun() {
    core_.router.Complete(*call_);
    std::optional<absl::Duration> again = call_->response.call_again_after;
    if (!again.has_value()) return Respond(/*closing_unread=*/false);
    state_ = State::kWaiting;
    timer_.expires_after(Steady(std::max(*again, absl::ZeroDuration())));
    timer_.async_wait([self = this->shared_from_this()](beast::error_code) { self->RunOnWorker(); });
  }

  // Writes call_'s answer; it was counted and logged first (Router::Finish), so a client
  // that has its answer finds it in /metrics.
  void Respond(bool closing_unread) {
    FinishAndLog(core_.router, *call_, stream_.get_executor());
    HttpResponse& answer = call_->response;
    response_ = {};
    response_.version(call_->request.version == 10 ? 10 : 11);
    response_.result(static_cast<unsigned>(answer.status));
    for (const auto& [name, value] : answer.headers) response_.insert(name, value);
    if (!answer.content_type.empty()) response_.set(http::field::content_type, answer.content_type);
    response_.body() = std::move(answer.body);
    bool keep_alive = keep_alive_ && !closing_unread && !core_.stopping.load();
    response_.keep_alive(keep_alive);
    response_.prepare_payload();
    call_.reset();
    keep_alive_ = false;
    state_ = State::kWriting;
    Lowest().expires_after(Steady(core_.options.write_timeout));
    http::async_write(stream_, response_,
                      [self = this->shared_from_this(), keep_alive, closing_unread](beast::error_code error,
                                                                                    size_t) {
                        if (error) return self->Close(/*linger=*/false);
                        if (!keep_alive) return self->Close(/*linger=*/closing_unread);
                        self->ReadRequest();
                      });
  }

  // Ends the connection: the send side at once; with `linger`, what the client still
  // sends is read and dropped for up to kLingerMax before the socket closes.
  void Close(bool linger) {
    if (state_ == State::kClosing) return;
    state_ = State::kClosing;
    beast::error_code ignored;
    Lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
    if (!linger) {
      Lowest().close();
      return;
    }
    Lowest().expires_after(kLingerMax);
    Drain();
  }

  void Drain() {
    Lowest().async_read_some(net::buffer(drain_buffer_),
                             [self = this->shared_from_this()](beast::error_code error, size_t) {
                               if (error) return self->Lowest().close();
                               self->Drain();
                             });
  }

  ServerCore& core_;
  Stream stream_;
  net::steady_timer timer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<absl::Time> started_;  // the current request's headers were read then
  std::unique_ptr<RouterCall> call_;
  bool keep_alive_ = false;
  http::response<http::string_body> response_;  // alive while it is written
  State state_ = State::kReading;
  std::array<char, 16 * 1024> drain_buffer_;
};

using PlainSession = Session<beast::tcp_stream>;
using TlsSession = Session<beast::ssl_stream<beast::tcp_stream>>;

class BeastServer : public HttpServer {
 public:
  BeastServer(const ServerOptions& options, const Router& router, Logger log, int io_threads)
      : core_(options, router, std::move(log), io_threads),
        acceptor_(net::make_strand(core_.io)),
        retry_timer_(acceptor_.get_executor()) {
    for (const std::unique_ptr<net::io_context>& loop : core_.loops) {
      loops_running_.push_back(net::make_work_guard(*loop));
    }
  }

  absl::Status Listen(const std::string& host, int port) {
    const ServerOptions& options = core_.options;
    if (!options.tls_certificate_file.empty()) {
      core_.tls.emplace(net::ssl::context::tls_server);
      core_.tls->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                             net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 |
                             net::ssl::context::no_tlsv1_1);
      beast::error_code certificate_error;
      beast::error_code key_error;
      core_.tls->use_certificate_chain_file(options.tls_certificate_file, certificate_error);
      core_.tls->use_private_key_file(options.tls_private_key_file, net::ssl::context::pem, key_error);
      if (certificate_error || key_error) {
        return absl::InvalidArgumentError("cannot load the TLS certificate or key (--tls-cert, --tls-key)");
      }
    }
    beast::error_code error;
    tcp::resolver resolver(core_.io);
    auto endpoints = resolver.resolve(host, std::to_string(port), tcp::resolver::passive, error);
    if (error || endpoints.empty()) return absl::UnavailableError("cannot resolve " + host);
    tcp::endpoint endpoint = endpoints.begin()->endpoint();
    acceptor_.open(endpoint.protocol(), error);
    if (!error) acceptor_.set_option(net::socket_base::reuse_address(true), error);
    if (!error) acceptor_.bind(endpoint, error);
    if (!error) acceptor_.listen(kListenBacklog, error);
    if (error) return absl::UnavailableError(absl::StrCat("cannot listen on ", host, ":", port, ": ", error.message()));
    port_ = acceptor_.local_endpoint().port();
    return absl::OkStatus();
  }

  int port() const override { return port_; }

  void Run() override {
    Accept();
    std::vector<std::thread> threads;
    for (size_t i = 1; i < core_.loops.size(); ++i) {
      threads.emplace_back([loop = core_.loops[i].get()] { loop->run(); });
    }
    core_.io.run();
    for (std::thread& thread : threads) thread.join();
  }

  void Stop() override {
    net::post(acceptor_.get_executor(), [this] {
      if (core_.stopping.exchange(true)) return;
      beast::error_code ignored;
      acceptor_.close(ignored);
      retry_timer_.cancel();
      std::vector<std::shared_ptr<SessionBase>> open;
      {
        std::lock_guard<std::mutex> lock(core_.sessions_mutex);
        for (auto& [key, weak] : core_.sessions) {
          if (std::shared_ptr<SessionBase> session = weak.lock()) open.push_back(std::move(session));
        }
      }
      for (const std::shared_ptr<SessionBase>& session : open) session->Shutdown();
      loops_running_.clear();  // each loop ends once its connections have
    });
  }

 private:
  void Accept() {
    // The connections take turns among the loops.
    net::io_context& loop = *core_.loops[next_loop_++ % core_.loops.size()];
    acceptor_.async_accept(net::make_strand(loop), [this](beast::error_code error, tcp::socket socket) {
      OnAccept(error, std::move(socket));
    });
  }

  void OnAccept(beast::error_code error, tcp::socket socket) {
    if (core_.stopping.load() || !acceptor_.is_open()) return;
    if (error) {
      // Out of file descriptors, as a rule: pause instead of spinning.
      retry_timer_.expires_after(kAcceptRetryDelay);
      retry_timer_.async_wait([this](beast::error_code) {
        if (!core_.stopping.load()) Accept();
      });
      return;
    }
    if (core_.connections.load() >= core_.options.connections_max) {
      Refuse(std::move(socket));
    } else {
      beast::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      if (core_.tls.has_value()) {
        std::make_shared<TlsSession>(core_, std::move(socket), *core_.tls)->Start();
      } else {
        std::make_shared<PlainSession>(core_, std::move(socket))->Start();
      }
    }
    Accept();
  }

  // Over the connection cap: a plain-HTTP client gets a 503 (one small non-blocking
  // write into an empty send buffer), a TLS one a closed connection.
  void Refuse(tcp::socket socket) {
    RouterCall call;
    Problem problem = MakeProblem(
        "unavailable", absl::StrCat("more than ", core_.options.connections_max, " connections open; retry later"));
    WriteProblem(call.response, problem);
    if (!core_.tls.has_value()) {
      beast::error_code ignored;
      socket.non_blocking(true, ignored);
      socket.write_some(net::buffer(ClosingProblemResponse(problem)), ignored);
      socket.shutdown(tcp::socket::shutdown_send, ignored);
    }
    FinishAndLog(core_.router, call, acceptor_.get_executor());
  }

  size_t next_loop_ = 0;  // on the acceptor's strand
  // Keep every loop running, connections or not, until Stop.
  std::vector<net::executor_work_guard<net::io_context::executor_type>> loops_running_;
  ServerCore core_;
  tcp::acceptor acceptor_;
  net::steady_timer retry_timer_;
  int port_ = 0;
};

// Connections need file descriptors: raise the soft limit toward the hard one.
void RaiseOpenFileLimit(int connections_max) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  rlim_t wanted = static_cast<rlim_t>(connections_max) + 256;
  if (limit.rlim_cur >= wanted) return;
  limit.rlim_cur = limit.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, limit.rlim_max);
  setrlimit(RLIMIT_NOFILE, &limit);
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Bind(const std::string& host, int port,
                                                             const ServerOptions& options,
                                                             const Router& router, Logger log) {
  if (options.tls_certificate_file.empty() != options.tls_private_key_file.empty()) {
    return absl::InvalidArgumentError("give --tls-cert and --tls-key together");
  }
  if (options.connections_max < 1) return absl::InvalidArgumentError("--connections-max must be at least 1");
  RaiseOpenFileLimit(options.connections_max);
  // The event loops only parse and write (and hand submits on); the handlers' work is
  // on the workers. Serve fills in the derived default; 0 here: one per core up to four.
  LEDGER_CHECK(options.loop_threads >= 0 && options.loop_threads <= kLoopThreadsMax);
  int io_threads = options.loop_threads > 0
                       ? options.loop_threads
                       : DefaultLoopThreads("", std::thread::hardware_concurrency());
  auto server = std::make_unique<BeastServer>(options, router, std::move(log), io_threads);
  if (absl::Status listening = server->Listen(host, port); !listening.ok()) return listening;
  return std::unique_ptr<HttpServer>(std::move(server));
}

}  // namespace ledger::server
