// The payout saga (docs/payout_saga.h) survives a crash after any step: a fork()ed child
// runs it and _exit()s at the chosen step, the parent reruns it with the
// same payout id, and then every step has committed once, the bank paid at most once,
// and the money ended captured or released, never both. Also: docs/idempotent-work.md
// quotes the saga's code word for word.
//
// Every test runs on each engine the build has, a fresh database each
// (tests/cli/fresh_database.h): a SQLite file, and the MySQL / MariaDB and PostgreSQL
// test servers (skipped without them, failed under CI=true).
#include "docs/payout_saga.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "engines/open_engine.h"
#include "gtest/gtest.h"
#include "ledger/verify.h"
#include "tests/cli/fresh_database.h"

namespace payout_saga {
namespace {

constexpr int kCrashedOnPurpose = 42;
constexpr ledger::Amount kFunded = 10'000;
constexpr ledger::Amount kPaidOut = 2'500;

std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A bank that keeps its books in files, so what a crashed child process asked of it is
// still there for the parent: every request is logged, and a payout is executed (paid or
// refused) once per idempotency key; a resend gets the first answer back.
class FileBank final : public Bank {
 public:
  FileBank(std::filesystem::path folder, bool refuses)
      : folder_(std::move(folder)), refuses_(refuses) {
    std::filesystem::create_directories(folder_ / "executed");
  }

  absl::StatusOr<BankAnswer> SendPayout(std::string_view idempotency_key,
                                        const PayoutRequest& payout) override {
    std::string key(idempotency_key);
    std::ofstream(folder_ / "requests.log", std::ios::app) << key << "\n";
    std::filesystem::path executed = folder_ / "executed" / key;
    if (std::filesystem::exists(executed)) {
      std::string decision = ReadText(executed);
      return BankAnswer{decision == "paid" ? BankDecision::kPaid : BankDecision::kRefused,
                        "bank-" + key};
    }
    std::ofstream(executed) << (refuses_ ? "refused" : "paid");
    std::ofstream(folder_ / "payouts.log", std::ios::app)
        << key << " " << payout.amount << " " << (refuses_ ? "refused" : "paid") << "\n";
    return BankAnswer{refuses_ ? BankDecision::kRefused : BankDecision::kPaid, "bank-" + key};
  }

  int Requests() const { return Lines("requests.log"); }
  int Executions() const { return Lines("payouts.log"); }

 private:
  int Lines(const char* name) const {
    std::string text = ReadText(folder_ / name);
    return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  }

  std::filesystem::path folder_;
  bool refuses_;
};

// One orchestrator process's view: its own engine, ledger, runner and clock.
struct Orchestrator {
  std::unique_ptr<ledger::ManualClock> clock;
  std::shared_ptr<ledger::Engine> engine;
  std::unique_ptr<ledger::Ledger> ledger;
  std::unique_ptr<ledger::IdempotentRunner> runner;
};

Orchestrator OpenOrchestrator(const std::string& url, absl::Time now) {
  Orchestrator opened;
  opened.clock = std::make_unique<ledger::ManualClock>(now);
  absl::StatusOr<std::unique_ptr<ledger::Engine>> engine = ledger::OpenEngine(url);
  if (!engine.ok()) {
    ADD_FAILURE() << engine.status();
    return opened;
  }
  opened.engine = std::shared_ptr<ledger::Engine>(*std::move(engine));
  absl::StatusOr<ledger::Ledger> book =
      ledger::Ledger::Open(opened.engine, {.clock = opened.clock.get()});
  if (!book.ok()) {
    ADD_FAILURE() << book.status();
    return opened;
  }
  opened.ledger = std::make_unique<ledger::Ledger>(*std::move(book));
  opened.runner =
      std::make_unique<ledger::IdempotentRunner>(opened.engine->work_claims(), *opened.clock);
  return opened;
}


PayoutRequest Payout(const std::string& id) {
  return {.payout_id = id, .creator = "creator", .clearing = "payout-clearing", .asset = "USD",
          .amount = kPaidOut};
}

std::string_view StepName(PayoutStep step) {
  switch (step) {
    case PayoutStep::kHoldPlaced: return "HoldPlaced";
    case PayoutStep::kBankReplied: return "BankReplied";
    case PayoutStep::kBankAnswerStored: return "BankAnswerStored";
    case PayoutStep::kSettled: return "Settled";
  }
  return "?";
}

// The engine under test comes from the parameter (EngineOf).
class PayoutSagaFixture : public ::testing::Test {
 protected:
  virtual std::string EngineOf() const = 0;

