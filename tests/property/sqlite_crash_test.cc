// Crashes for real on the embedded engine: a child process runs the seeded workload on a
// SQLite file and is SIGKILLed in the middle of a submit (before its entries are
// written, after they are written but before COMMIT, or after COMMIT before the client
// hears back). Every third key goes through a unit of work that also inserts an order
// row (order_rows.h), so some crashes hit a unit between its own insert and COMMIT. The
// parent, the "restarted service", reopens the file and checks that every acknowledged
// commit survived unchanged, that nothing else is there but possibly the commit in
// flight, that the books balance, that every order row belongs to its key's transaction
// and every unit's transaction has its row, and that resending the request in flight
// and every acknowledged one (units as units) yields exactly one commit per key.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "engines/sqlite/sqlite_engine.h"
#include "gtest/gtest.h"
#include "base/clock.h"
#include "base/status.h"
#include "ledger/json.h"
#include "tests/property/broken_engines.h"
#include "tests/property/database_reads.h"
#include "tests/property/order_rows.h"
#include "tests/property/property_context.h"
#include "tests/property/workload.h"
#include "tests/support/open_ledger.h"

namespace ledger::property {
namespace {

enum class CrashPoint { kBeforeWrite, kBeforeCommit, kAfterCommit };

const char* CrashPointName(CrashPoint point) {
  switch (point) {
    case CrashPoint::kBeforeWrite:
      return "before the entries are written";
    case CrashPoint::kBeforeCommit:
      return "after writing, before COMMIT";
    case CrashPoint::kAfterCommit:
      return "after COMMIT, before the reply";
  }
  return "?";
}

// The application table the units of work write their order rows into.
constexpr char kOrdersTable[] = "property_orders";

// Which committing submits a child counts towards its crash.
enum class Counting { kEverySubmit, kUnitsOfWork };

// Kills its own process at the `crash_at`-th committing submit (or unit of work), at
// `point`.
class CrashingEngine final : public ForwardingEngine {
 public:
  CrashingEngine(std::shared_ptr<Engine> inner, CrashPoint point, int crash_at, Counting counting)
      : ForwardingEngine(std::move(inner)),
        point_(point),
        crash_at_(crash_at),
        counting_(counting) {}

  absl::StatusOr<std::unique_ptr<StorageTransaction>> Begin(const BeginOptions& options) override;

  // Whether the submits that follow run in a unit of work.
  void SetInUnit(bool in_unit) { in_unit_ = in_unit; }

  void Reached(CrashPoint point, bool counts) {
    if (counts && (counting_ == Counting::kEverySubmit || in_unit_)) {
      ++writes_;
      counted_ = true;
    }
    if (point == point_ && counted_ && writes_ == crash_at_) raise(SIGKILL);
    // The crash points after a write belong to the transaction that wrote.
    if (point == CrashPoint::kAfterCommit) counted_ = false;
  }

 private:
  CrashPoint point_;
  int crash_at_;
  Counting counting_;
  bool in_unit_ = false;
  bool counted_ = false;  // the transaction under way wrote a counted submit
  int writes_ = 0;  // counted committing submits so far (one process, one client thread)
};

class CrashingTransaction final : public ::ledger::testing::ForwardingTransaction {
 public:
  CrashingTransaction(CrashingEngine& engine, std::unique_ptr<StorageTransaction> inner)
      : ForwardingTransaction(std::move(inner)), engine_(engine) {}

  absl::Status WriteTransaction(const Transaction& transaction,
                                const std::vector<Account>& updated) override {
    engine_.Reached(CrashPoint::kBeforeWrite, /*counts=*/true);
    return inner().WriteTransaction(transaction, updated);
  }
  absl::Status Commit() override {
    engine_.Reached(CrashPoint::kBeforeCommit, false);
    LEDGER_RETURN_IF_ERROR(inner().Commit());
    engine_.Reached(CrashPoint::kAfterCommit, false);
    return absl::OkStatus();
  }

