// The main() of every GoogleTest executable here, in place of GTest::gtest_main: the
// same, plus one rule. A fatal failure (ASSERT_*, FAIL()) ends the test it happens in,
// also when it happens in a helper the test called: on its own GoogleTest only returns
// from the helper, and the test goes on past its failed precondition (a server fixture
// whose `ledger serve` did not start, then a request through its client, crashed the
// whole executable with SIGSEGV instead of failing one test with the reason).
//
// The mechanism is GoogleTest's own recipe ("Propagating Fatal Failures", listener that
// throws testing::AssertionException; GoogleTest catches it around the test body, SetUp
// and TearDown, the failure already reported). Only on the thread that runs the tests:
// an exception out of a helper thread's function would end the process, so a fatal
// failure there keeps GoogleTest's behaviour (it returns from that function).
#include <thread>

#include "gtest/gtest.h"

namespace {

class FatalFailureEndsTheTest : public ::testing::EmptyTestEventListener {
 public:
  explicit FatalFailureEndsTheTest(std::thread::id test_thread) : test_thread_(test_thread) {}

  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (result.fatally_failed() && std::this_thread::get_id() == test_thread_) {
      throw ::testing::AssertionException(result);
    }
  }

 private:
  const std::thread::id test_thread_;
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Appended last, so the printers and the XML/JSON output see the failure first.
  ::testing::UnitTest::GetInstance()->listeners().Append(
      new FatalFailureEndsTheTest(std::this_thread::get_id()));
  return RUN_ALL_TESTS();
}
