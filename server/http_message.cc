#include "server/http_message.h"

#include "absl/strings/match.h"

namespace ledger::server {
namespace {

bool SameName(std::string_view a, std::string_view b) {
  return absl::EqualsIgnoreCase(absl::string_view(a.data(), a.size()),
                                absl::string_view(b.data(), b.size()));
}

const std::string* Find(const HttpFields& fields, std::string_view name) {
  for (const auto& [field, value] : fields) {
    if (SameName(field, name)) return &value;
  }
  return nullptr;
}

size_t Count(const HttpFields& fields, std::string_view name) {
  size_t count = 0;
  for (const auto& [field, value] : fields) count += SameName(field, name) ? 1 : 0;
  return count;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decodes `text`; '+' becomes a space when `plus_is_space` (query strings).
std::optional<std::string> Decode(std::string_view text, bool plus_is_space) {
  std::string decoded;
  decoded.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%') {
      if (i + 2 >= text.size()) return std::nullopt;
      int high = HexValue(text[i + 1]);
      int low = HexValue(text[i + 2]);
      if (high < 0 || low < 0) return std::nullopt;
      decoded += static_cast<char>(high * 16 + low);
      i += 2;
    } else if (text[i] == '+' && plus_is_space) {
      decoded += ' ';
    } else {
      decoded += text[i];
    }
  }
  return decoded;
}

}  // namespace

std::string HttpRequest::get_header_value(std::string_view name) const {
  const std::string* value = Find(headers, name);
  return value == nullptr ? std::string() : *value;
}

size_t HttpRequest::get_header_value_count(std::string_view name) const { return Count(headers, name); }

bool HttpRequest::has_header(std::string_view name) const { return Find(headers, name) != nullptr; }

std::string HttpRequest::get_param_value(std::string_view name) const {
  for (const auto& [param, value] : params) {
    if (param == name) return value;
  }
  return std::string();
}

bool HttpRequest::has_param(std::string_view name) const {
  for (const auto& [param, value] : params) {
    if (param == name) return true;
  }
  return false;
}

bool HttpRequest::SplitTarget() {
  std::string_view whole = target;
  size_t question = whole.find('?');
  std::optional<std::string> decoded_path = Decode(whole.substr(0, question), /*plus_is_space=*/false);
  if (!decoded_path.has_value()) return false;
  path = *std::move(decoded_path);
  params.clear();
  if (question == std::string_view::npos) return true;
  std::string_view query = whole.substr(question + 1);
  while (!query.empty()) {
    size_t ampersand = query.find('&');
    std::string_view pair = query.substr(0, ampersand);
    query = ampersand == std::string_view::npos ? std::string_view() : query.substr(ampersand + 1);
    if (pair.empty()) continue;
    size_t equals = pair.find('=');
    std::optional<std::string> name = Decode(pair.substr(0, equals), /*plus_is_space=*/true);
    std::optional<std::string> value =
        Decode(equals == std::string_view::npos ? std::string_view() : pair.substr(equals + 1),
               /*plus_is_space=*/true);
    if (!name.has_value() || !value.has_value()) return false;
    params.emplace_back(*std::move(name), *std::move(value));
  }
  return true;
}

void HttpResponse::set_header(std::string_view name, std::string value) {
  for (auto& [field, existing] : headers) {
    if (SameName(field, name)) {
      existing = std::move(value);
      return;
    }
  }
  headers.emplace_back(std::string(name), std::move(value));
}

void HttpResponse::set_content(std::string content, std::string_view type) {
  body = std::move(content);
  content_type = std::string(type);
}

std::string HttpResponse::get_header_value(std::string_view name) const {
  const std::string* value = Find(headers, name);
  return value == nullptr ? std::string() : *value;
}

size_t HttpResponse::get_header_value_count(std::string_view name) const { return Count(headers, name); }

bool HttpResponse::has_header(std::string_view name) const { return Find(headers, name) != nullptr; }

}  // namespace ledger::server
