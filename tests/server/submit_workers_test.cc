// A submit handed to the group committer holds no worker thread (issue 28), against the
// real `ledger serve` process over real sockets on every engine: with ONE worker and
// group commit on, more concurrent submits than workers wait on a lock the test's own
// transaction holds, and a read is still answered meanwhile; once the lock goes, every
// submit commits once, and a submit whose client closed its connection while it waited
// commits too (its resend replays it). The server before this, which ran each submit on
// a worker until its batch committed, answered the read only after the lock went. And
// the single submit is taken on the event loop, not a worker: a bad one is answered
// while the one worker waits, and pipelined submits stay in order whichever runs them.
// The batch route the same: its batches wait in the group committer, not on a worker.
// Waits are bounded generously; nothing here asserts on speed.
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "engines/open_engine.h"
#include "gtest/gtest.h"
#include "ledger/ledger.h"
#include "ledger/unit_of_work.h"
#include "nlohmann/json.hpp"
#include "tests/server/raw_http.h"
#include "tests/server/server_fixture.h"

namespace ledger::testing {
namespace {

// Far below every lock wait of the engines (10 s: the server's submits would give up
// after it) and far above any healthy answer; it only stops a hung test.
constexpr absl::Duration kReadAnsweredWithin = absl::Seconds(5);
constexpr absl::Duration kAnswerWithin = absl::Seconds(30);
constexpr int kSubmits = 8;  // against --threads 1
constexpr int64_t kAmount = 100;

// A POST of `body` to `target`, with Idempotency-Key: "key" unless `key` is empty.
std::string PostBytes(const std::string& target, const std::string& key, const std::string& body) {
  return absl::StrCat("POST ", target, " HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n",
                      key.empty() ? "" : absl::StrCat("Idempotency-Key: \"", key, "\"\r\n"),
                      "Content-Length: ", body.size(), "\r\n\r\n", body);
}

std::string SubmitBytes(const std::string& key, const nlohmann::json& operation) {
  return PostBytes("/v1/operations", key, operation.dump());
}

nlohmann::json Json(const std::string& text) {
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// The balance_after of `account`'s entry in a transaction's JSON, "" when it has none.
std::string BalanceAfter(const nlohmann::json& transaction, const std::string& account) {
  if (!transaction.contains("entries")) return "";
  for (const nlohmann::json& entry : transaction["entries"]) {
    if (entry["account"] == account) return entry["balance_after"].get<std::string>();
  }
  return "";
}

// Holds the locks a top-up to `to` takes (SQLite: the database's writer lock; PostgreSQL
// and MariaDB: the two accounts' rows), in a unit of work of the test's own ledger on
// the server's database, from construction until Release.
class LockHolder {
 public:
  LockHolder(const std::string& database_url, SubmitRequest top_up) {
    thread_ = std::thread([this, database_url, top_up = std::move(top_up)] {
      absl::Status status = Hold(database_url, top_up);
      if (!locked_.HasBeenNotified()) {  // it failed before the locks were taken
        lock_status_ = status;
        locked_.Notify();
      }
    });
  }
  ~LockHolder() { Release(); }

  // OK once the locks are held; else why the unit could not take them.
  absl::Status WaitUntilLocked() {
    locked_.WaitForNotification();
    return lock_status_;
  }
  // Lets the unit of work commit, and waits for it.
  void Release() {
    if (!release_.HasBeenNotified()) release_.Notify();
    if (thread_.joinable()) thread_.join();
  }

 private:
  absl::Status Hold(const std::string& database_url, const SubmitRequest& top_up) {
    absl::StatusOr<std::unique_ptr<Engine>> engine = OpenEngine(database_url);
    if (!engine.ok()) return engine.status();
    absl::StatusOr<Ledger> ledger = Ledger::Open(std::shared_ptr<Engine>(*std::move(engine)));
    if (!ledger.ok()) return ledger.status();
    return ledger->Transact([&](UnitOfWork& work) -> absl::Status {
      absl::StatusOr<Outcome> outcome = work.Submit(top_up);
      lock_status_ = !outcome.ok() ? outcome.status()
                     : outcome->kind != OutcomeKind::kCommitted ? absl::AbortedError(outcome->detail)
                                                                : absl::OkStatus();
      locked_.Notify();
      if (!lock_status_.ok()) return lock_status_;
      release_.WaitForNotificationWithTimeout(kAnswerWithin);
      return absl::OkStatus();
    });
  }

  absl::Notification locked_;
  absl::Notification release_;
  absl::Status lock_status_;  // written before locked_ is notified
  std::thread thread_;
};

int64_t CommittedSubmits(const std::string& metrics) {
  const std::string line = "ledger_submits_total{outcome=\"committed\"} ";
  size_t at = metrics.find(line);
  if (at == std::string::npos) return 0;
  return std::stoll(metrics.substr(at + line.size()));
}

TEST_P(ServerTest, SubmitsWaitingInTheGroupCommitterHoldNoWorker) {
  StartServer({"--threads", "1", "--group-commit"});
  OpenAccounts();
  const std::string alice = Name("alice");

  LockHolder holder(database_url_, SubmitRequest{.key = Name("holder"),
                                                 .operation = Operation::TopUp(
                                                     Name("issuance"), alice, "USD", kAmount)});
  ASSERT_TRUE(holder.WaitUntilLocked().ok()) << holder.WaitUntilLocked();

  std::vector<std::unique_ptr<RawConnection>> submits;
  for (int i = 0; i < kSubmits; ++i) {
    submits.push_back(RawConnection::Open(server_->port()));
    ASSERT_NE(submits.back(), nullptr);
    ASSERT_TRUE(submits.back()->Send(SubmitBytes(Name(absl::StrCat("submit-", i)), TopUp(alice, kAmount))));
  }
  // One more, whose client goes away while it waits: the server still commits it.
  {
    std::unique_ptr<RawConnection> abandoned = RawConnection::Open(server_->port());
    ASSERT_NE(abandoned, nullptr);
    ASSERT_TRUE(abandoned->Send(SubmitBytes(Name("abandoned"), TopUp(alice, kAmount))));
  }

  // The one worker is free: a read (of the account the submits wait on) is answered while
  // they wait.
  std::unique_ptr<RawConnection> read = RawConnection::Open(server_->port());
  ASSERT_NE(read, nullptr);
  ASSERT_TRUE(read->Send(absl::StrCat("GET /v1/accounts/", alice, " HTTP/1.1\r\nHost: test\r\n\r\n")));
  std::optional<RawResponse> read_answer = read->ReadResponse(kReadAnsweredWithin);
  const bool read_answered_while_locked = read_answer.has_value();
  holder.Release();
  EXPECT_TRUE(read_answered_while_locked)
      << "a read was not answered while " << kSubmits << " submits waited on one worker";
  if (read_answered_while_locked) {
    EXPECT_EQ(read_answer->status, 200) << read_answer->body;
  }

  for (int i = 0; i < kSubmits; ++i) {
    std::optional<RawResponse> answer = submits[i]->ReadResponse(kAnswerWithin);
    ASSERT_TRUE(answer.has_value()) << "submit " << i << " was not answered";
    EXPECT_EQ(answer->status, 201) << answer->body;
    EXPECT_EQ(answer->Header("Idempotent-Replayed"), "") << "submit " << i;
  }
  // The abandoned submit commits too: once it has (the counter), its resend replays it.
  int64_t committed = 0;
  for (absl::Time deadline = absl::Now() + kAnswerWithin;
       committed < kSubmits + 1 && absl::Now() < deadline;
       absl::SleepFor(absl::Milliseconds(20))) {
    httplib::Result metrics = Get("/metrics");
    ASSERT_TRUE(metrics);
    committed = CommittedSubmits(metrics->body);
  }
  ASSERT_EQ(committed, kSubmits + 1) << "the abandoned submit did not commit";
  httplib::Result resend = Submit(Name("abandoned"), TopUp(alice, kAmount));
  ASSERT_TRUE(resend);
  EXPECT_EQ(resend->status, 201) << resend->body;
  EXPECT_EQ(resend->get_header_value("Idempotent-Replayed"), "true");
  // The holder's top-up, the submits and the abandoned one: each once.
  EXPECT_EQ(Balance(alice), std::to_string(kAmount * (kSubmits + 2)));
}

// The single submit is parsed and handed on on the event loop (issue 28), so a submit
// the server cannot read is answered at once even while the one worker is busy: here
// with a dry run (always a worker's: it reads the database) that waits on the test's
// locks. Without the loop, the bad submits queued behind the dry run until the locks
// went. (Should the server read a bad submit before the dry run, this proves nothing but
// still passes; the short pause makes that unlikely.)
TEST_P(ServerTest, ABadSubmitIsAnsweredWhileTheOnlyWorkerIsBusy) {
  StartServer({"--threads", "1", "--group-commit"});
  OpenAccounts();
  const std::string alice = Name("alice");
  LockHolder holder(database_url_, SubmitRequest{.key = Name("holder"),
                                                 .operation = Operation::TopUp(
                                                     Name("issuance"), alice, "USD", kAmount)});
  ASSERT_TRUE(holder.WaitUntilLocked().ok()) << holder.WaitUntilLocked();

  std::unique_ptr<RawConnection> dry_run = RawConnection::Open(server_->port());
  ASSERT_NE(dry_run, nullptr);
  ASSERT_TRUE(dry_run->Send(PostBytes("/v1/operations?dry_run=true", Name("dry"), TopUp(alice, 1).dump())));
  absl::SleepFor(absl::Milliseconds(200));  // the worker takes the dry run, which waits

  struct Bad {
    std::string key;
    std::string body;
    std::string reason;
  };
  for (const Bad& bad : {Bad{Name("bad-json"), "{", "invalid_operation"},
                         Bad{Name("bad-amount"), R"({"kind":"top_up","amount":"x"})", "invalid_operation"},
                         Bad{"", TopUp(alice, 1).dump(), "idempotency_key_invalid"}}) {
    std::unique_ptr<RawConnection> connection = RawConnection::Open(server_->port());
    ASSERT_NE(connection, nullptr);
    ASSERT_TRUE(connection->Send(PostBytes("/v1/operations", bad.key, bad.body)));
    std::optional<RawResponse> answer = connection->ReadResponse(kReadAnsweredWithin);
    ASSERT_TRUE(answer.has_value()) << "a bad submit (" << bad.reason
                                    << ") waited for the worker that runs the dry run";
    EXPECT_EQ(answer->status, 400) << answer->body;
    EXPECT_EQ(Json(answer->body)["reason"], bad.reason) << answer->body;
  }
  holder.Release();
  std::optional<RawResponse> decided = dry_run->ReadResponse(kAnswerWithin);
  ASSERT_TRUE(decided.has_value());
  EXPECT_EQ(decided->status, 200) << decided->body;
  EXPECT_EQ(Balance(alice), std::to_string(kAmount));  // the holder's top-up only
}

// Pipelined submits, some taken on the event loop (real submits, bad ones) and some on a
// worker (a dry run), are still executed one after another and answered in order: the
// dry run sees the submit before it and not the one after, each real submit commits
// once, and the replay of the first is a replay.
TEST_P(ServerTest, PipelinedSubmitsOnTheLoopAndOnAWorkerStayInOrder) {
  StartServer();
  OpenAccounts();
  const std::string alice = Name("alice");
  const std::string requests = absl::StrCat(
      SubmitBytes(Name("first"), TopUp(alice, 1)),
      PostBytes("/v1/operations?dry_run=true", Name("dry"), TopUp(alice, 2).dump()),
      PostBytes("/v1/operations", Name("bad"), "{"),
      SubmitBytes(Name("second"), TopUp(alice, 4)),
      SubmitBytes(Name("first"), TopUp(alice, 1)),
      "GET /v1/accounts/", alice, "/balance HTTP/1.1\r\nHost: test\r\n\r\n");
  std::unique_ptr<RawConnection> connection = RawConnection::Open(server_->port());
  ASSERT_NE(connection, nullptr);
  ASSERT_TRUE(connection->Send(requests));
  std::vector<RawResponse> answers;
  for (int i = 0; i < 6; ++i) {
    std::optional<RawResponse> answer = connection->ReadResponse(kAnswerWithin);
    ASSERT_TRUE(answer.has_value()) << "no answer " << i;
    answers.push_back(*answer);
  }
  EXPECT_EQ(answers[0].status, 201) << answers[0].body;
  EXPECT_EQ(BalanceAfter(Json(answers[0].body), alice), "1") << answers[0].body;
  EXPECT_EQ(answers[1].status, 200) << answers[1].body;
  EXPECT_EQ(BalanceAfter(Json(answers[1].body)["transaction"], alice), "3") << answers[1].body;
  EXPECT_EQ(answers[2].status, 400) << answers[2].body;
  EXPECT_EQ(Json(answers[2].body)["reason"], "invalid_operation") << answers[2].body;
  EXPECT_EQ(answers[3].status, 201) << answers[3].body;
  EXPECT_EQ(BalanceAfter(Json(answers[3].body), alice), "5") << answers[3].body;  // 1 + 4
  EXPECT_EQ(answers[4].status, 201) << answers[4].body;
  EXPECT_EQ(answers[4].Header("Idempotent-Replayed"), "true");
  EXPECT_EQ(answers[4].body, answers[0].body);
  EXPECT_EQ(answers[5].status, 200) << answers[5].body;
  EXPECT_EQ(Json(answers[5].body)["balance"], "5") << answers[5].body;
  EXPECT_EQ(Balance(alice), "5");
}

// A batch body of top-ups to `to`, one per key, each `amount`.
std::string BatchBody(const std::vector<std::string>& keys, const nlohmann::json& operation) {
  nlohmann::json items = nlohmann::json::array();
  for (const std::string& key : keys) items.push_back({{"idempotency_key", key}, {"operation", operation}});
  return nlohmann::json{{"items", items}}.dump();
}

// The batch route hands its batch to the group committer too (Ledger::SubmitBatchAsync,
// issue 28): with ONE worker, more batches than workers wait on the test's locks and a
// read is still answered meanwhile; once the locks go, every item of every batch commits
// once. Before, each batch ran SubmitBatch on a worker until it committed, so the first
// batch took the one worker and the read waited for the locks.
TEST_P(ServerTest, BatchesWaitingInTheGroupCommitterHoldNoWorker) {
  StartServer({"--threads", "1", "--group-commit"});
  OpenAccounts();
  const std::string alice = Name("alice");
  LockHolder holder(database_url_, SubmitRequest{.key = Name("holder"),
                                                 .operation = Operation::TopUp(
                                                     Name("issuance"), alice, "USD", kAmount)});
  ASSERT_TRUE(holder.WaitUntilLocked().ok()) << holder.WaitUntilLocked();

  constexpr int kBatches = 4;
  constexpr int kItems = 2;
  std::vector<std::unique_ptr<RawConnection>> batches;
  for (int b = 0; b < kBatches; ++b) {
    std::vector<std::string> keys;
    for (int i = 0; i < kItems; ++i) keys.push_back(Name(absl::StrCat("batch-", b, "-", i)));
    batches.push_back(RawConnection::Open(server_->port()));
    ASSERT_NE(batches.back(), nullptr);
    ASSERT_TRUE(batches.back()->Send(PostBytes("/v1/operations/batch", "", BatchBody(keys, TopUp(alice, kAmount)))));
  }
  std::unique_ptr<RawConnection> read = RawConnection::Open(server_->port());
  ASSERT_NE(read, nullptr);
  ASSERT_TRUE(read->Send(absl::StrCat("GET /v1/accounts/", alice, " HTTP/1.1\r\nHost: test\r\n\r\n")));
  std::optional<RawResponse> read_answer = read->ReadResponse(kReadAnsweredWithin);
  const bool read_answered_while_locked = read_answer.has_value();
  holder.Release();
  EXPECT_TRUE(read_answered_while_locked)
      << "a read was not answered while " << kBatches << " batches waited on one worker";

  for (int b = 0; b < kBatches; ++b) {
    std::optional<RawResponse> answer = batches[b]->ReadResponse(kAnswerWithin);
    ASSERT_TRUE(answer.has_value()) << "batch " << b << " was not answered";
    ASSERT_EQ(answer->status, 200) << answer->body;
    nlohmann::json results = Json(answer->body)["results"];
    ASSERT_EQ(results.size(), static_cast<size_t>(kItems)) << answer->body;
    for (const nlohmann::json& result : results) EXPECT_EQ(result["status"], 201) << answer->body;
  }
  EXPECT_EQ(Balance(alice), std::to_string(kAmount * (kBatches * kItems + 1)));
}

// Pipelined batches and single submits, the batches taken on the event loop and one
// (a dry run) on a worker, are executed one after another and answered in order: each
// sees the commits before it, a bad batch is its own 400, and a resent batch replays.
TEST_P(ServerTest, PipelinedBatchesAndSubmitsStayInOrder) {
  StartServer();
  OpenAccounts();
  const std::string alice = Name("alice");
  const std::string first = BatchBody({Name("b-1"), Name("b-2")}, TopUp(alice, 1));
  const std::string requests = absl::StrCat(
      PostBytes("/v1/operations/batch", "", first),
      SubmitBytes(Name("single"), TopUp(alice, 4)),
      PostBytes("/v1/operations/batch?dry_run=true", "", BatchBody({Name("b-dry")}, TopUp(alice, 8))),
      PostBytes("/v1/operations/batch", "", "{"),
      PostBytes("/v1/operations/batch", "", first));
  std::unique_ptr<RawConnection> connection = RawConnection::Open(server_->port());
  ASSERT_NE(connection, nullptr);
  ASSERT_TRUE(connection->Send(requests));
  std::vector<RawResponse> answers;
  for (int i = 0; i < 5; ++i) {
    std::optional<RawResponse> answer = connection->ReadResponse(kAnswerWithin);
    ASSERT_TRUE(answer.has_value()) << "no answer " << i;
    answers.push_back(*answer);
  }
  ASSERT_EQ(answers[0].status, 200) << answers[0].body;
  nlohmann::json committed = Json(answers[0].body)["results"];
  ASSERT_EQ(committed.size(), 2u) << answers[0].body;
  EXPECT_EQ(BalanceAfter(committed[1]["body"], alice), "2") << answers[0].body;
  EXPECT_EQ(answers[1].status, 201) << answers[1].body;
  EXPECT_EQ(BalanceAfter(Json(answers[1].body), alice), "6") << answers[1].body;
  ASSERT_EQ(answers[2].status, 200) << answers[2].body;
  EXPECT_EQ(BalanceAfter(Json(answers[2].body)["results"][0]["body"]["transaction"], alice), "14")
      << answers[2].body;
  EXPECT_EQ(answers[3].status, 400) << answers[3].body;
  EXPECT_EQ(Json(answers[3].body)["reason"], "invalid_batch") << answers[3].body;
  ASSERT_EQ(answers[4].status, 200) << answers[4].body;
  nlohmann::json replayed = Json(answers[4].body)["results"];
  ASSERT_EQ(replayed.size(), 2u) << answers[4].body;
  EXPECT_EQ(replayed[0]["replayed"], true) << answers[4].body;
  EXPECT_EQ(replayed[0]["body"], committed[0]["body"]);
  EXPECT_EQ(replayed[1]["body"], committed[1]["body"]);
  EXPECT_EQ(Balance(alice), "6");
}

}  // namespace
}  // namespace ledger::testing
