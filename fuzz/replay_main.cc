// Runs a libFuzzer target's function over saved inputs without libFuzzer, so the GCC
// build replays the corpus and every regression input in the ordinary test run:
//
//   fuzz_replay_operation_json fuzz/corpus/operation_json fuzz/regressions/operation_json
//
// Each argument is a file or a folder of files. A broken invariant aborts (the target
// calls abort()), which fails the test.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<std::filesystem::path> InputsUnder(const std::filesystem::path& path) {
  std::vector<std::filesystem::path> inputs;
  if (std::filesystem::is_regular_file(path)) return {path};
  if (!std::filesystem::is_directory(path)) return inputs;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(path)) {
    if (entry.is_regular_file() && entry.path().filename().string().front() != '.') {
      inputs.push_back(entry.path());
    }
  }
  return inputs;
}

}  // namespace

int main(int argc, char** argv) {
  int replayed = 0;
  for (int i = 1; i < argc; ++i) {
    for (const std::filesystem::path& input : InputsUnder(argv[i])) {
      std::ifstream file(input, std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
      std::cout << "replaying " << input.string() << std::endl;
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++replayed;
    }
  }
  std::cout << replayed << " inputs replayed, every invariant held" << std::endl;
  return replayed > 0 ? 0 : 1;
}
