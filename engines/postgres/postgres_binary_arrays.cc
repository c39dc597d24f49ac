#include "engines/postgres/postgres_binary_arrays.h"

#include <endian.h>

#include <array>
#include <cstddef>
#include <cstring>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/check.h"

namespace ledger::postgres_internal {
namespace {

// A length on the wire is an int32; -1 marks a NULL element.
constexpr int64_t kWireLengthMax = std::numeric_limits<int32_t>::max();
constexpr int32_t kNullLength = -1;

// Big endian into `out` (a push_back per byte was a tenth of a submit's client
// instructions, docs/benchmarks.md).
template <typename Unsigned>
void PutBigEndian(char* out, Unsigned bits) {
  for (size_t index = 0; index < sizeof(Unsigned); ++index) {
    out[index] = static_cast<char>(bits >> (8 * (sizeof(Unsigned) - 1 - index)));
  }
}

// Int32s appended in one call: each std::string::append is a call of its own, which
// made most of an element's cost (docs/benchmarks.md, "The binary arrays' appends").
template <size_t kCount>
void AppendInt32s(std::string& bytes, const std::array<int32_t, kCount>& values) {
  char buffer[4 * kCount];
  for (size_t index = 0; index < kCount; ++index) {
    PutBigEndian(buffer + 4 * index, static_cast<uint32_t>(values[index]));
  }
  bytes.append(buffer, sizeof(buffer));
}

// Where the header keeps what Finish completes: the has-nulls flag and the dimension's
// length.
constexpr size_t kHasNullsOffset = 4;
constexpr size_t kLengthOffset = 12;
// What a writer reserves: a small array's bytes need no second allocation.
constexpr size_t kReservedBytes = 96;

void PutInt32(std::string& bytes, size_t offset, int32_t value) {
  PutBigEndian(bytes.data() + offset, static_cast<uint32_t>(value));
}

// Read at once (a byte at a time was most of ForEachElement's instructions).
int32_t ReadInt32(std::string_view bytes, size_t offset) {
  LEDGER_CHECK(offset + 4 <= bytes.size())
      << "an array's bytes end at " << bytes.size() << ", inside the int32 at " << offset;
  uint32_t big_endian = 0;
  std::memcpy(&big_endian, bytes.data() + offset, sizeof(big_endian));
  return static_cast<int32_t>(be32toh(big_endian));
}

void Add(BinaryArrayWriter& writer, const std::string& value) { writer.AddText(value); }
void Add(BinaryArrayWriter& writer, const std::optional<std::string>& value) {
  writer.AddNullableText(value);
}
void Add(BinaryArrayWriter& writer, int64_t value) { writer.AddInteger(value); }
void Add(BinaryArrayWriter& writer, const std::optional<int64_t>& value) {
  writer.AddNullableInteger(value);
}

template <typename T>
BinaryArray Encode(ArrayElement element, const std::vector<T>& values) {
  BinaryArrayWriter writer(element);
  for (const T& value : values) Add(writer, value);
  return std::move(writer).Finish();
}

}  // namespace

BinaryArrayWriter::BinaryArrayWriter(ArrayElement element) : element_(element) {}

void BinaryArrayWriter::StartElement() {
  ++length_;
  if (length_ > 1) return;
  // The header, on the first element only: an array that stays empty (most of a
  // transfer's write parameters) allocates nothing.
  bytes_.reserve(kReservedBytes);
  // One dimension, the has-nulls flag and the length (both set by Finish), the lower bound.
  AppendInt32s<5>(bytes_, {1, 0, static_cast<int32_t>(element_), 0, 1});
}

void BinaryArrayWriter::AddText(std::string_view value) {
  LEDGER_CHECK(element_ == ArrayElement::kText)
      << "a text element in an array of " << ArrayElementName(element_);
  LEDGER_CHECK(static_cast<int64_t>(value.size()) <= kWireLengthMax)
      << "a text element of " << value.size() << " bytes does not fit the wire's int32 length";
  StartElement();
  AppendInt32s<1>(bytes_, {static_cast<int32_t>(value.size())});
  bytes_.append(value);
}

void BinaryArrayWriter::AddInteger(int64_t value) {
  StartElement();
  if (element_ == ArrayElement::kInteger) {
    LEDGER_CHECK(value >= std::numeric_limits<int32_t>::min() &&
                 value <= std::numeric_limits<int32_t>::max())
        << value << " does not fit an integer[] element";
    AppendInt32s<2>(bytes_, {4, static_cast<int32_t>(value)});
  } else {
    LEDGER_CHECK(element_ == ArrayElement::kBigint)
        << "an integer element in an array of " << ArrayElementName(element_);
    char element[12];  // the length, then the value
    PutBigEndian(element, static_cast<uint32_t>(8));
    PutBigEndian(element + 4, static_cast<uint64_t>(value));
    bytes_.append(element, sizeof(element));
  }
}

void BinaryArrayWriter::AddNull() {
  StartElement();
  AppendInt32s<1>(bytes_, {kNullLength});
  has_nulls_ = true;
}

BinaryArray BinaryArrayWriter::Finish() && {
  LEDGER_CHECK(static_cast<int64_t>(length_) <= kWireLengthMax)
      << "an array of " << length_ << " elements does not fit the wire's int32 length";
  if (length_ == 0) {
    // array_send's '{}': no dimension, so no length or bound.
    AppendInt32s<3>(bytes_, {0, 0, static_cast<int32_t>(element_)});
  } else {
    PutInt32(bytes_, kHasNullsOffset, has_nulls_ ? 1 : 0);
    PutInt32(bytes_, kLengthOffset, static_cast<int32_t>(length_));
  }
  return {.element = element_, .length = length_, .bytes = std::move(bytes_)};
}

void ForEachElement(const BinaryArray& array,
                    absl::FunctionRef<void(std::optional<std::string_view>)> visit) {
  const std::string_view bytes = array.bytes;
  const int32_t dimensions = ReadInt32(bytes, 0);
  LEDGER_CHECK(ReadInt32(bytes, 8) == static_cast<int32_t>(array.element))
      << "an array of " << ArrayElementName(array.element) << " whose bytes name type "
      << ReadInt32(bytes, 8);
  if (array.length == 0) {
    LEDGER_CHECK(dimensions == 0 && bytes.size() == 12) << "an empty array of dimensions";
    return;
  }
  LEDGER_CHECK(dimensions == 1 && ReadInt32(bytes, kLengthOffset) ==
                                      static_cast<int64_t>(array.length))
      << "an array of " << array.length << " elements whose bytes say otherwise";
  size_t offset = 20;  // past the header and the dimension's length and lower bound
  for (size_t index = 0; index < array.length; ++index) {
    const int32_t length = ReadInt32(bytes, offset);
    offset += 4;
    if (length == kNullLength) {
      visit(std::nullopt);
      continue;
    }
    LEDGER_CHECK(length >= 0 && offset + static_cast<size_t>(length) <= bytes.size())
        << "element " << index << " of " << length << " bytes overruns the array's "
        << bytes.size();
    visit(bytes.substr(offset, static_cast<size_t>(length)));
    offset += static_cast<size_t>(length);
  }
  LEDGER_CHECK(offset == bytes.size())
      << "an array's bytes run " << bytes.size() - offset << " past its last element";
}

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
  return Encode(ArrayElement::kInteger, values);
}

}  // namespace ledger::postgres_internal