  void SetUp() override {
    std::string folder_template =
        (std::filesystem::temp_directory_path() / "payout-saga-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(folder_template.data()), nullptr);
    folder_ = folder_template;
    ledger::testing::RequireFreshDatabaseEngine(EngineOf());
    if (HasFatalFailure() || IsSkipped()) return;
    absl::StatusOr<std::string> url = ledger::testing::FreshDatabaseUrl(EngineOf(), folder_);
    ASSERT_TRUE(url.ok()) << url.status();
    url_ = *url;
    // Closed again before any fork: a child must never share the parent's connections.
    Orchestrator setup = OpenOrchestrator(url_, start_);
    ASSERT_NE(setup.ledger, nullptr);
    ledger::Ledger& book = *setup.ledger;
    ASSERT_TRUE(book.DefineAsset({"USD", 2}).ok());
    ASSERT_TRUE(book.OpenAccount({.id = "issuance", .asset = "USD", .allow_negative = true}).ok());
    ASSERT_TRUE(book.OpenAccount({.id = "creator", .asset = "USD"}).ok());
    ASSERT_TRUE(book.OpenAccount({.id = "payout-clearing", .asset = "USD"}).ok());
    absl::StatusOr<ledger::Outcome> funded = book.Submit(
        {.key = "fund-creator",
         .operation = ledger::Operation::TopUp("issuance", "creator", "USD", kFunded)});
    ASSERT_TRUE(funded.ok() && funded->kind == ledger::OutcomeKind::kCommitted);
  }

  void TearDown() override {
    if (!url_.empty()) ledger::testing::DropFreshDatabase(EngineOf());
    std::error_code ignored;
    std::filesystem::remove_all(folder_, ignored);
  }

  // Runs the saga in a child process that _exit()s right after `crash_at`.
  void RunInChildCrashingAfter(PayoutStep crash_at, const PayoutRequest& payout, bool refuses) {
    std::cout.flush();
    pid_t child = fork();
    ASSERT_NE(child, -1);
    if (child == 0) {
      Orchestrator orchestrator = OpenOrchestrator(url_, start_);
      if (orchestrator.ledger == nullptr) _exit(2);
      FileBank bank(folder_ / "bank", refuses);
      PayoutSagaOptions options;
      options.after_step = [crash_at](PayoutStep step) {
        if (step == crash_at) _exit(kCrashedOnPurpose);
      };
      PayoutSaga saga(*orchestrator.ledger, *orchestrator.runner, bank, options);
      absl::StatusOr<PayoutReceipt> receipt = saga.Run(payout);
      _exit(receipt.ok() ? 0 : 1);  // reaching here means the crash point was never hit
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), kCrashedOnPurpose) << "the child did not crash at the step";
  }

  // The rerun, as a restarted orchestrator: later than the crashed one's work lease, so a
  // bank step it left pending can be taken over.
  absl::StatusOr<PayoutReceipt> Rerun(const PayoutRequest& payout, bool refuses) {
    Orchestrator orchestrator = OpenOrchestrator(url_, rerun_at_);
    if (orchestrator.ledger == nullptr) return absl::InternalError("cannot reopen");
    FileBank bank(folder_ / "bank", refuses);
    PayoutSaga saga(*orchestrator.ledger, *orchestrator.runner, bank);
    return saga.Run(payout);
  }

