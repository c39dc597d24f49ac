#include "server/tenant_ledgers.h"

#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status.h"
#include "engines/common/database_url.h"
#include "server/api.h"
#include "server/problem.h"
#include "server/query.h"

namespace ledger::server {
namespace {

constexpr size_t kPostgresIdentifierBytesMax = 63;
constexpr size_t kMysqlDatabaseNameBytesMax = 64;
constexpr char kPostgresSchemaDefault[] = "public";

// The query string of `parameters`, "?a=1&b=2", or "" when there are none.
std::string QueryString(const std::vector<std::pair<std::string, std::string>>& parameters) {
  if (parameters.empty()) return "";
  return absl::StrCat("?", absl::StrJoin(parameters, "&", absl::PairFormatter("=")));
}

// `parameters` with `name` set to `value` (replaced where given, else appended).
void SetParameter(std::vector<std::pair<std::string, std::string>>& parameters,
                  const std::string& name, const std::string& value) {
  for (auto& [given, given_value] : parameters) {
    if (given == name) {
      given_value = value;
      return;
    }
  }
  parameters.emplace_back(name, value);
}

std::string SqliteTenantUrl(const DatabaseUrl& url, std::string_view query, std::string_view tenant) {
  absl::string_view path = url.base;
  std::string prefix = absl::StartsWith(path, "sqlite://") ? "sqlite://" : "sqlite:";
  path.remove_prefix(prefix.size());
  const size_t name_begin = path.rfind('/') == absl::string_view::npos ? 0 : path.rfind('/') + 1;
  size_t dot = path.rfind('.');
  if (dot == absl::string_view::npos || dot <= name_begin) dot = path.size();  // no extension
  return absl::StrCat(prefix, path.substr(0, dot), ".", View(tenant), path.substr(dot), View(query));
}

absl::StatusOr<std::string> PostgresTenantUrl(DatabaseUrl url, std::string_view tenant) {
  const std::string schema =
      absl::StrCat(url.Parameter("schema", kPostgresSchemaDefault), "_", View(tenant));
  if (schema.size() > kPostgresIdentifierBytesMax) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tenant ", View(tenant), ": its schema name ", schema, " is longer than PostgreSQL's ",
        kPostgresIdentifierBytesMax, " bytes; use a shorter tenant name or --db schema"));
  }
  SetParameter(url.parameters, "schema", schema);
  return absl::StrCat(url.base, QueryString(url.parameters));
}

bool IsPlainDatabaseName(absl::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  return true;
}

absl::StatusOr<std::string> MysqlTenantUrl(DatabaseUrl url, std::string_view tenant,
                                           TenantUrlFor use) {
  const size_t slash = url.base.rfind('/');
  const size_t at = url.base.rfind('@');
  const std::string database =
      slash == std::string::npos || (at != std::string::npos && slash < at) ? ""
                                                                           : url.base.substr(slash + 1);
  if (!IsPlainDatabaseName(database)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tenant ", View(tenant), ": cannot derive its MySQL database from --db: the database "
        "name must be letters, digits and '_' (mysql://user@host/ledger)"));
  }
  const std::string tenant_database = absl::StrCat(database, "_", View(tenant));
  if (tenant_database.size() > kMysqlDatabaseNameBytesMax) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tenant ", View(tenant), ": its database name ", tenant_database, " is longer than MySQL's ",
        kMysqlDatabaseNameBytesMax, " bytes; use a shorter tenant name or --db database"));
  }
  if (use == TenantUrlFor::kWrites) SetParameter(url.parameters, "create_database", "true");
  return absl::StrCat(url.base.substr(0, slash + 1), tenant_database, QueryString(url.parameters));
}

}  // namespace

absl::StatusOr<std::string> TenantDatabaseUrl(std::string_view database_url, std::string_view tenant,
                                              TenantUrlFor use) {
  if (tenant == kDefaultTenant) return std::string(database_url);
  if (database_url == "memory:" || database_url == "memory") return std::string(database_url);
  LEDGER_ASSIGN_OR_RETURN(DatabaseUrl url, ParseDatabaseUrl(database_url));
  if (url.scheme == "sqlite") {
    return SqliteTenantUrl(url, database_url.substr(url.base.size()), tenant);
  }
  if (url.scheme == "postgres" || url.scheme == "postgresql") return PostgresTenantUrl(url, tenant);
  if (url.scheme == "mysql") return MysqlTenantUrl(url, tenant, use);
  return absl::InvalidArgumentError(absl::StrCat(
      "tenant ", View(tenant), ": cannot derive its ledger from a ", url.scheme, " URL"));
}

absl::StatusOr<std::unique_ptr<TenantLedgers>> TenantLedgers::Create(
    Ledger& default_ledger, const std::set<std::string>& tenants, Options options,
    Metrics& metrics, HoldSweeper::LogEvent log) {
  std::unique_ptr<TenantLedgers> ledgers(
      new TenantLedgers(default_ledger, std::move(options), metrics, std::move(log)));
  for (const std::string& name : tenants) {
    if (name == kDefaultTenant) continue;
    auto tenant = std::make_unique<Tenant>();
    LEDGER_ASSIGN_OR_RETURN(tenant->database_url,
                            TenantDatabaseUrl(ledgers->options_.database_url, name));
    if (!ledgers->options_.read_database_url.empty()) {
      LEDGER_ASSIGN_OR_RETURN(tenant->read_database_url,
                              TenantDatabaseUrl(ledgers->options_.read_database_url, name,
                                                TenantUrlFor::kReads));
    }
    ledgers->tenants_.emplace(name, std::move(tenant));
  }
  return ledgers;
}

