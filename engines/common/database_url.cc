#include "engines/common/database_url.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "base/status.h"

namespace ledger {
namespace {

constexpr absl::string_view kHidden = "***";
constexpr absl::string_view kPasswordName = "password";

// Where the credentials of scheme://user:password@host... are, if anywhere. The last
// '@' ends them: ParseDatabaseUrl refuses a URL with more than one, and the redaction
// then still hides the widest span a malformed URL could mean.
struct Credentials {
  size_t user_begin = absl::string_view::npos;
  size_t password_begin = absl::string_view::npos;  // npos: no password
  size_t end = absl::string_view::npos;             // the '@'
};

Credentials FindCredentials(absl::string_view url) {
  Credentials credentials;
  const size_t scheme_end = url.find("://");
  if (scheme_end == absl::string_view::npos) return credentials;
  const size_t user_begin = scheme_end + 3;
  const size_t at = url.rfind('@');
  if (at == absl::string_view::npos || at < user_begin) return credentials;
  credentials.user_begin = user_begin;
  credentials.end = at;
  const size_t colon = url.find(':', user_begin);
  if (colon < at) credentials.password_begin = colon + 1;
  return credentials;
}

size_t QueryBegin(absl::string_view url) {
  const Credentials credentials = FindCredentials(url);
  const size_t from = credentials.end == absl::string_view::npos ? 0 : credentials.end;
  return url.find('?', from);
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Percent-decodes `text`, leaving malformed escapes as written.
std::string PercentDecoded(absl::string_view text) {
  std::string decoded;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && HexValue(text[i + 1]) >= 0 &&
        HexValue(text[i + 2]) >= 0) {
      decoded.push_back(static_cast<char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2])));
      i += 2;
    } else {
      decoded.push_back(text[i]);
    }
  }
  return decoded;
}

// The value span of a libpq key=value "password" keyword: [begin, end) in `dsn`.
std::pair<size_t, size_t> KeywordPasswordSpan(absl::string_view dsn, size_t from) {
  for (size_t at = dsn.find(kPasswordName, from); at != absl::string_view::npos;
       at = dsn.find(kPasswordName, at + 1)) {
    const bool word_start = at == 0 || std::isspace(static_cast<unsigned char>(dsn[at - 1]));
    size_t i = at + kPasswordName.size();
    while (i < dsn.size() && dsn[i] == ' ') ++i;
    if (!word_start || i >= dsn.size() || dsn[i] != '=') continue;
    ++i;
    while (i < dsn.size() && dsn[i] == ' ') ++i;
    const size_t begin = i;
    if (i < dsn.size() && dsn[i] == '\'') {  // quoted: backslash escapes, ends at a quote
      for (++i; i < dsn.size() && dsn[i] != '\''; ++i) {
        if (dsn[i] == '\\') ++i;
      }
      return {begin, std::min(i + 1, dsn.size())};
    }
    while (i < dsn.size() && !std::isspace(static_cast<unsigned char>(dsn[i]))) ++i;
    return {begin, i};
  }
  return {absl::string_view::npos, absl::string_view::npos};
}

using Span = std::pair<size_t, size_t>;  // [begin, end) in the URL

// Where every password `url` carries is written, in order.
std::vector<Span> PasswordSpans(absl::string_view url) {
  std::vector<Span> spans;
  const Credentials credentials = FindCredentials(url);
  if (credentials.password_begin != absl::string_view::npos) {
    spans.emplace_back(credentials.password_begin, credentials.end);
  }
  const size_t query = QueryBegin(url);
  if (query != absl::string_view::npos) {
    size_t begin = query + 1;
    for (absl::string_view parameter : absl::StrSplit(url.substr(query + 1), '&')) {
      if (absl::StartsWith(parameter, "password=")) {
        spans.emplace_back(begin + kPasswordName.size() + 1, begin + parameter.size());
      }
      begin += parameter.size() + 1;
    }
  }
  if (url.find("://") == absl::string_view::npos) {  // a libpq key=value string
    for (Span span = KeywordPasswordSpan(url, 0); span.first != absl::string_view::npos;
         span = KeywordPasswordSpan(url, span.second)) {
      spans.push_back(span);
    }
  }
  std::sort(spans.begin(), spans.end());
  return spans;
}

// A file path follows "sqlite://", not an authority: it may hold '@' and '/'.
bool HasAuthority(absl::string_view url, absl::string_view scheme) {
  return scheme != "sqlite" && url.find("://") != absl::string_view::npos;
}