 private:
  CrashingEngine& engine_;
};

absl::StatusOr<std::unique_ptr<StorageTransaction>> CrashingEngine::Begin(
    const BeginOptions& options) {
  LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<StorageTransaction> inner,
                          ForwardingEngine::Begin(options));
  return std::make_unique<CrashingTransaction>(*this, std::move(inner));
}

// The submits of a seeded workload (reversals, settlements of holds, sweeps and closes
// need the model, not the point here), each with the clock time it runs at, all with
// the default key TTL.
struct TimedRequest {
  SubmitRequest request;
  absl::Time at;
};

std::vector<TimedRequest> CrashWorkload(uint64_t seed, const Universe& universe, absl::Time start) {
  std::vector<TimedRequest> requests;
  absl::Time now = start;
  for (const Step& step :
       GenerateWorkload(seed, universe, {.steps = 400, .boundary_faults = false})) {
    now += step.advance;
    OperationKind kind = step.request.operation.kind;
    if (step.kind != StepKind::kSubmit || kind == OperationKind::kReverse ||
        kind == OperationKind::kCapture || kind == OperationKind::kVoid) {
      continue;
    }
    SubmitRequest request{step.request.key, step.request.scope, step.request.operation,
                          ClaimOptions{}};
    // The default TTL outlives the run: every key stays committed, so the checks after
    // the crash can expect each acknowledged transaction to keep its key record.
    requests.push_back({std::move(request), now});
  }
  return requests;
}

void WriteLine(int fd, const std::string& line) {
  std::string text = line + "\n";
  for (size_t written = 0; written < text.size();) {
    ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n <= 0) _exit(3);
    written += static_cast<size_t>(n);
  }
}

// The child: runs the requests until the crash; reports "sending <i>" before each
// submit and "<i> <outcome JSON>" after, one line each, through `fd`.
[[noreturn]] void RunChild(const std::string& path, const std::vector<TimedRequest>& requests,
                           CrashPoint point, int crash_at, Counting counting, int fd) {
  SqliteOptions options;
  options.path = path;
  absl::StatusOr<std::unique_ptr<Engine>> opened = OpenSqliteEngine(options);
  if (!opened.ok()) _exit(2);
  auto engine = std::make_shared<CrashingEngine>(std::shared_ptr<Engine>(std::move(*opened)), point,
                                                 crash_at, counting);
  ManualClock clock;
  Ledger ledger = ledger::testing::OpenTestLedger(engine, {.clock = &clock});
  for (size_t i = 0; i < requests.size(); ++i) {
    clock.Set(requests[i].at);
    WriteLine(fd, absl::StrCat("sending ", i));
    const bool in_unit = SentInUnitOfWork(requests[i].request.key);
    engine->SetInUnit(in_unit);
    absl::StatusOr<Outcome> outcome = in_unit
                                          ? SubmitInUnitOfWork(ledger, requests[i].request,
                                                               kOrdersTable)
                                          : ledger.Submit(requests[i].request);
    WriteLine(fd, absl::StrCat(i, " ",
                               outcome.ok() ? OutcomeToJson(*outcome).dump() : "{\"error\":true}"));
  }
  _exit(0);
}

struct ChildReport {
  std::map<size_t, nlohmann::json> answers;  // request index -> outcome JSON
  std::optional<size_t> in_flight;           // sent, never answered
  bool killed = false;
};

ChildReport ReadReport(int fd, pid_t child) {
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) > 0;)
    text.append(buffer, static_cast<size_t>(n));
  int status = 0;
  waitpid(child, &status, 0);
  ChildReport report;
  report.killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    size_t index = 0;
    if (absl::ConsumePrefix(&line, "sending ")) {
      if (absl::SimpleAtoi(line, &index)) report.in_flight = index;
      continue;
    }
    std::pair<absl::string_view, absl::string_view> parts =
        absl::StrSplit(line, absl::MaxSplits(' ', 1));
    if (!absl::SimpleAtoi(parts.first, &index)) continue;
    report.answers[index] = nlohmann::json::parse(parts.second);
    if (report.in_flight == index) report.in_flight.reset();
  }
  return report;
}

// A fresh database file with the universe's accounts, closed again.
std::string CreateDatabase(const std::filesystem::path& folder, const std::string& name,
                           const Universe& universe) {
  std::string path = (folder / name).string();
  SqliteOptions options;
  options.path = path;
  absl::StatusOr<std::unique_ptr<Engine>> engine = OpenSqliteEngine(options);
  EXPECT_TRUE(engine.ok()) << engine.status();
  ManualClock clock;
  Ledger ledger = ledger::testing::OpenTestLedger(std::shared_ptr<Engine>(std::move(*engine)), {.clock = &clock});
  absl::StatusOr<std::vector<Account>> accounts = OpenUniverse(ledger, universe);
  EXPECT_TRUE(accounts.ok()) << accounts.status();
  absl::Status created = CreateOrdersTable(ledger, kOrdersTable, {});
  EXPECT_TRUE(created.ok()) << created;
  return path;
}

KeyIdentity IdentityOfRequest(const SubmitRequest& request) {
  return KeyIdentityOf(request);
}