TenantLedgers::~TenantLedgers() { StopSweepers(); }

absl::StatusOr<Ledger*> TenantLedgers::For(std::string_view name) {
  if (name == kDefaultTenant) return &default_ledger_;
  auto found = tenants_.find(name);
  if (found == tenants_.end()) {
    return absl::InternalError("a principal names a tenant the API keys do not");
  }
  Tenant& tenant = *found->second;
  if (Ledger* opened = tenant.opened.load(std::memory_order_acquire)) return opened;
  return Open(name, tenant);
}

Ledger* TenantLedgers::OpenedOrNull(std::string_view name) const {
  if (name == kDefaultTenant) return &default_ledger_;
  auto found = tenants_.find(name);
  if (found == tenants_.end()) return nullptr;  // For answers it
  return found->second->opened.load(std::memory_order_acquire);
}

absl::StatusOr<Ledger*> TenantLedgers::Open(std::string_view name, Tenant& tenant) {
  absl::MutexLock lock(&tenant.mutex);
  if (tenant.ledger != nullptr) return tenant.ledger.get();
  absl::StatusOr<std::unique_ptr<Engine>> engine = OpenEngine(tenant.database_url, options_.engine);
  LedgerOptions ledger_options = options_.ledger;
  if (engine.ok() && !tenant.read_database_url.empty()) {
    absl::StatusOr<std::unique_ptr<Engine>> reads =
        OpenReadEngine(tenant.read_database_url, options_.engine);
    if (reads.ok()) {
      ledger_options.read_engine = *std::move(reads);
    } else {
      engine = Annotate(reads.status(), "opening the read database");
    }
  }
  absl::StatusOr<Ledger> ledger =
      engine.ok() ? Ledger::Open(std::shared_ptr<Engine>(*std::move(engine)), std::move(ledger_options))
                  : absl::StatusOr<Ledger>(engine.status());
  if (!ledger.ok()) {
    // The code only: the message may carry database details.
    log_(absl::StrCat("\"event\":\"tenant_open_failed\",\"tenant\":\"", View(name),
                      "\",\"code\":\"", absl::StatusCodeToString(ledger.status().code()), "\""));
    return Annotate(ledger.status(), absl::StrCat("opening tenant ", View(name), "'s ledger"));
  }
  tenant.ledger = std::make_unique<Ledger>(*std::move(ledger));
  if (!sweepers_stopped_.load() && options_.hold_sweep_interval > absl::ZeroDuration()) {
    tenant.sweeper = std::make_unique<HoldSweeper>(*tenant.ledger, options_.hold_sweep_interval,
                                                   metrics_, log_);
  }
  log_(absl::StrCat("\"event\":\"tenant_opened\",\"tenant\":\"", View(name), "\",\"engine\":\"",
                    View(tenant.ledger->engine_name()), "\""));
  tenant.opened.store(tenant.ledger.get(), std::memory_order_release);
  return tenant.ledger.get();
}

void TenantLedgers::StopSweepers() {
  sweepers_stopped_.store(true);
  for (auto& [name, tenant] : tenants_) {
    absl::MutexLock lock(&tenant->mutex);
    if (tenant->sweeper != nullptr) tenant->sweeper->Stop();
  }
}

RouteHandler ForTenant(ApiContext& api, TenantRouteHandler handler) {
  return [&api, handler = std::move(handler)](RequestContext& context) {
    absl::StatusOr<ReadConsistency> consistency = RequestedConsistency(context.request);
    if (!consistency.ok()) return WriteProblem(context.response, ProblemFromStatus(consistency.status()));
    Ledger* ledger = &api.ledger;
    if (api.tenants != nullptr) {
      absl::StatusOr<Ledger*> tenant_ledger = api.tenants->For(context.principal.tenant);
      if (!tenant_ledger.ok()) {
        return WriteProblem(context.response, ProblemFromStatus(tenant_ledger.status()));
      }
      ledger = *tenant_ledger;
    }
    ApiContext request_api{*ledger, api.options, api.metrics, api.stopping, api.tenants, *consistency};
    handler(context, request_api);
  };
}

LoopRouteHandler ForOpenTenant(ApiContext& api, TenantLoopRouteHandler handler) {
  return [&api, handler = std::move(handler)](RequestContext& context) {
    Ledger* ledger = &api.ledger;
    if (api.tenants != nullptr) {
      ledger = api.tenants->OpenedOrNull(context.principal.tenant);
      if (ledger == nullptr) return false;  // opened (and migrated) on a worker, by ForTenant
    }
    absl::StatusOr<ReadConsistency> consistency = RequestedConsistency(context.request);
    if (!consistency.ok()) {
      WriteProblem(context.response, ProblemFromStatus(consistency.status()));
      return true;
    }
    ApiContext request_api{*ledger, api.options, api.metrics, api.stopping, api.tenants, *consistency};
    return handler(context, request_api);
  };
}

}  // namespace ledger::server
