#include "engines/mysql/mysql_json_rows.h"

#include "absl/strings/str_cat.h"

namespace ledger::mysql_internal {

void AppendJsonString(std::string& out, std::string_view text) {
  constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (byte < 0x20) {
      out.append("\\u00");
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0xf]);
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
}

void AppendJsonRow(std::string& array, std::initializer_list<JsonValue> values) {
  array.append(array.empty() ? "[[" : ",[");
  bool first = true;
  for (const JsonValue& value : values) {
    if (!first) array.push_back(',');
    first = false;
    if (const int64_t* number = std::get_if<int64_t>(&value)) {
      absl::StrAppend(&array, *number);
    } else if (const std::string_view* text = std::get_if<std::string_view>(&value)) {
      AppendJsonString(array, *text);
    } else {
      array.append("null");
    }
  }
  array.push_back(']');
}

std::string JsonStringArray(const std::vector<std::string>& texts) {
  std::string array = "[";
  for (size_t i = 0; i < texts.size(); ++i) {
    if (i > 0) array.push_back(',');
    AppendJsonString(array, texts[i]);
  }
  array.push_back(']');
  return array;
}

}  // namespace ledger::mysql_internal
