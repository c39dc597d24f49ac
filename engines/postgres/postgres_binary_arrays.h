// Array parameters in PostgreSQL's binary format, for the pipeline (postgres_pipeline.h):
// the bytes array_recv reads, so the server parses no text literal (array_in was 4.6% of
// its CPU per submit at 8 clients, docs/benchmarks.md, "Binary array parameters").
//
// The wire format (array_send): int32 number of dimensions (0 for an empty array, else
// 1), int32 has-nulls flag, int32 element type OID; per dimension int32 length and int32
// lower bound (1); then per element int32 length (-1: NULL) and the element's binary
// form (text: its bytes; int8 / int4: big endian). All integers are big endian.
//
// array_recv refuses an element type other than the parameter's declared one, so each
// array carries its element type; the statement's SQL casts every array parameter
// explicitly ("$3::text[]"), and the write statement checks that its casts and the
// arrays' types agree (postgres_statements.h, WriteParameterElement).
//
//   BinaryArray ids = TextArray({"t1", "t2"});
//   send ids.bytes with paramFormats = 1 for "$1::text[]"
//
// Or element by element, straight from the rows that hold the values (no vector of
// copies first: the write's 30-odd arrays per submit, docs/benchmarks.md):
//
//   BinaryArrayWriter ids(ArrayElement::kText);
//   for (const Transaction& transaction : transactions) ids.AddText(transaction.id);
//   BinaryArray array = std::move(ids).Finish();
//
// And read back element by element, for a statement that takes each element as a scalar
// parameter of its own ("$4::bigint", postgres_statements.h, WriteShape):
//
//   ForEachElement(array, [&](std::optional<std::string_view> element) { ... });
//
// Internal to engines/postgres. Thread-safe: pure functions.
#ifndef LEDGER_ENGINES_POSTGRES_POSTGRES_BINARY_ARRAYS_H_
#define LEDGER_ENGINES_POSTGRES_POSTGRES_BINARY_ARRAYS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"

namespace ledger::postgres_internal {

// The element types the engine sends, by their OIDs (pg_type.oid, fixed by PostgreSQL).
enum class ArrayElement : uint32_t {
  kBigint = 20,   // int8
  kInteger = 23,  // int4
  kText = 25,
};

// The type's name as the SQL casts to it ("bigint" in "$2::bigint[]").
const char* ArrayElementName(ArrayElement element);

// One array parameter, encoded.
struct BinaryArray {
  ArrayElement element = ArrayElement::kText;
  size_t length = 0;  // its elements, NULLs included
  std::string bytes;  // array_send's form
};

// One array built element by element: array_send's form, its header written with the
// first element and completed by Finish. The functions below are this over a vector.
class BinaryArrayWriter {
 public:
  explicit BinaryArrayWriter(ArrayElement element);
  // Checked: the element type is text.
  void AddText(std::string_view value);
  // Checked: the element type is bigint, or integer and the value fits an int4.
  void AddInteger(int64_t value);
  void AddNull();
  void AddNullableText(const std::optional<std::string>& value) {
    value.has_value() ? AddText(*value) : AddNull();
  }
  void AddNullableInteger(const std::optional<int64_t>& value) {
    value.has_value() ? AddInteger(*value) : AddNull();
  }
  BinaryArray Finish() &&;

 private:
  // Counts the element about to be appended; the first writes the header.
  void StartElement();

  ArrayElement element_;
  size_t length_ = 0;
  bool has_nulls_ = false;
  std::string bytes_;
};

// Visits the elements of `array` in order, each in its binary form (the text's bytes, an
// int8's or int4's big-endian bytes; nullopt for a NULL element): views into
// array.bytes, no copies. Checked: the bytes are array_send's form of array.length
// elements of array.element, in one dimension.
void ForEachElement(const BinaryArray& array,
                    absl::FunctionRef<void(std::optional<std::string_view>)> visit);

BinaryArray TextArray(const std::vector<std::string>& values);
BinaryArray NullableTextArray(const std::vector<std::optional<std::string>>& values);
BinaryArray BigintArray(const std::vector<int64_t>& values);
BinaryArray NullableBigintArray(const std::vector<std::optional<int64_t>>& values);
// Checked: every value fits an int4.
BinaryArray IntegerArray(const std::vector<int64_t>& values);

}  // namespace ledger::postgres_internal

#endif  // LEDGER_ENGINES_POSTGRES_POSTGRES_BINARY_ARRAYS_H_
