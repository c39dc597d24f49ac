#include "engines/postgres/postgres_connection_pool.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "engines/common/waits.h"
#include "engines/postgres/postgres_errors.h"
#include "engines/postgres/postgres_statements.h"
#include "base/status.h"
#include "libpq-fe.h"
#include "pqxx/except"
#include "pqxx/nontransaction"

namespace ledger::postgres_internal {
namespace {

// libpqxx 6 silently reconnects a broken connection on its next use. A new session
// has none of the old one's transaction, so a COMMIT sent there would "succeed" on
// nothing: the engine must see the break, never a quiet reconnect.
void ForbidSilentReconnect(pqxx::connection_base& connection) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  connection.inhibit_reactivation(true);
#pragma GCC diagnostic pop
}

}  // namespace

// An idle session has nothing to read. If its socket is readable, the server sent a
// termination notice and/or closed the connection (pg_terminate_backend, a restart):
// let libpq read it. libpq takes the notice as a warning and only the following
// end-of-file marks the connection bad, hence the loop. No round trip is spent on
// healthy sessions.
bool SessionLooksAlive(PostgresSession& session) {
  constexpr int kReadsMax = 4;
  pqxx::connection_base& connection = session.connection();
  for (int read = 0; read < kReadsMax; ++read) {
    if (!connection.is_open()) return false;
    pollfd readable{connection.sock(), POLLIN, 0};
    int ready = poll(&readable, 1, /*timeout=*/0);
    if (ready == 0) return true;
    if (ready < 0) return false;
    try {
      connection.get_notifs();
    } catch (...) {
      return false;
    }
  }
  return false;  // still readable after several reads: not an idle session we understand
}

// Polled: pg_terminate_backend waits for the process only from PostgreSQL 14 on.
bool EndServerBackend(PostgresSession& session, const ServerBackend& backend,
                      absl::Duration wait) {
  constexpr absl::Duration kPoll = absl::Milliseconds(10);
  const absl::Time deadline = absl::Now() + wait;
  auto sql = [&](const std::string& text) -> absl::StatusOr<int64_t> {
    return GuardRoundTrip(session, {.operation = "end a lost session's server process"},
                          [&]() -> absl::StatusOr<int64_t> {
      pqxx::nontransaction work(session.connection());
      const pqxx::result rows = work.exec(text);
      return rows.empty() || rows[0][0].is_null() ? 0 : rows[0][0].as<int64_t>();
    });
  };
  // How many of it the server shows: 1, 0 once gone, -1 on another server (whose
  // processes say nothing of this one's, and are not signalled).
  auto count = [&] {
    return sql(ServerBackendPresentSql(backend.pid, backend.started_micros,
                                       backend.server_started_micros));
  };
  absl::StatusOr<int64_t> present = count();
  if (!present.ok() || *present <= 0) return present.ok() && *present == 0;
  if (!sql(TerminateServerBackendSql(backend.pid, backend.started_micros)).ok()) return false;
  for (;;) {
    present = count();
    if (!present.ok() || *present <= 0) return present.ok() && *present == 0;
    if (absl::Now() + kPoll > deadline) return false;
    absl::SleepFor(kPoll);
  }
}