// InvalidArgument unless the credentials of `url` are unambiguous: one '@' at most
// after "scheme://" (anywhere, the query included) and no '/' before it. A driver reads
// a raw '@' or '/' of a password as the end of the credentials and the rest as the host,
// the port or the database, which its errors then print. The message names the
// character to encode and never shows any part of the URL.
absl::Status CheckAuthority(absl::string_view url, absl::string_view scheme) {
  if (!HasAuthority(url, scheme)) return absl::OkStatus();
  const size_t user_begin = url.find("://") + 3;
  const size_t at = url.find('@', user_begin);
  if (at == absl::string_view::npos) return absl::OkStatus();
  if (url.find('@', at + 1) != absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        scheme, " URL: more than one '@' after \"", scheme,
        "://\"; write an '@' inside the user name, the password or any other part "
        "percent-encoded as %40"));
  }
  if (url.substr(user_begin, at - user_begin).find('/') != absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        scheme, " URL: a '/' before the '@'; write a '/' inside the user name or the "
        "password percent-encoded as %2F"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string DatabaseUrl::Parameter(std::string_view name, std::string_view fallback) const {
  for (const auto& [parameter, value] : parameters) {
    if (parameter == name) return value;
  }
  return std::string(fallback);
}

absl::StatusOr<DatabaseUrl> ParseDatabaseUrl(std::string_view url_text) {
  const absl::string_view url = View(url_text);
  DatabaseUrl parsed;
  parsed.scheme = std::string(url.substr(0, std::min(url.find(':'), url.size())));
  LEDGER_RETURN_IF_ERROR(CheckAuthority(url, parsed.scheme));
  const size_t query = QueryBegin(url);
  parsed.base = std::string(url.substr(0, query));
  if (query == absl::string_view::npos) return parsed;
  for (absl::string_view parameter : absl::StrSplit(url.substr(query + 1), '&', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> name_value =
        absl::StrSplit(parameter, absl::MaxSplits('=', 1));
    if (name_value.first.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(View(parsed.scheme), " URL: a query parameter has no name"));
    }
    if (name_value.first != kPasswordName &&
        parsed.Parameter(std::string(name_value.first), "\x01") != "\x01") {
      return absl::InvalidArgumentError(absl::StrCat(View(parsed.scheme), " URL: parameter \"",
                                                     name_value.first, "\" given twice"));
    }
    parsed.parameters.emplace_back(name_value.first, name_value.second);
  }
  return parsed;
}

absl::Status CheckParameters(const DatabaseUrl& url, std::string_view engine,
                             const std::vector<std::string_view>& accepted) {
  for (const auto& [name, value] : url.parameters) {
    if (std::find(accepted.begin(), accepted.end(), name) != accepted.end()) continue;
    std::string known = accepted.empty() ? "none"
                                         : absl::StrJoin(accepted, ", ", [](std::string* out, std::string_view name) {
                                             out->append(name);
                                           });
    return absl::InvalidArgumentError(absl::StrCat(View(engine), " URL: unknown parameter \"",
                                                   name, "\" (accepted: ", known, ")"));
  }
  return absl::OkStatus();
}

absl::Status ValidateSchemaName(std::string_view engine, std::string_view schema) {
  bool valid = !schema.empty() && schema.size() <= kSchemaNameBytesMax &&
               !(schema[0] >= '0' && schema[0] <= '9') && schema.substr(0, 3) != "pg_";
  for (char c : schema) {
    valid = valid && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
  }
  if (valid) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      View(engine), " URL: schema \"", View(schema.substr(0, kSchemaNameBytesMax + 1)),
      "\" must be 1 to ", kSchemaNameBytesMax,
      " characters: lower-case letters, digits and '_', not beginning with a digit or pg_"));
}

std::string RedactDatabaseUrl(std::string_view url_text) {
  const absl::string_view url = View(url_text);
  std::string redacted;
  size_t copied = 0;
  for (const auto& [begin, end] : PasswordSpans(url)) {
    if (begin < copied) continue;  // inside a span already hidden
    absl::StrAppend(&redacted, url.substr(copied, begin - copied), kHidden);
    copied = end;
  }
  absl::StrAppend(&redacted, url.substr(copied));
  return redacted;
}

namespace {

absl::Mutex hidden_url_mutex(absl::kConstInit);
// Never destroyed: used at exit.
std::vector<std::string>* hidden_urls ABSL_GUARDED_BY(hidden_url_mutex) = nullptr;

}  // namespace

void HidePasswordOf(std::string_view url) {
  absl::MutexLock lock(&hidden_url_mutex);
  if (hidden_urls == nullptr) hidden_urls = new std::vector<std::string>;
  if (std::find(hidden_urls->begin(), hidden_urls->end(), url) == hidden_urls->end()) {
    hidden_urls->emplace_back(url);
  }
}

absl::Status WithoutHiddenPassword(const absl::Status& status) {
  absl::MutexLock lock(&hidden_url_mutex);
  if (hidden_urls == nullptr) return status;
  absl::Status redacted = status;
  for (const std::string& url : *hidden_urls) {
    if (!url.empty()) redacted = RedactPasswordInStatus(redacted, url);
  }
  return redacted;
}

absl::Status RedactPasswordInStatus(const absl::Status& status, std::string_view url_text) {
  const absl::string_view url = View(url_text);
  if (status.ok()) return status;
  std::string message(status.message());
  absl::StrReplaceAll({{url, RedactDatabaseUrl(url_text)}}, &message);
  for (const auto& [begin, end] : PasswordSpans(url)) {
    const absl::string_view written = url.substr(begin, end - begin);
    for (const std::string& form : {std::string(written), PercentDecoded(written)}) {
      if (!form.empty()) absl::StrReplaceAll({{form, kHidden}}, &message);
    }
  }
  absl::Status redacted(status.code(), message);
  status.ForEachPayload([&redacted](absl::string_view type_url, const absl::Cord& payload) {
    redacted.SetPayload(type_url, payload);
  });
  return redacted;
}

}  // namespace ledger