// A ledger over the reopened engine, which stays the caller's.
Ledger LedgerOver(Engine& engine, ManualClock& clock) {
  return ledger::testing::OpenTestLedger(std::shared_ptr<Engine>(&engine, [](Engine*) {}),
                                         {.clock = &clock});
}

// Every order row belongs to its key's transaction; every unit's transaction has its row.
std::string CheckOrders(Engine& engine) {
  ManualClock clock;
  Ledger ledger = LedgerOver(engine, clock);
  absl::StatusOr<std::map<std::string, std::string>> rows = ReadOrderRows(ledger, kOrdersTable);
  absl::StatusOr<std::vector<KeyRecord>> keys = ReadAllKeyRecords(engine);
  if (!rows.ok() || !keys.ok()) {
    return absl::StrCat("reading: ", (rows.ok() ? keys.status() : rows.status()).ToString());
  }
  return CheckOrderRows(*rows, *keys);
}

// What the reopened database must hold after the crash.
void CheckAfterCrash(Engine& engine, const std::vector<TimedRequest>& requests,
                     const ChildReport& report, CrashPoint point) {
  std::map<std::string, nlohmann::json> acknowledged;  // transaction id -> as answered
  for (const auto& [index, answer] : report.answers) {
    if (answer.value("outcome", "") == "committed" || answer.value("outcome", "") == "duplicate") {
      acknowledged[answer["transaction"]["id"]] = answer["transaction"];
    }
  }
  absl::StatusOr<std::vector<Transaction>> transactions = ReadAllTransactions(engine);
  ASSERT_TRUE(transactions.ok()) << transactions.status();
  int unacknowledged = 0;
  for (const Transaction& transaction : *transactions) {
    auto it = acknowledged.find(transaction.id);
    if (it == acknowledged.end()) {
      ++unacknowledged;
      continue;
    }
    EXPECT_EQ(TransactionToJson(transaction), it->second) << "an acknowledged commit changed";
  }
  EXPECT_EQ(static_cast<int>(transactions->size()) - unacknowledged,
            static_cast<int>(acknowledged.size()))
      << "an acknowledged commit was lost in the crash";
  // Only the submit in flight may have committed without an answer, and only if the
  // crash came after its COMMIT.
  EXPECT_EQ(unacknowledged, point == CrashPoint::kAfterCommit ? 1 : 0);
  absl::StatusOr<std::optional<KeyRecord>> in_flight =
      FindKeyRecord(engine, IdentityOfRequest(requests[*report.in_flight].request));
  ASSERT_TRUE(in_flight.ok());
  EXPECT_EQ(in_flight->has_value(), point == CrashPoint::kAfterCommit);

  absl::StatusOr<std::vector<KeyRecord>> keys = ReadAllKeyRecords(engine);
  absl::StatusOr<std::vector<OutboxEvent>> events = ReadAllEvents(engine);
  absl::StatusOr<std::vector<Account>> accounts = ReadAllAccounts(engine);
  ASSERT_TRUE(keys.ok() && events.ok() && accounts.ok());
  EXPECT_EQ(CheckOneTransactionPerKey(*transactions, *keys, *events), "");
  EXPECT_EQ(CheckConservationAndSolvency(*accounts), "");
  EXPECT_EQ(CheckOrders(engine), "");
  EXPECT_EQ(RunVerify(engine), "");
}

// A submit as the child sent it: in a unit of work with its order row, or alone.
absl::StatusOr<Outcome> Resend(Ledger& ledger, const SubmitRequest& request) {
  if (SentInUnitOfWork(request.key)) return SubmitInUnitOfWork(ledger, request, kOrdersTable);
  return ledger.Submit(request);
}