namespace {

// A server setting in milliseconds: "1500ms".
std::string Milliseconds(absl::Duration wait) {
  return absl::StrCat(engine_common::WholeMillisecondsRoundedUp(wait), "ms");
}

// Connects (bounded as a whole by `timeout`) and keeps a duplicate of the socket for
// the reply watchdog: libpq may close its own descriptor when the server goes away.
absl::Status Connect(const std::string& connection_string, absl::Duration timeout,
                     PostgresSession& session) {
  return GuardPostgres({.operation = "connect"}, [&]() -> absl::Status {
    session.handle = std::make_unique<BoundedConnection>(connection_string, timeout);
    ForbidSilentReconnect(session.connection());
    session.reply_socket = OwnedSocket(fcntl(session.connection().sock(), F_DUPFD_CLOEXEC, 0));
    if (session.reply_socket.get() < 0) {
      return absl::InternalError(absl::StrCat("postgres: connect: cannot duplicate the socket: ",
                                              std::strerror(errno)));
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<std::unique_ptr<PostgresSession>> OpenSession(
    const std::string& connection_string, const PostgresSessionWaits& waits,
    const std::shared_ptr<ReplyWatchdog>& watchdog, const SessionSetup& setup) {
  auto session = std::make_unique<PostgresSession>();
  session->watchdog = watchdog;
  session->read_timeout = waits.read_timeout;
  LEDGER_RETURN_IF_ERROR(Connect(connection_string, waits.connect_timeout, *session));
  // The session's own waits (the claim's SET LOCAL lock_timeout returns to this value)
  // and its plan mode.
  session->lock_timeout_default = Milliseconds(waits.account_lock_wait);
  // In the same round trip, the server process behind the session (ServerBackend).
  LEDGER_RETURN_IF_ERROR(
      GuardRoundTrip(*session, {.operation = "set the session's waits"}, [&]() -> absl::Status {
        pqxx::nontransaction work(session->connection());
        const pqxx::result backend = work.exec(absl::StrCat(
            SessionSettingsSql(session->lock_timeout_default,
                               Milliseconds(waits.statement_timeout)),
            "; ", ServerBackendOfSessionSql()));
        if (backend.size() == 1 && backend[0][0].as<int>() == session->connection().backendpid()) {
          session->backend = ServerBackend{.pid = backend[0][0].as<int>(),
                                           .started_micros = backend[0][1].as<int64_t>(),
                                           .server_started_micros = backend[0][2].as<int64_t>()};
        }
        return absl::OkStatus();
      }));
  if (setup) LEDGER_RETURN_IF_ERROR(setup(*session));
  return session;
}

// libpq's key=value quoting: single quotes, backslash before a quote or a backslash.
std::string QuotedConnectionValue(const std::string& value) {
  std::string quoted = "'";
  for (char c : value) {
    if (c == '\\' || c == '\'') quoted.push_back('\\');
    quoted.push_back(c);
  }
  return quoted + "'";
}

}  // namespace

std::vector<std::string> ConnectionStringPerHost(const std::string& connection_string) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(connection_string.c_str(), &error);
  if (options == nullptr) {
    PQfreemem(error);
    return {connection_string};  // libpq's own connect says what is wrong with it
  }
  std::vector<std::string> hosts, addresses, ports, rest;
  bool prefer_standby = false;
  for (PQconninfoOption* option = options; option->keyword != nullptr; ++option) {
    if (option->val == nullptr) continue;
    const std::string_view keyword = option->keyword;
    std::vector<std::string>* list = keyword == "host"       ? &hosts
                                     : keyword == "hostaddr" ? &addresses
                                     : keyword == "port"     ? &ports
                                                             : nullptr;
    if (list != nullptr) {
      *list = absl::StrSplit(option->val, ',');
    } else if (keyword == "target_session_attrs" && std::string_view(option->val) == "prefer-standby") {
      prefer_standby = true;  // kept out of `rest`: each pass below names its own
    } else {
      rest.push_back(absl::StrCat(option->keyword, "=", QuotedConnectionValue(option->val)));
    }
  }
  PQconninfoFree(options);
  const size_t count = std::max(hosts.size(), addresses.size());
  // One host, or lists libpq itself refuses (its error names the mismatch).
  const bool matched = (hosts.empty() || hosts.size() == count) &&
                       (addresses.empty() || addresses.size() == count) &&
                       (ports.size() <= 1 || ports.size() == count);
  if (count <= 1 || !matched) return {connection_string};
  // prefer-standby over a host list: one host at a time, libpq would take the first host
  // it reaches, primary or not. So every host as a standby first, then every host as any
  // server, which is what libpq does with the whole list.
  std::vector<std::string> passes = {""};
  if (prefer_standby) passes = {"target_session_attrs=standby", "target_session_attrs=any"};
  std::vector<std::string> per_host;
  for (size_t attempt = 0; attempt < passes.size() * count; ++attempt) {
    const size_t i = attempt % count;
    std::vector<std::string> words = rest;
    if (!passes[attempt / count].empty()) words.push_back(passes[attempt / count]);
    if (!hosts.empty()) words.push_back(absl::StrCat("host=", QuotedConnectionValue(hosts[i])));
    if (!addresses.empty()) {
      words.push_back(absl::StrCat("hostaddr=", QuotedConnectionValue(addresses[i])));
    }
    if (!ports.empty()) {
      words.push_back(absl::StrCat("port=", QuotedConnectionValue(ports[ports.size() == 1 ? 0 : i])));
    }
    per_host.push_back(absl::StrJoin(words, " "));
  }
  return per_host;
}

namespace {

// One host's connection, driven by libpq's non-blocking connect until `deadline`;
// nullptr with `failure` set otherwise. `timeout` (the attempt's whole bound) is only
// named in the message.
PGconn* ConnectWithin(const std::string& options, absl::Time deadline, absl::Duration timeout,
                      std::string& failure) {
  PGconn* connection = PQconnectStart(options.c_str());
  if (connection == nullptr) throw std::bad_alloc();
  auto fail = [&](const std::string& message) -> PGconn* {
    PQfinish(connection);
    failure = std::string(absl::StripAsciiWhitespace(message));
    return nullptr;
  };
  // libpq's documented loop: wait until the socket is writable, then poll, and wait for
  // whatever each poll asks for. The socket changes when libpq moves to the next address.
  PostgresPollingStatusType polling = PGRES_POLLING_WRITING;
  if (PQstatus(connection) == CONNECTION_BAD) return fail(PQerrorMessage(connection));
  while (polling != PGRES_POLLING_OK) {
    if (polling == PGRES_POLLING_FAILED) return fail(PQerrorMessage(connection));
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return fail(absl::StrCat("timeout expired: the connection attempt did not complete within "
                               "connect_timeout (", absl::FormatDuration(timeout), ")"));
    }
    pollfd ready{PQsocket(connection),
                 static_cast<short>(polling == PGRES_POLLING_READING ? POLLIN : POLLOUT), 0};
    const int waited = ::poll(&ready, 1,
                              static_cast<int>(std::min<int64_t>(
                                  engine_common::WholeMillisecondsRoundedUp(left), 60'000)));
    if (waited < 0 && errno != EINTR) {
      return fail(absl::StrCat("connect: poll: ", std::strerror(errno)));
    }
    if (waited <= 0) continue;  // the deadline is checked above
    polling = PQconnectPoll(connection);
  }
  return connection;
}

}  // namespace

BoundedConnection::BoundedConnection(const std::string& options, absl::Duration timeout)
    : pqxx::connection_base(policy_), policy_(options, timeout) {
  init();
}

PGconn* BoundedConnection::libpq() {
  // libpqxx keeps the handle do_startconnect returned until it closes the connection
  // (it never reconnects: ForbidSilentReconnect).
  return is_open() ? policy_.started() : nullptr;
}

pqxx::connectionpolicy::handle BoundedConnection::Policy::do_startconnect(handle orig) {
  if (orig != nullptr) return orig;
  const absl::Time deadline = absl::Now() + timeout_;
  const std::vector<std::string> hosts = ConnectionStringPerHost(options());
  std::vector<std::string> failures;
  for (size_t host = 0; host < hosts.size(); ++host) {
    // This host's share of what is left: a host that refuses at once leaves its share to
    // the next, a frozen one takes its share and no more.
    const absl::Time host_deadline =
        absl::Now() + (deadline - absl::Now()) / static_cast<int64_t>(hosts.size() - host);
    std::string failure;
    if (PGconn* connection = ConnectWithin(hosts[host], host_deadline, timeout_, failure)) {
      started_ = connection;
      return connection;
    }
    failures.push_back(hosts.size() == 1 ? failure
                                         : absl::StrCat("host ", host + 1, " of ", hosts.size(),
                                                        ": ", failure));
  }
  throw pqxx::broken_connection(absl::StrJoin(failures, "; "));
}

OwnedSocket& OwnedSocket::operator=(OwnedSocket&& other) noexcept {
  if (this != &other) {
    if (descriptor_ >= 0) ::close(descriptor_);
    descriptor_ = std::exchange(other.descriptor_, -1);
  }
  return *this;
}

OwnedSocket::~OwnedSocket() {
  if (descriptor_ >= 0) ::close(descriptor_);
}

absl::StatusOr<std::shared_ptr<PostgresConnectionPool>> CreatePostgresConnectionPool(
    std::string connection_string, int size, absl::Duration acquire_wait,
    PostgresSessionWaits waits, SessionSetup setup) {
  engine_common::PoolHooks<PostgresSession> hooks;
  hooks.open = [connection_string = std::move(connection_string), waits,
                watchdog = std::make_shared<ReplyWatchdog>(), setup = std::move(setup)] {
    return OpenSession(connection_string, waits, watchdog, setup);
  };
  hooks.still_alive = SessionLooksAlive;
  // A session whose connection closed under us (server restart, kill) is broken too.
  hooks.reusable = [](PostgresSession& session) { return session.connection().is_open(); };
  return PostgresConnectionPool::Create(
      {.engine = "postgres", .size = size, .acquire_wait = acquire_wait}, std::move(hooks));
}

}  // namespace ledger::postgres_internal
