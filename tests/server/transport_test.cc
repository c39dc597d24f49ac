// The HTTP transport against what real clients do (issue 28), over raw sockets to the
// real `ledger serve` process on every engine: slow senders, a trickled request, chunked
// bodies over the limit, pipelined requests, long header lines, the in-flight limit at
// the default settings, HTTP/1.0, Expect: 100-continue, the connection cap and the
// event-loop count (--loop-threads).
// Waits are bounded generously; nothing here asserts on speed.
#include <algorithm>
#include <atomic>
#include <fstream>
#include <iterator>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/server/raw_http.h"
#include "tests/server/server_fixture.h"

namespace ledger::testing {
namespace {

// A bound no healthy answer comes near on this machine kind, even with 200 other
// connections open; it only stops a hung test.
constexpr absl::Duration kAnswerWithin = absl::Seconds(10);

std::string PostRequest(const std::string& path, const std::string& key, const std::string& body) {
  return absl::StrCat("POST ", path, " HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n",
                      key.empty() ? "" : absl::StrCat("Idempotency-Key: \"", key, "\"\r\n"),
                      "Content-Length: ", body.size(), "\r\n\r\n", body);
}

nlohmann::json Json(const std::string& text) {
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// 200 connections trickle the start of a request, one byte each half second, for the
// whole test; another client still gets its answers. (The thread-per-connection server
// gave every worker to the first 32 and answered nobody else.)
TEST_P(ServerTest, TwoHundredSlowSendersDoNotStopOtherClients) {
  StartServer();
  constexpr int kSlowSenders = 200;
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < kSlowSenders; ++i) {
    slow.push_back(RawConnection::Open(server_->port()));
    ASSERT_NE(slow.back(), nullptr);
  }
  const std::string head = "POST /v1/operations HTTP/1.1\r\nHost: test\r\nX-Slow: " + std::string(100, 'a');
  std::atomic<bool> done{false};
  std::thread trickler([&] {
    for (size_t position = 0; position < head.size() && !done.load(); ++position) {
      for (auto& connection : slow) connection->Send(head.substr(position, 1));
      for (int pause = 0; pause < 5 && !done.load(); ++pause) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
  });
  struct StopTrickling {  // also when an assertion below ends the test
    std::atomic<bool>& done;
    std::thread& trickler;
    ~StopTrickling() {
      done.store(true);
      trickler.join();
    }
  } stop_trickling{done, trickler};
  for (int round = 0; round < 5; ++round) {
    for (const char* path : {"/healthz", "/readyz", "/v1/assets"}) {
      std::unique_ptr<RawConnection> client = RawConnection::Open(server_->port());
      ASSERT_NE(client, nullptr);
      ASSERT_TRUE(client->Send(absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: test\r\n\r\n")));
      std::optional<RawResponse> answer = client->ReadResponse(kAnswerWithin);
      ASSERT_TRUE(answer.has_value()) << path << " unanswered with " << kSlowSenders << " slow senders open";
      EXPECT_EQ(answer->status, 200) << answer->body;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

// --read-timeout bounds the whole request, not the gap between two bytes: a request
// trickled one byte every 100 ms is cut when the deadline passes.
TEST_P(ServerTest, ATrickledRequestIsCutAtTheReadTimeout) {
  StartServer({"--read-timeout", "2s"});
  std::unique_ptr<RawConnection> connection = RawConnection::Open(server_->port());
  ASSERT_NE(connection, nullptr);
  absl::Time connected = absl::Now();
  const std::string head = "GET /healthz HTTP/1.1\r\nHost: test\r\nX-Slow: " + std::string(300, 'a');
  bool closed = false;
  for (char byte : head) {  // 30 s of bytes if nobody stops it
    if (!connection->Send(std::string(1, byte)) || (connection->Readable(absl::Milliseconds(100)) &&
                                                    connection->WaitForClose(absl::Seconds(1)))) {
      closed = true;
      break;
    }
  }
  absl::Duration open_for = absl::Now() - connected;
  EXPECT_TRUE(closed) << "the trickled request was never cut";
  // The server's deadline starts at its accept, which can come a moment before this
  // thread reads the clock after connecting (seen: 1.99975 s on a loaded machine).
  constexpr absl::Duration kClockSkew = absl::Milliseconds(50);
  EXPECT_GE(open_for, absl::Seconds(2) - kClockSkew) << "cut before the deadline";
  EXPECT_LT(open_for, absl::Seconds(2) + kAnswerWithin) << "cut long after the deadline";
}

// A chunked body is held to --body-max like any other: 413 as soon as it passes the
// limit, and the server does not buffer what the client keeps sending (its peak
// resident memory stays within a bound far below what was sent). A chunked body
// within the limit commits; a Content-Length over it is 413 before any body byte.
TEST_P(ServerTest, AChunkedBodyOverTheLimitIs413AndIsNotBuffered) {
  StartServer();
  OpenAccounts();
  const int64_t resident_before = ProcessMemoryBytes(server_->pid(), "VmRSS");
  ASSERT_GT(resident_before, 0);

  std::unique_ptr<RawConnection> small = RawConnection::Open(server_->port());
  ASSERT_NE(small, nullptr);
  std::string operation = TopUp(Name("alice"), 5).dump();
  ASSERT_TRUE(small->Send(absl::StrCat(
      "POST /v1/operations HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
      "Idempotency-Key: \"", Name("chunked"), "\"\r\nTransfer-Encoding: chunked\r\n\r\n",
      absl::StrCat(absl::Hex(operation.size())), "\r\n", operation, "\r\n0\r\n\r\n")));
  std::optional<RawResponse> committed = small->ReadResponse(kAnswerWithin);
  ASSERT_TRUE(committed.has_value());
  EXPECT_EQ(committed->status, 201) << committed->body;

  std::unique_ptr<RawConnection> large = RawConnection::Open(server_->port());
  ASSERT_NE(large, nullptr);
  ASSERT_TRUE(large->Send(absl::StrCat(
      "POST /v1/operations HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
      "Idempotency-Key: \"", Name("huge"), "\"\r\nTransfer-Encoding: chunked\r\n\r\n")));
  const std::string chunk = absl::StrCat("10000\r\n", std::string(0x10000, ' '), "\r\n");  // 64 KiB
  constexpr int64_t kSentMax = int64_t{256} << 20;  // 256 MiB, if the server kept reading
  int64_t sent = 0;
  while (sent < kSentMax && !large->Readable(absl::ZeroDuration()) && large->Send(chunk)) sent += 0x10000;
  std::optional<RawResponse> refused = large->ReadResponse(kAnswerWithin);
  ASSERT_TRUE(refused.has_value()) << "no answer after " << sent << " bytes";
  EXPECT_EQ(refused->status, 413) << refused->body;
  EXPECT_EQ(Json(refused->body)["reason"], "payload_too_large") << refused->body;
  EXPECT_LT(sent, kSentMax) << "the server read the whole body";
  const int64_t peak = ProcessMemoryBytes(server_->pid(), "VmHWM");
  constexpr int64_t kGrowthMax = int64_t{48} << 20;  // --body-max is 1 MiB
  EXPECT_LT(peak - resident_before, kGrowthMax) << "resident " << resident_before << ", peak " << peak;

  std::unique_ptr<RawConnection> announced = RawConnection::Open(server_->port());
  ASSERT_NE(announced, nullptr);
  ASSERT_TRUE(announced->Send(
      "POST /v1/operations HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
      "Idempotency-Key: \"x\"\r\nContent-Length: 20000000\r\n\r\n{"));
  std::optional<RawResponse> at_once = announced->ReadResponse(kAnswerWithin);
  ASSERT_TRUE(at_once.has_value());
  EXPECT_EQ(at_once->status, 413);
  EXPECT_EQ(Balance(Name("alice")), "5");  // only the small chunked top-up
}

// Three POSTs and a GET in one write: four answers in order, each POST executed once.
TEST_P(ServerTest, PipelinedRequestsAreAnsweredInOrderEachExecutedOnce) {
  StartServer();
  OpenAccounts();
  std::string requests;
  for (int amount = 1; amount <= 3; ++amount) {
    absl::StrAppend(&requests, PostRequest("/v1/operations", Name(absl::StrCat("pipelined-", amount)),
                                           TopUp(Name("alice"), amount).dump()));
  }
  absl::StrAppend(&requests, "GET /v1/accounts/", Name("alice"), "/balance HTTP/1.1\r\nHost: test\r\n\r\n");
  std::unique_ptr<RawConnection> connection = RawConnection::Open(server_->port());
  ASSERT_NE(connection, nullptr);
  ASSERT_TRUE(connection->Send(requests));
  for (int amount = 1; amount <= 3; ++amount) {
    std::optional<RawResponse> answer = connection->ReadResponse(kAnswerWithin);
    ASSERT_TRUE(answer.has_value()) << "no answer " << amount;
    ASSERT_EQ(answer->status, 201) << answer->body;
    // In order: alice's balance after the amount-th top-up is 1 + ... + amount.
    std::string balance_after;
    const nlohmann::json transaction = Json(answer->body);
    for (const nlohmann::json& entry : transaction["entries"]) {
      if (entry["account"] == Name("alice")) balance_after = entry["balance_after"].get<std::string>();
    }
    EXPECT_EQ(balance_after, std::to_string(amount * (amount + 1) / 2)) << answer->body;
  }
  std::optional<RawResponse> balance = connection->ReadResponse(kAnswerWithin);
  ASSERT_TRUE(balance.has_value());
  EXPECT_EQ(Json(balance->body)["balance"], "6") << balance->body;
  EXPECT_EQ(Balance(Name("alice")), "6");  // 1 + 2 + 3, each once
  // Each key replays the one transaction it committed.
  for (int amount = 1; amount <= 3; ++amount) {
    httplib::Result replay = Submit(Name(absl::StrCat("pipelined-", amount)), TopUp(Name("alice"), amount));
    ASSERT_TRUE(replay);
    EXPECT_EQ(replay->get_header_value("Idempotent-Replayed"), "true");
  }
}

// --header-max (16 KiB) bounds the request line and headers together: one 12 KiB
// header line is read, one of 20 KiB is 431.
TEST_P(ServerTest, A12KibHeaderLineIsReadAnd20KibIs431) {
  StartServer();
  httplib::Result read = Get("/healthz", {{"X-Filler", std::string(12 * 1024, 'a')}});
  ASSERT_TRUE(read);
  EXPECT_EQ(read->status, 200) << read->body;
  std::unique_ptr<RawConnection> connection = RawConnection::Open(server_->port());
  ASSERT_NE(connection, nullptr);
  ASSERT_TRUE(connection->Send(absl::StrCat("GET /healthz HTTP/1.1\r\nHost: test\r\nX-Filler: ",
                                            std::string(20 * 1024, 'a'), "\r\n\r\n")));
  std::optional<RawResponse> refused = connection->ReadResponse(kAnswerWithin);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 431);
  EXPECT_EQ(Json(refused->body)["reason"], "request_header_fields_too_large") << refused->body;
  // A request the parser cannot read is a documented reason too.
  std::unique_ptr<RawConnection> garbled = RawConnection::Open(server_->port());
  ASSERT_NE(garbled, nullptr);
  ASSERT_TRUE(garbled->Send("GET /healthz HTTP/1.1\r\nHost test\r\n\r\n"));
  std::optional<RawResponse> unreadable = garbled->ReadResponse(kAnswerWithin);
  ASSERT_TRUE(unreadable.has_value());
  EXPECT_EQ(unreadable->status, 400);
  EXPECT_EQ(Json(unreadable->body)["reason"], "malformed_request") << unreadable->body;
}

// At the default settings (--in-flight-max 256, --threads 32), 256 long polls are
// admitted without holding a worker each, and the next request is 429 with
// Retry-After. SIGTERM then answers the long polls and exits 0.
TEST_P(ServerTest, TooManyRequestsIs429AtTheDefaultSettings) {
  StartServer();
  int64_t head = LastEventSequence();
  ASSERT_GE(head, 0);
  constexpr int kInFlightMaxDefault = 256;
  std::vector<std::unique_ptr<RawConnection>> polls;
  for (int i = 0; i < kInFlightMaxDefault; ++i) {
    polls.push_back(RawConnection::Open(server_->port()));
    ASSERT_NE(polls.back(), nullptr);
    ASSERT_TRUE(polls.back()->Send(absl::StrCat("GET /v1/events?wait=30&after=", head + 1000000,
                                                " HTTP/1.1\r\nHost: test\r\n\r\n")));
  }
  // The polls are admitted as the server reads them, so a probe may take a slot before
  // the last poll does: then that poll is the one refused. Either way one request is 429.
  std::optional<RawResponse> refused;
  std::vector<bool> poll_answered(polls.size(), false);
  for (int attempt = 0; attempt < 200 && !refused.has_value(); ++attempt) {
    for (size_t i = 0; i < polls.size(); ++i) {
      if (poll_answered[i] || !polls[i]->Readable(absl::ZeroDuration())) continue;
      std::optional<RawResponse> answer = polls[i]->ReadResponse(kAnswerWithin);
      ASSERT_TRUE(answer.has_value());
      ASSERT_EQ(answer->status, 429) << "a long poll ended early: " << answer->body;
      poll_answered[i] = true;
      refused = answer;
    }
    if (refused.has_value()) break;
    std::unique_ptr<RawConnection> probe = RawConnection::Open(server_->port());
    ASSERT_NE(probe, nullptr);
    ASSERT_TRUE(probe->Send("GET /v1/assets HTTP/1.1\r\nHost: test\r\n\r\n"));
    std::optional<RawResponse> answer = probe->ReadResponse(kAnswerWithin);
    ASSERT_TRUE(answer.has_value()) << "a probe was not answered";
    if (answer->status == 429) refused = answer;
    if (!refused.has_value()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(refused.has_value()) << "no 429 with " << kInFlightMaxDefault << " long polls in flight";
  EXPECT_EQ(Json(refused->body)["reason"], "too_many_requests") << refused->body;
  EXPECT_EQ(refused->Header("Retry-After"), "1");
  EXPECT_EQ(server_->SignalAndWait(SIGTERM), 0);
  int waiting = 0;
  int answered = 0;
  for (size_t i = 0; i < polls.size(); ++i) {
    if (poll_answered[i]) continue;
    ++waiting;
    std::optional<RawResponse> answer = polls[i]->ReadResponse(kAnswerWithin);
    answered += answer.has_value() && answer->status == 200 ? 1 : 0;
  }
  EXPECT_EQ(answered, waiting);  // every long poll in flight got its answer at SIGTERM
}

// HTTP/1.0: answered as HTTP/1.0 and closed (no keep-alive asked for); and
// Expect: 100-continue: the interim 100 first, the body after it, then the answer.
TEST_P(ServerTest, Http10AndExpect100ContinueAreAnswered) {
  StartServer();
  OpenAccounts();
  std::unique_ptr<RawConnection> old = RawConnection::Open(server_->port());
  ASSERT_NE(old, nullptr);
  ASSERT_TRUE(old->Send("GET /healthz HTTP/1.0\r\n\r\n"));
  std::optional<RawResponse> answer = old->ReadResponse(kAnswerWithin);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->status_line.substr(0, 12), "HTTP/1.0 200") << answer->head;
  EXPECT_TRUE(old->WaitForClose(kAnswerWithin));

  std::unique_ptr<RawConnection> expecting = RawConnection::Open(server_->port());
  ASSERT_NE(expecting, nullptr);
  std::string body = TopUp(Name("alice"), 7).dump();
  ASSERT_TRUE(expecting->Send(absl::StrCat(
      "POST /v1/operations HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
      "Idempotency-Key: \"", Name("continue"), "\"\r\nExpect: 100-continue\r\nContent-Length: ",
      body.size(), "\r\n\r\n")));
  std::optional<RawResponse> interim = expecting->ReadResponse(kAnswerWithin);
  ASSERT_TRUE(interim.has_value());
  EXPECT_EQ(interim->status, 100);
  ASSERT_TRUE(expecting->Send(body));
  std::optional<RawResponse> created = expecting->ReadResponse(kAnswerWithin);
  ASSERT_TRUE(created.has_value());
  EXPECT_EQ(created->status, 201) << created->body;
  EXPECT_EQ(Balance(Name("alice")), "7");
}

// --connections-max: one connection more than the cap is answered 503 and closed; the
// ones within it keep being served.
TEST_P(ServerTest, AConnectionOverTheCapIs503) {
  StartServer({"--connections-max", "3"});
  std::vector<std::unique_ptr<RawConnection>> open;
  for (int i = 0; i < 3; ++i) {
    open.push_back(RawConnection::Open(server_->port()));
    ASSERT_NE(open.back(), nullptr);
    ASSERT_TRUE(open.back()->Send("GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n"));
    ASSERT_TRUE(open.back()->ReadResponse(kAnswerWithin).has_value());  // accepted and counted
  }
  std::unique_ptr<RawConnection> extra = RawConnection::Open(server_->port());
  ASSERT_NE(extra, nullptr);
  std::optional<RawResponse> refused = extra->ReadResponse(kAnswerWithin);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 503);
  EXPECT_EQ(Json(refused->body)["reason"], "unavailable") << refused->body;
  ASSERT_TRUE(open[0]->Send("GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n"));
  std::optional<RawResponse> still = open[0]->ReadResponse(kAnswerWithin);
  ASSERT_TRUE(still.has_value());
  EXPECT_EQ(still->status, 200);
}

// The loops `ledger serve` runs by default: one per core up to four, one core fewer on
// SQLite (its single writer's); at least one (server/server.h DefaultLoopThreads). The
// listening line names the count.
int ExpectedDefaultLoopThreads(bool sqlite) {
  const int cores = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
  return sqlite ? std::max(1, cores - 1) : cores;
}

int LoopThreadsOf(const std::string& log) {
  const std::string member = "\"loop_threads\":";
  const size_t at = log.find(member);
  if (at == std::string::npos) return -1;
  return std::atoi(log.c_str() + at + member.size());
}

size_t RequestLinesOf(const std::string& log, const std::string& route) {
  size_t count = 0;
  const std::string needle = absl::StrCat("\"route\":\"", route, "\",\"status\":201");
  for (size_t at = log.find(needle); at != std::string::npos; at = log.find(needle, at + 1)) ++count;
  return count;
}

// The default loop count follows the engine; a given count is used, and with more loops
// than connections or fewer, pipelined submits on several connections are each answered
// in order and each logged once (a loop writes its log lines once per turn).
TEST_P(ServerTest, LoopThreadsDefaultFromTheEngineAndEveryCountServesAndLogs) {
  StartServer();
  EXPECT_EQ(LoopThreadsOf(server_->Log()), ExpectedDefaultLoopThreads(IsSqlite())) << server_->Log();
  OpenAccounts();
  int committed = 0;
  for (const char* loops : {"1", "3"}) {
    server_->SignalAndWait(SIGTERM);
    StartServer({"--loop-threads", loops});
    EXPECT_EQ(LoopThreadsOf(server_->Log()), std::atoi(loops)) << server_->Log();
    constexpr int kConnections = 4;
    constexpr int kPipelined = 3;
    std::vector<std::unique_ptr<RawConnection>> connections;
    for (int c = 0; c < kConnections; ++c) {
      std::string requests;
      for (int i = 0; i < kPipelined; ++i) {
        absl::StrAppend(&requests, PostRequest("/v1/operations", Name(absl::StrCat("loops-", loops, "-", c, "-", i)),
                                               TopUp(Name("alice"), 1).dump()));
      }
      connections.push_back(RawConnection::Open(server_->port()));
      ASSERT_NE(connections.back(), nullptr);
      ASSERT_TRUE(connections.back()->Send(requests));
    }
    for (std::unique_ptr<RawConnection>& connection : connections) {
      for (int i = 0; i < kPipelined; ++i) {
        std::optional<RawResponse> answer = connection->ReadResponse(kAnswerWithin);
        ASSERT_TRUE(answer.has_value()) << "loops " << loops << ": no answer " << i;
        ASSERT_EQ(answer->status, 201) << answer->body;
      }
    }
    committed += kConnections * kPipelined;
    // Every answer's log line reaches stderr, once, while the server runs (a bounded wait:
    // a loop flushes after the turn that wrote the answer).
    const absl::Time deadline = absl::Now() + kAnswerWithin;
    while (RequestLinesOf(server_->Log(), "/v1/operations") < kConnections * kPipelined &&
           absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(10));
    }
    EXPECT_EQ(RequestLinesOf(server_->Log(), "/v1/operations"), kConnections * kPipelined) << server_->Log();
  }
  EXPECT_EQ(Balance(Name("alice")), std::to_string(committed));
}

// --loop-threads outside 0 .. 64 is refused before anything is served.
TEST_P(ServerTest, LoopThreadsOutOfRangeIsRefused) {
  for (const char* loops : {"-1", "65"}) {
    const std::filesystem::path log_path = folder_ / absl::StrCat("loops", loops, ".log");
    EXPECT_NE(RunLedgerToExit({"serve", "--db", database_url_, "--listen", "127.0.0.1:0", "--loop-threads", loops},
                              log_path),
              0);
    std::ifstream log(log_path);
    std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("--loop-threads must be 0"), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace ledger::testing
