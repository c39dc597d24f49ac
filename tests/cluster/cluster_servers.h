// A replicated setup of a test's own, started by scripts/cluster-servers.sh
// (start-patroni or start-galera) in a fresh folder and stopped with the object, and
// what the cluster tests do to its nodes: kill, freeze, thaw, start again.
//
//   absl::StatusOr<std::unique_ptr<ClusterServers>> cluster =
//       ClusterServers::Start(ClusterServers::Kind::kPatroni);
//   std::string url = (*cluster)->Exported("LEDGER_TEST_PATRONI_DSN");
//   (*cluster)->Signal("pg1", SIGKILL);   // Patroni and its postmaster
//   (*cluster)->StartNode("pg1");         // Patroni brings it back as a standby
//
// Not thread-safe: one test thread drives it.
#ifndef LEDGER_TESTS_CLUSTER_CLUSTER_SERVERS_H_
#define LEDGER_TESTS_CLUSTER_CLUSTER_SERVERS_H_

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ledger::testing {

class ClusterServers {
 public:
  enum class Kind { kPatroni, kGalera };

  // FailedPrecondition with the script's output when the setup cannot start.
  static absl::StatusOr<std::unique_ptr<ClusterServers>> Start(Kind kind);
  ~ClusterServers();  // thaws and stops every node, removes the folder
  ClusterServers(const ClusterServers&) = delete;
  ClusterServers& operator=(const ClusterServers&) = delete;

  // The value of `name` in the script's DIR/env ("" when absent).
  std::string Exported(const std::string& name) const;
  const std::string& directory() const { return directory_; }

  // The processes of `node` (pg1, pg2: Patroni, then its postmaster and the postmaster's
  // children; galera1..3: mariadbd), signalled in that order, so a stopped parent forks
  // no child the list misses.
  std::vector<pid_t> Processes(const std::string& node) const;
  absl::Status Signal(const std::string& node, int signal_number);
  // cluster-servers.sh start-node: Patroni again (it rejoins as a standby, rewound if
  // needed), or mariadbd again (waits until it is synced).
  absl::Status StartNode(const std::string& node);

  // The Patroni leader (pg1 or pg2) once Patroni counts the other node as its
  // synchronous standby (cluster-servers.sh patroni-leader); Unavailable before.
  absl::StatusOr<std::string> PatroniLeader() const;
  // Patroni's maintenance mode (cluster-servers.sh patroni-maintenance): returns once
  // both members report it. While on, Patroni fails nothing over and leaves a replay
  // paused with pg_wal_replay_pause() paused; off, it resumes such a replay within a
  // second (Patroni 3, PostgreSQL 14+).
  absl::Status SetPatroniMaintenance(bool on);

  // Runs `sql` on Galera node n (1..3) with the mariadb client over its socket; its
  // output (tab-separated, no column names). Unavailable after 10 s.
  absl::StatusOr<std::string> GaleraSql(int node, const std::string& sql) const;

 private:
  ClusterServers(Kind kind, std::string directory) : kind_(kind), directory_(std::move(directory)) {}

  const Kind kind_;
  const std::string directory_;
  std::string env_;
};

// Polls `condition` every 200 ms until it holds or `timeout` passes; the last answer.
bool WaitUntil(const std::function<bool()>& condition, absl::Duration timeout);

// The last `lines` lines of the file at `path` (a node's log, for a failure's message),
// only those containing one of `containing` when it is not empty; empty when the file
// cannot be read.
std::string LogTail(const std::string& path, int lines,
                    const std::vector<std::string>& containing = {});

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_CLUSTER_CLUSTER_SERVERS_H_
