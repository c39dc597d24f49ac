// A unit of work holding one submit against a plain Submit, side by side in one run
// (docs/benchmarks.md#unit-of-work): the same transfers between random wallets, fresh
// keys, group commit off on both, alternating the two forms round by round so a drift
// of the machine hits both alike. With --with-insert a third form adds the caller's own
// INSERT to the unit (SQL engines only).
//
//   ledger_unit_of_work_bench --db sqlite:/tmp/uow.db --clients 1,8 --seconds 3 --rounds 3
//   ledger_unit_of_work_bench --db postgresql://... --clients 1,8
//
// Prints one markdown row per form and client count: submits per second (median of the
// rounds, and each round), the ratio of the medians to plain Submit's, and the paired
// ratio: per round, the form's rate over plain Submit's in the same round (the two ran
// seconds apart), its median and range over the rounds. Exit 1 when a submit does not
// commit.
//
// With --interleave the forms do not take turns by the round but by the submit: every
// client sends plain, unit, (unit + insert), plain, ... for --seconds, timing each call,
// so the forms share every moment of a noisy machine; printed per form: the mean
// latency of the round (median of the rounds, and each round) and, per round, its
// mean latency over plain Submit's, with that ratio's median and range. The mean, not
// the median: a submit's latency is bimodal where COMMIT waits for a flush, and the
// mean is what a client's rate pays.
//
//   ledger_unit_of_work_bench --db sqlite:/tmp/uow.db --clients 1,8 --rounds 9 --interleave
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "base/status.h"
#include "engines/open_engine.h"
#include "ledger/ledger.h"
#include "ledger/unit_of_work.h"

namespace {

constexpr int kWallets = 1000;
constexpr ledger::Amount kFunding = 1'000'000'000;
constexpr int kLegsPerFundingPost = 63;

enum class Form { kPlain, kUnit, kUnitWithInsert };

const char* NameOf(Form form) {
  switch (form) {
    case Form::kPlain: return "plain Submit";
    case Form::kUnit: return "Transact { Submit }";
    case Form::kUnitWithInsert: return "Transact { Submit; INSERT }";
  }
  return "?";
}

struct Flags {
  std::string db = "sqlite:/tmp/ledger-unit-of-work-bench.db";
  std::vector<int> clients = {1, 8};
  double seconds = 3;
  int rounds = 3;
  bool with_insert = false;
  bool interleave = false;
};

absl::StatusOr<Flags> ParseFlags(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--with-insert") {
      flags.with_insert = true;
      continue;
    }
    if (flag == "--interleave") {
      flags.interleave = true;
      continue;
    }
    if (i + 1 >= argc) return absl::InvalidArgumentError(absl::StrCat(flag, " needs a value"));
    std::string value = argv[++i];
    if (flag == "--db") {
      flags.db = value;
    } else if (flag == "--clients") {
      flags.clients.clear();
      for (absl::string_view part : absl::StrSplit(value, ',')) {
        int clients = 0;
        if (!absl::SimpleAtoi(part, &clients) || clients < 1 || clients > 64) {
          return absl::InvalidArgumentError("--clients: 1..64, comma-separated");
        }
        flags.clients.push_back(clients);
      }
    } else if (flag == "--seconds") {
      if (!absl::SimpleAtod(value, &flags.seconds) || flags.seconds <= 0 || flags.seconds > 600) {
        return absl::InvalidArgumentError("--seconds: more than 0, at most 600");
      }
    } else if (flag == "--rounds") {
      if (!absl::SimpleAtoi(value, &flags.rounds) || flags.rounds < 1 || flags.rounds > 100) {
        return absl::InvalidArgumentError("--rounds: 1..100");
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag ", flag));
    }
  }
  return flags;
}

class Bench {
 public:
  Bench(ledger::Ledger& book, std::string run) : book_(book), run_(std::move(run)) {}

  absl::Status SetUp(bool with_insert) {
    LEDGER_RETURN_IF_ERROR(book_.DefineAsset({"BENCH", 0}));
    absl::StatusOr<ledger::Account> issuance =
        book_.OpenAccount({.id = "bench-issuance", .asset = "BENCH", .allow_negative = true});
    if (!issuance.ok() && !absl::IsAlreadyExists(issuance.status())) return issuance.status();
    for (int w = 0; w < kWallets; ++w) {
      LEDGER_RETURN_IF_ERROR(book_.OpenAccount({.id = Wallet(w), .asset = "BENCH"}).status());
    }
    for (int first = 0; first < kWallets; first += kLegsPerFundingPost) {
      std::vector<ledger::Posting> postings;
      for (int w = first; w < std::min(kWallets, first + kLegsPerFundingPost); ++w) {
        postings.push_back({Wallet(w), "BENCH", kFunding});
      }
      postings.push_back(
          {"bench-issuance", "BENCH", -kFunding * static_cast<ledger::Amount>(postings.size())});
      LEDGER_ASSIGN_OR_RETURN(
          ledger::Outcome funded,
          book_.Submit({.key = NextKey(), .operation = ledger::Operation::Post(std::move(postings))}));
      if (funded.kind != ledger::OutcomeKind::kCommitted) {
        return absl::InternalError("funding did not commit");
      }
    }
    if (with_insert) {
      LEDGER_RETURN_IF_ERROR(book_.Transact([&](ledger::UnitOfWork& unit) {
        return unit
            .Execute("CREATE TABLE IF NOT EXISTS bench_orders (id VARCHAR(80) PRIMARY KEY,"
                     " amount BIGINT NOT NULL)")
            .status();
      }));
    }
    return absl::OkStatus();
  }