  // Every step committed once, the money captured or released (never both), the books
  // still balance.
  void ExpectSettledOnce(const PayoutReceipt& receipt, bool refuses) {
    Orchestrator reader = OpenOrchestrator(url_, rerun_at_);
    ASSERT_NE(reader.ledger, nullptr);
    std::map<std::string, int> transactions_by_kind;
    absl::StatusOr<std::vector<ledger::Transaction>> transactions =
        reader.engine->ListTransactions("", 1000);
    ASSERT_TRUE(transactions.ok()) << transactions.status();
    for (const ledger::Transaction& transaction : *transactions) {
      transactions_by_kind[std::string(ledger::OperationKindName(transaction.kind))] += 1;
    }
    EXPECT_EQ(transactions_by_kind["hold"], 1);
    EXPECT_EQ(transactions_by_kind["capture"], refuses ? 0 : 1);
    EXPECT_EQ(transactions_by_kind["void"], refuses ? 1 : 0);

    absl::StatusOr<std::vector<ledger::Hold>> holds = reader.ledger->ListHolds("creator", "", 10);
    ASSERT_TRUE(holds.ok()) << holds.status();
    ASSERT_EQ(holds->size(), 1u);
    const ledger::Hold& hold = holds->front();
    EXPECT_EQ(hold.id, receipt.hold_id);
    EXPECT_EQ(hold.status, refuses ? ledger::HoldStatus::kVoided : ledger::HoldStatus::kCaptured);
    EXPECT_EQ(hold.settled_by, receipt.settlement_id);
    EXPECT_EQ(receipt.result, refuses ? PayoutResult::kReleased : PayoutResult::kCaptured);

    absl::StatusOr<ledger::Account> creator = reader.ledger->GetAccount("creator");
    absl::StatusOr<ledger::Account> clearing = reader.ledger->GetAccount("payout-clearing");
    ASSERT_TRUE(creator.ok() && clearing.ok());
    EXPECT_EQ(creator->balance, refuses ? kFunded : kFunded - kPaidOut);
    EXPECT_EQ(clearing->balance, refuses ? 0 : kPaidOut);
    EXPECT_EQ(creator->pending_debits, 0);
    EXPECT_EQ(clearing->pending_credits, 0);

    absl::StatusOr<ledger::VerifyReport> verify = ledger::VerifyLedger(*reader.engine);
    ASSERT_TRUE(verify.ok()) << verify.status();
    EXPECT_TRUE(verify->ok()) << verify->ToText();
  }

  std::filesystem::path folder_;
  std::string url_;
  absl::Time start_ = absl::FromUnixSeconds(1'767'225'600);  // 2026-01-01
  absl::Time rerun_at_ = start_ + ledger::kWorkLeaseDefault + absl::Minutes(1);
};

struct CrashCase {
  PayoutStep crash_at;
  bool bank_refuses;
};

void PrintTo(const CrashCase& crash, std::ostream* out) {
  *out << (crash.bank_refuses ? "bank refuses" : "bank pays") << ", crash after "
       << StepName(crash.crash_at);
}

const std::vector<std::string> kEngines = {"sqlite", "mysql", "postgres"};

class PayoutSagaTest : public PayoutSagaFixture, public ::testing::WithParamInterface<std::string> {
 protected:
  std::string EngineOf() const override { return GetParam(); }
};

class PayoutSagaCrashTest
    : public PayoutSagaFixture,
      public ::testing::WithParamInterface<std::tuple<std::string, CrashCase>> {
 protected:
  std::string EngineOf() const override { return std::get<0>(GetParam()); }
};

TEST_P(PayoutSagaCrashTest, RerunAfterACrashFinishesThePayoutOnce) {
  const CrashCase& crash = std::get<1>(GetParam());
  PayoutRequest payout = Payout("payout-7731");
  RunInChildCrashingAfter(crash.crash_at, payout, crash.bank_refuses);
  if (HasFatalFailure()) return;

  absl::StatusOr<PayoutReceipt> receipt = Rerun(payout, crash.bank_refuses);
  ASSERT_TRUE(receipt.ok()) << receipt.status();
  // And once more, as a client that never heard back would: nothing new happens.
  absl::StatusOr<PayoutReceipt> again = Rerun(payout, crash.bank_refuses);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->settlement_id, receipt->settlement_id);
  EXPECT_EQ(again->hold_id, receipt->hold_id);