// The restarted client resends the request in flight, then every request it sent: each
// key ends with exactly one transaction, and every acknowledged one replays unchanged.
void ResendAfterCrash(Engine& engine, const std::vector<TimedRequest>& requests,
                      const ChildReport& report, CrashPoint point) {
  ManualClock clock(requests[*report.in_flight].at);
  Ledger ledger = LedgerOver(engine, clock);
  absl::StatusOr<Outcome> resent = Resend(ledger, requests[*report.in_flight].request);
  ASSERT_TRUE(resent.ok()) << resent.status();
  if (point == CrashPoint::kAfterCommit) {
    EXPECT_EQ(resent->kind, OutcomeKind::kDuplicate)
        << "the commit made before the crash was not replayed";
  } else {
    EXPECT_NE(resent->kind, OutcomeKind::kDuplicate)
        << "a submit killed before COMMIT left its key behind";
  }
  for (const auto& [index, answer] : report.answers) {
    clock.Set(requests[index].at);  // when it was first sent: a short TTL has not run out
    absl::StatusOr<Outcome> again = Resend(ledger, requests[index].request);
    ASSERT_TRUE(again.ok() || IsConflict(again.status()) || absl::IsInvalidArgument(again.status()))
        << again.status();
    if (answer.value("outcome", "") == "committed") {
      ASSERT_TRUE(again.ok());
      EXPECT_EQ(again->kind, OutcomeKind::kDuplicate);
      EXPECT_EQ(TransactionToJson(again->transaction), answer["transaction"]);
    }
  }
  absl::StatusOr<std::vector<Transaction>> transactions = ReadAllTransactions(engine);
  absl::StatusOr<std::vector<KeyRecord>> keys = ReadAllKeyRecords(engine);
  absl::StatusOr<std::vector<OutboxEvent>> events = ReadAllEvents(engine);
  ASSERT_TRUE(transactions.ok() && keys.ok() && events.ok());
  EXPECT_EQ(CheckOneTransactionPerKey(*transactions, *keys, *events), "");
  EXPECT_EQ(CheckOrders(engine), "");
  EXPECT_EQ(RunVerify(engine), "");
}

// Which committing submit each child dies in: two by default, more in the soak; and
// which committing unit of work (so the crash surely hits one: between its order row
// and COMMIT at kBeforeCommit).
struct CrashAt {
  Counting counting;
  int at;
};
std::vector<CrashAt> CrashAts() {
  if (BudgetFromEnvironment(0, 1).soak) {
    std::vector<CrashAt> ats;
    for (int at : {1, 3, 7, 13, 29, 41, 57, 80}) ats.push_back({Counting::kEverySubmit, at});
    for (int at : {1, 4, 9, 20}) ats.push_back({Counting::kUnitsOfWork, at});
    return ats;
  }
  return {{Counting::kEverySubmit, 7}, {Counting::kEverySubmit, 41}, {Counting::kUnitsOfWork, 9}};
}

const char* CountingName(Counting counting) {
  return counting == Counting::kEverySubmit ? "committing submit" : "committing unit of work";
}

TEST(SqliteCrashTest, AProcessKilledMidSubmitLosesNoAcknowledgedCommitAndTheResendCommitsOnce) {
  std::filesystem::path folder =
      std::filesystem::temp_directory_path() / absl::StrCat("ledger-sqlite-crash-", getpid());
  std::filesystem::create_directories(folder);
  constexpr uint64_t kSeed = 7000;
  Universe universe = MakeUniverse(kSeed);
  std::vector<TimedRequest> requests = CrashWorkload(kSeed, universe, ManualClock().Now());
  int run = 0;
  for (CrashPoint point :
       {CrashPoint::kBeforeWrite, CrashPoint::kBeforeCommit, CrashPoint::kAfterCommit}) {
    for (const auto& [counting, crash_at] : CrashAts()) {
      SCOPED_TRACE(absl::StrCat("crash ", CrashPointName(point), " of ", CountingName(counting),
                                " #", crash_at));
      std::string path = CreateDatabase(folder, absl::StrCat("crash-", ++run, ".db"), universe);
      int pipe_fds[2];
      ASSERT_EQ(pipe(pipe_fds), 0);
      pid_t child = fork();
      ASSERT_GE(child, 0);
      if (child == 0) {
        close(pipe_fds[0]);
        RunChild(path, requests, point, crash_at, counting, pipe_fds[1]);
      }
      close(pipe_fds[1]);
      ChildReport report = ReadReport(pipe_fds[0], child);
      close(pipe_fds[0]);
      ASSERT_TRUE(report.killed) << "the child finished without reaching its crash point";
      ASSERT_TRUE(report.in_flight.has_value());

      SqliteOptions options;
      options.path = path;
      absl::StatusOr<std::unique_ptr<Engine>> reopened = OpenSqliteEngine(options);
      ASSERT_TRUE(reopened.ok()) << reopened.status();
      CheckAfterCrash(**reopened, requests, report, point);
      ResendAfterCrash(**reopened, requests, report, point);
      std::cout << "[ property ] sqlite crash " << CrashPointName(point) << " of "
                << CountingName(counting) << " #" << crash_at << ": " << report.answers.size()
                << " answers before the crash, request #" << *report.in_flight << " in flight"
                << (SentInUnitOfWork(requests[*report.in_flight].request.key) ? " (a unit of work)"
                                                                              : "")
                << std::endl;
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(folder, ignored);
}

}  // namespace
}  // namespace ledger::property