  // Submits per second of `clients` threads for `seconds`.
  absl::StatusOr<double> Phase(Form form, int clients, double seconds) {
    std::atomic<int64_t> done = 0;
    std::atomic<bool> failed = false;
    absl::Status first_failure;
    std::atomic<bool> failure_noted = false;
    const absl::Time start = absl::Now();
    const absl::Time end = start + absl::Seconds(seconds);
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c) {
      threads.emplace_back([&, c] {
        std::mt19937 random(static_cast<unsigned>(c * 7919 + done.load()));
        std::uniform_int_distribution<int> pick(0, kWallets - 1);
        while (!failed.load() && absl::Now() < end) {
          int from = pick(random);
          int to = pick(random);
          if (to == from) to = (to + 1) % kWallets;
          absl::Status status = Once(form, Wallet(from), Wallet(to));
          if (!status.ok()) {
            if (!failure_noted.exchange(true)) first_failure = status;
            failed = true;
            return;
          }
          ++done;
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    if (failed.load()) return first_failure;
    return static_cast<double>(done.load()) / absl::ToDoubleSeconds(absl::Now() - start);
  }

  // Per form, the mean latency (µs) of its submits when `clients` threads send the
  // forms in turn, submit by submit, for `seconds`.
  absl::StatusOr<std::vector<double>> InterleavedPhase(const std::vector<Form>& forms,
                                                       int clients, double seconds) {
    std::atomic<bool> failed = false;
    absl::Status first_failure;
    std::atomic<bool> failure_noted = false;
    const absl::Time end = absl::Now() + absl::Seconds(seconds);
    // [client][form] -> latencies in µs
    std::vector<std::vector<std::vector<double>>> latencies(
        clients, std::vector<std::vector<double>>(forms.size()));
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c) {
      threads.emplace_back([&, c] {
        std::mt19937 random(static_cast<unsigned>(c * 7919 + 17));
        std::uniform_int_distribution<int> pick(0, kWallets - 1);
        for (size_t n = static_cast<size_t>(c); !failed.load() && absl::Now() < end; ++n) {
          const size_t f = n % forms.size();  // clients start on different forms
          int from = pick(random);
          int to = pick(random);
          if (to == from) to = (to + 1) % kWallets;
          const absl::Time start = absl::Now();
          absl::Status status = Once(forms[f], Wallet(from), Wallet(to));
          if (!status.ok()) {
            if (!failure_noted.exchange(true)) first_failure = status;
            failed = true;
            return;
          }
          latencies[c][f].push_back(absl::ToDoubleMicroseconds(absl::Now() - start));
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    if (failed.load()) return first_failure;
    std::vector<double> means;
    for (size_t f = 0; f < forms.size(); ++f) {
      double sum = 0;
      size_t count = 0;
      for (int c = 0; c < clients; ++c) {
        for (double latency : latencies[c][f]) sum += latency;
        count += latencies[c][f].size();
      }
      if (count == 0) return absl::InternalError("a form sent no submit in a round");
      means.push_back(sum / static_cast<double>(count));
    }
    return means;
  }

 private:
  absl::Status Once(Form form, const std::string& from, const std::string& to) {
    ledger::SubmitRequest request{.key = NextKey(),
                                  .operation = ledger::Operation::Transfer(from, to, "BENCH", 1)};
    if (form == Form::kPlain) {
      LEDGER_ASSIGN_OR_RETURN(ledger::Outcome outcome, book_.Submit(request));
      return Committed(outcome);
    }
    return book_.Transact([&](ledger::UnitOfWork& unit) -> absl::Status {
      LEDGER_ASSIGN_OR_RETURN(ledger::Outcome outcome, unit.Submit(request));
      LEDGER_RETURN_IF_ERROR(Committed(outcome));
      if (form == Form::kUnit) return absl::OkStatus();
      return unit
          .Execute(absl::StrCat("INSERT INTO bench_orders (id, amount) VALUES (",
                                unit.Placeholder(1), ", ", unit.Placeholder(2), ")"),
                   {request.key, int64_t{1}})
          .status();
    });
  }

  static absl::Status Committed(const ledger::Outcome& outcome) {
    if (outcome.kind == ledger::OutcomeKind::kCommitted) return absl::OkStatus();
    return absl::InternalError(absl::StrCat("a transfer did not commit: ",
                                            std::string(ledger::OutcomeKindName(outcome.kind)),
                                            " ", outcome.detail, " ", outcome.fault.ToString()));
  }

  std::string Wallet(int w) const { return absl::StrFormat("bench-%s-%04d", run_, w); }
  std::string NextKey() { return absl::StrCat("bench-", run_, "-", next_key_.fetch_add(1)); }

  ledger::Ledger& book_;
  const std::string run_;
  std::atomic<int64_t> next_key_ = 0;
};

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

std::string Range(const std::vector<double>& values) {
  return absl::StrFormat("%.2f to %.2f", *std::min_element(values.begin(), values.end()),
                         *std::max_element(values.begin(), values.end()));
}

// --interleave: the forms take turns submit by submit; latencies.
absl::Status RunInterleaved(const Flags& flags, Bench& bench, const std::vector<Form>& forms,
                            const std::string& engine) {
  std::cout << "| engine | clients | form | mean latency µs (median of " << flags.rounds
            << " rounds) | rounds | latency / plain's: median (range) |\n"
            << "|---|---|---|---|---|---|\n";
  for (int clients : flags.clients) {
    std::vector<std::vector<double>> latencies(forms.size());  // [form][round]
    for (int round = 0; round < flags.rounds; ++round) {
      LEDGER_ASSIGN_OR_RETURN(std::vector<double> means,
                              bench.InterleavedPhase(forms, clients, flags.seconds));
      for (size_t f = 0; f < forms.size(); ++f) latencies[f].push_back(means[f]);
    }
    for (size_t f = 0; f < forms.size(); ++f) {
      std::string each;
      std::vector<double> paired;
      for (size_t round = 0; round < latencies[f].size(); ++round) {
        absl::StrAppend(&each, each.empty() ? "" : ", ",
                        absl::StrFormat("%.0f", latencies[f][round]));
        paired.push_back(latencies[f][round] / latencies[0][round]);
      }
      std::cout << absl::StrFormat("| %s | %d | %s | %.0f | %s | %.2fx (%s) |\n", engine, clients,
                                   NameOf(forms[f]), Median(latencies[f]), each, Median(paired),
                                   Range(paired));
    }
  }
  return absl::OkStatus();
}

absl::Status Run(const Flags& flags) {
  LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<ledger::Engine> engine, ledger::OpenEngine(flags.db));
  LEDGER_ASSIGN_OR_RETURN(ledger::Ledger book, ledger::Ledger::Open(std::move(engine)));
  Bench bench(book, absl::StrCat(getpid(), "-", absl::ToUnixSeconds(absl::Now())));
  LEDGER_RETURN_IF_ERROR(bench.SetUp(flags.with_insert));
  std::vector<Form> forms = {Form::kPlain, Form::kUnit};
  if (flags.with_insert) forms.push_back(Form::kUnitWithInsert);
  if (flags.interleave) {
    return RunInterleaved(flags, bench, forms, std::string(book.engine_name()));
  }
  std::cout << "| engine | clients | form | submits/s (median of " << flags.rounds
            << " rounds) | rounds | vs plain | paired ratio: median (range) |\n"
            << "|---|---|---|---|---|---|---|\n";
  for (int clients : flags.clients) {
    std::vector<std::vector<double>> rates(forms.size());
    for (int round = 0; round < flags.rounds; ++round) {
      for (size_t f = 0; f < forms.size(); ++f) {
        // Alternate the order each round, so neither form always runs first.
        const size_t which = round % 2 == 0 ? f : forms.size() - 1 - f;
        LEDGER_ASSIGN_OR_RETURN(double rate, bench.Phase(forms[which], clients, flags.seconds));
        rates[which].push_back(rate);
      }
    }
    const double plain = Median(rates[0]);
    for (size_t f = 0; f < forms.size(); ++f) {
      std::string each;
      for (double rate : rates[f]) absl::StrAppend(&each, each.empty() ? "" : ", ", absl::StrFormat("%.0f", rate));
      std::vector<double> paired;
      for (size_t round = 0; round < rates[f].size(); ++round) {
        paired.push_back(rates[f][round] / rates[0][round]);
      }
      std::cout << absl::StrFormat("| %s | %d | %s | %.0f | %s | %.2fx | %.2fx (%.2f to %.2f) |\n",
                                   std::string(book.engine_name()), clients, NameOf(forms[f]),
                                   Median(rates[f]), each, Median(rates[f]) / plain,
                                   Median(paired), *std::min_element(paired.begin(), paired.end()),
                                   *std::max_element(paired.begin(), paired.end()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  absl::StatusOr<Flags> flags = ParseFlags(argc, argv);
  if (!flags.ok()) {
    std::cerr << flags.status() << "\n";
    return 2;
  }
  absl::Status status = Run(*flags);
  if (!status.ok()) {
    std::cerr << status << "\n";
    return 1;
  }
  return 0;
}