  ExpectSettledOnce(*receipt, crash.bank_refuses);
  FileBank bank(folder_ / "bank", crash.bank_refuses);
  EXPECT_EQ(bank.Executions(), 1);
  // The bank is asked again only when the crash came between its reply and the stored
  // answer: the runner cannot know the call happened, and the bank's own dedup on the
  // key (the same "<payout>:bank") keeps it to one payout.
  EXPECT_EQ(bank.Requests(), crash.crash_at == PayoutStep::kBankReplied ? 2 : 1);
}

INSTANTIATE_TEST_SUITE_P(
    EveryStep, PayoutSagaCrashTest,
    ::testing::Combine(::testing::ValuesIn(kEngines),
                       ::testing::Values(CrashCase{PayoutStep::kHoldPlaced, false},
                                         CrashCase{PayoutStep::kBankReplied, false},
                                         CrashCase{PayoutStep::kBankAnswerStored, false},
                                         CrashCase{PayoutStep::kSettled, false},
                                         CrashCase{PayoutStep::kHoldPlaced, true},
                                         CrashCase{PayoutStep::kBankReplied, true},
                                         CrashCase{PayoutStep::kBankAnswerStored, true},
                                         CrashCase{PayoutStep::kSettled, true})),
    [](const ::testing::TestParamInfo<std::tuple<std::string, CrashCase>>& info) {
      const CrashCase& crash = std::get<1>(info.param);
      return std::string(crash.bank_refuses ? "BankRefuses" : "BankPays") + "CrashAfter" +
             std::string(StepName(crash.crash_at)) + "_" + std::get<0>(info.param);
    });

TEST_P(PayoutSagaTest, PayoutWithoutCrashCallsTheBankOnce) {
  absl::StatusOr<PayoutReceipt> receipt = Rerun(Payout("payout-1"), /*refuses=*/false);
  ASSERT_TRUE(receipt.ok()) << receipt.status();
  ExpectSettledOnce(*receipt, /*refuses=*/false);
  FileBank bank(folder_ / "bank", false);
  EXPECT_EQ(bank.Requests(), 1);
  EXPECT_EQ(bank.Executions(), 1);
}

TEST_P(PayoutSagaTest, PayoutBeyondTheAvailableBalanceIsDeclinedBeforeTheBank) {
  PayoutRequest payout = Payout("payout-too-big");
  payout.amount = kFunded + 1;
  absl::StatusOr<PayoutReceipt> receipt = Rerun(payout, /*refuses=*/false);

  EXPECT_EQ(receipt.status().code(), absl::StatusCode::kFailedPrecondition) << receipt.status();
  EXPECT_NE(receipt.status().message().find("insufficient_funds"), absl::string_view::npos)
      << receipt.status();
  FileBank bank(folder_ / "bank", false);
  EXPECT_EQ(bank.Requests(), 0);
  Orchestrator reader = OpenOrchestrator(url_, rerun_at_);
  absl::StatusOr<std::vector<ledger::Hold>> holds = reader.ledger->ListHolds("creator", "", 10);
  ASSERT_TRUE(holds.ok());
  EXPECT_TRUE(holds->empty());
}

INSTANTIATE_TEST_SUITE_P(Engines, PayoutSagaTest, ::testing::ValuesIn(kEngines),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// docs/idempotent-work.md shows the saga's code: the part of payout_saga.cc between the
// docs markers must appear there unchanged.
TEST(PayoutSagaDocsTest, IdempotentWorkDocQuotesTheCompiledSaga) {
  std::string source = ReadText(LEDGER_SOURCE_DIR "/docs/payout_saga.cc");
  std::string begin_marker = "// docs:payout-saga-begin\n";
  size_t begin = source.find(begin_marker);
  size_t end = source.find("// docs:payout-saga-end");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  begin += begin_marker.size();
  std::string quoted = source.substr(begin, end - begin);
  ASSERT_GT(quoted.size(), 200u);

  std::string doc = ReadText(LEDGER_SOURCE_DIR "/docs/idempotent-work.md");
  EXPECT_NE(doc.find("```cpp\n" + quoted + "```\n"), std::string::npos)
      << "docs/idempotent-work.md must quote docs/payout_saga.cc's marked part verbatim:\n"
      << quoted;
}

}  // namespace
}  // namespace payout_saga
