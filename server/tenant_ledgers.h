// Each tenant's own ledger in `ledger serve` (docs/http.md "Tenants"): what keeps one
// tenant's key from seeing or moving another tenant's money.
//
//   TenantLedgers tenants(default_ledger, {"acme", "globex"}, options, metrics, LogEvent);
//   LEDGER_ASSIGN_OR_RETURN(Ledger* ledger, tenants.For("acme"));  // opened on first use
//
// Every tenant named in the API keys file gets a ledger of its own, derived from --db
// (TenantDatabaseUrl): its own SQLite file, PostgreSQL schema or MySQL/MariaDB database,
// so its accounts, assets, transactions, holds, events and idempotency keys are out of
// every other tenant's reach; another tenant's ids simply do not exist there. The tenant
// `default` (every request of a server without API keys) is the --db ledger itself.
// A tenant's ledger is opened, and its database created and migrated, on the first
// request that needs it; each has its own group committer, hold sweeper and event
// stream, as the --db ledger has. A failed open is answered as its status (503 when
// the database is unreachable) and tried again on the next request.
//
// Thread-safe. The default ledger and the metrics must outlive this object.
#ifndef LEDGER_SERVER_TENANT_LEDGERS_H_
#define LEDGER_SERVER_TENANT_LEDGERS_H_

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "engines/open_engine.h"
#include "ledger/ledger.h"
#include "server/hold_sweeper.h"
#include "server/metrics.h"

namespace ledger::server {

inline constexpr char kDefaultTenant[] = "default";

// The database URL of `tenant`'s ledger, derived from the --db URL:
//   sqlite:DIR/STEM.EXT[?...]       sqlite:DIR/STEM.TENANT.EXT[?...]  (no EXT: PATH.TENANT)
//   postgres://...[?schema=S&...]   the same with schema=S_TENANT (S absent: public_TENANT)
//   mysql://.../DB[?...]            mysql://.../DB_TENANT?...&create_database=true
//   memory:                         memory: (a ledger of its own, in memory)
// For kReads (a --read-db replica's URL) nothing is created: the MySQL URL carries no
// create_database, since a read_only replica refuses CREATE DATABASE and gets the tenant's
// database from its primary. `default` is `database_url` itself. InvalidArgument when the derived schema or
// database name would be longer than the engine allows (63 bytes for PostgreSQL, 64 for
// MySQL) or the MySQL database name is not plain ([A-Za-z0-9_]).
enum class TenantUrlFor { kWrites, kReads };
absl::StatusOr<std::string> TenantDatabaseUrl(std::string_view database_url,
                                              std::string_view tenant,
                                              TenantUrlFor use = TenantUrlFor::kWrites);

class TenantLedgers {
 public:
  struct Options {
    std::string database_url;        // --db: the default tenant's ledger
    std::string read_database_url;   // --read-db: each tenant's read engine derived from it; "" none
    OpenEngineOptions engine;        // each tenant's engine (pool size, migrate)
    LedgerOptions ledger;            // each tenant's ledger (group commit)
    absl::Duration hold_sweep_interval = absl::Seconds(30);  // zero: no sweeper
  };

  // InvalidArgument when a tenant's URL cannot be derived (TenantDatabaseUrl); opens
  // nothing yet. `tenants` may include kDefaultTenant.
  static absl::StatusOr<std::unique_ptr<TenantLedgers>> Create(
      Ledger& default_ledger, const std::set<std::string>& tenants, Options options,
      Metrics& metrics, HoldSweeper::LogEvent log);
  ~TenantLedgers();  // stops the sweepers, then closes the tenants' ledgers

  // `tenant`'s ledger, opened (and migrated) on first use. Internal for a tenant not
  // given to Create (a programming error: principals come from the same keys);
  // otherwise the open's error, annotated with the tenant.
  absl::StatusOr<Ledger*> For(std::string_view tenant);
  // `tenant`'s ledger when it is open already, else null; never opens one, never waits
  // (for the event loop: a request whose ledger is not open goes to a worker, For).
  Ledger* OpenedOrNull(std::string_view tenant) const;

  // Stops every tenant's hold sweeper (the default ledger's is the server's own);
  // ledgers opened after this run none. Idempotent.
  void StopSweepers();

 private:
  struct Tenant {
    std::string database_url;
    std::string read_database_url;  // "" without --read-db
    absl::Mutex mutex;  // held while opening, so concurrent first requests open once
    std::atomic<Ledger*> opened{nullptr};
    std::unique_ptr<Ledger> ledger ABSL_GUARDED_BY(mutex);
    std::unique_ptr<HoldSweeper> sweeper ABSL_GUARDED_BY(mutex);
  };

  TenantLedgers(Ledger& default_ledger, Options options, Metrics& metrics,
                HoldSweeper::LogEvent log)
      : default_ledger_(default_ledger), options_(std::move(options)), metrics_(metrics),
        log_(std::move(log)) {}
  absl::StatusOr<Ledger*> Open(std::string_view name, Tenant& tenant);

  Ledger& default_ledger_;
  const Options options_;
  Metrics& metrics_;
  const HoldSweeper::LogEvent log_;
  std::atomic<bool> sweepers_stopped_{false};
  std::map<std::string, std::unique_ptr<Tenant>, std::less<>> tenants_;  // fixed after Create
};

}  // namespace ledger::server

#endif  // LEDGER_SERVER_TENANT_LEDGERS_H_
