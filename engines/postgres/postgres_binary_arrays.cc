#include "engines/postgres/postgres_binary_arrays.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "base/check.h"

namespace ledger::postgres_internal {
namespace {

// A length on the wire is an int32; -1 marks a NULL element.
constexpr int64_t kWireLengthMax = std::numeric_limits<int32_t>::max();
constexpr int32_t kNullLength = -1;
// ndim, has-nulls and element type, then one dimension's length and lower bound.
constexpr size_t kHeaderBytes = 5 * 4;

void AppendInt32(std::string& bytes, int32_t value) {
  const auto bits = static_cast<uint32_t>(value);
  for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<char>(bits >> shift));
}

void AppendInt64(std::string& bytes, int64_t value) {
  const auto bits = static_cast<uint64_t>(value);
  for (int shift = 56; shift >= 0; shift -= 8) bytes.push_back(static_cast<char>(bits >> shift));
}

// Each element as the wire carries it: its length, then its binary form.
void AppendElement(std::string& bytes, const std::string& value) {
  LEDGER_CHECK(static_cast<int64_t>(value.size()) <= kWireLengthMax)
      << "a text element of " << value.size() << " bytes does not fit the wire's int32 length";
  AppendInt32(bytes, static_cast<int32_t>(value.size()));
  bytes.append(value);
}
void AppendElement(std::string& bytes, int64_t value) {
  AppendInt32(bytes, 8);
  AppendInt64(bytes, value);
}
void AppendElement(std::string& bytes, int32_t value) {
  AppendInt32(bytes, 4);
  AppendInt32(bytes, value);
}
template <typename T>
void AppendElement(std::string& bytes, const std::optional<T>& value) {
  if (value.has_value()) {
    AppendElement(bytes, *value);
  } else {
    AppendInt32(bytes, kNullLength);
  }
}

// What an element takes on the wire, its length included: what to reserve.
size_t WireSize(const std::string& value) { return 4 + value.size(); }
size_t WireSize(int64_t) { return 4 + 8; }
size_t WireSize(int32_t) { return 4 + 4; }
template <typename T>
size_t WireSize(const std::optional<T>& value) {
  return value.has_value() ? WireSize(*value) : 4;
}

template <typename T>
bool IsNull(const T&) {
  return false;
}
template <typename T>
bool IsNull(const std::optional<T>& value) {
  return !value.has_value();
}

// array_send's form of a one-dimensional array (none when empty, as array_send sends
// '{}'), with its has-nulls flag set as array_send sets it.
template <typename T>
BinaryArray Encode(ArrayElement element, const std::vector<T>& values) {
  LEDGER_CHECK(static_cast<int64_t>(values.size()) <= kWireLengthMax)
      << "an array of " << values.size() << " elements does not fit the wire's int32 length";
  size_t size = kHeaderBytes;
  bool has_nulls = false;
  for (const T& value : values) {
    size += WireSize(value);
    has_nulls = has_nulls || IsNull(value);
  }
  BinaryArray array{.element = element, .length = values.size()};
  array.bytes.reserve(size);
  AppendInt32(array.bytes, values.empty() ? 0 : 1);
  AppendInt32(array.bytes, has_nulls ? 1 : 0);
  AppendInt32(array.bytes, static_cast<int32_t>(element));
  if (!values.empty()) {
    AppendInt32(array.bytes, static_cast<int32_t>(values.size()));
    AppendInt32(array.bytes, 1);  // the lower bound
  }
  for (const T& value : values) AppendElement(array.bytes, value);
  LEDGER_CHECK(array.bytes.size() == (values.empty() ? kHeaderBytes - 8 : size))
      << "encoded " << array.bytes.size() << " bytes of an array sized at " << size;
  return array;
}

}  // namespace

const char* ArrayElementName(ArrayElement element) {
  switch (element) {
    case ArrayElement::kBigint: return "bigint";
    case ArrayElement::kInteger: return "integer";
    case ArrayElement::kText: return "text";
  }
  LEDGER_CHECK(false) << "array element type " << static_cast<uint32_t>(element);
  return "";
}

BinaryArray TextArray(const std::vector<std::string>& values) {
  return Encode(ArrayElement::kText, values);
}

BinaryArray NullableTextArray(const std::vector<std::optional<std::string>>& values) {
  return Encode(ArrayElement::kText, values);
}

BinaryArray BigintArray(const std::vector<int64_t>& values) {
  return Encode(ArrayElement::kBigint, values);
}

BinaryArray NullableBigintArray(const std::vector<std::optional<int64_t>>& values) {
  return Encode(ArrayElement::kBigint, values);
}

BinaryArray IntegerArray(const std::vector<int64_t>& values) {
  std::vector<int32_t> narrowed;
  narrowed.reserve(values.size());
  for (int64_t value : values) {
    LEDGER_CHECK(value >= std::numeric_limits<int32_t>::min() &&
                 value <= std::numeric_limits<int32_t>::max())
        << value << " does not fit an integer[] element";
    narrowed.push_back(static_cast<int32_t>(value));
  }
  return Encode(ArrayElement::kInteger, narrowed);
}

}  // namespace ledger::postgres_internal
