//===- Comm.h - the ranks of an MPI launch ------------------------*- C++ -*-===//
//
// Part of cpnumeric's runtime (libcpnrt).
//
// SPMD with control replication: `mpirun -n P python prog.py` runs the same
// program on every rank. A process that an MPI launcher started (its
// environment says so: OpenMPI's OMPI_COMM_WORLD_SIZE, PMIx's PMIX_RANK,
// MPICH/Hydra's PMI_SIZE) starts MPI here; one started plainly never calls
// MPI and is rank 0 of 1. The collectives below block the calling thread;
// they are the sync points' communication (the task graph's own messages
// come with the partitioner).
//
// Failure: MPI's default handler (MPI_ERRORS_ARE_FATAL) aborts every rank on
// an MPI error; abortAll() is how an error found by cpnumeric on one rank
// ends all of them; a rank that dies makes the launcher end the others.
//
//===----------------------------------------------------------------------===//

#ifndef CPNRT_COMM_H
#define CPNRT_COMM_H

#include "cpnrt/TaskGraph.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cpnrt::comm {

/// True when an MPI launcher started this process (read from its
/// environment; MPI itself is not touched).
bool launchedByMpi();

/// Starts MPI once if launchedByMpi() (MPI_THREAD_MULTIPLE asked for; the
/// level granted is threadLevel()); otherwise does nothing. Returns
/// active().
bool start();

/// True between start() (under a launcher) and finish().
bool active();

/// This process's rank and the number of ranks (0 and 1 when not active).
int rank();
int size();
/// Ranks on this node, and this rank's index among them (0 and 1 when not
/// active).
int localRank();
int localSize();
/// The thread level MPI granted (MPI_THREAD_*), -1 when not active.
int threadLevel();
/// The MPI library's version string ("" when not active).
std::string libraryVersion();

/// Waits until every rank has called it. No-op when not active.
void barrier();
/// Copies `bytes` bytes at `data` on `root` to `data` on every rank.
void broadcast(void *data, size_t bytes, int root);
/// The minimum and maximum of `value` over the ranks (value itself when not
/// active): whether every rank holds the same value, in one collective.
void minMax(int64_t value, int64_t &min, int64_t &max);

/// Point-to-point messages between ranks, set up once and started as often
/// as needed: MPI's persistent requests (MPI_Send_init/MPI_Recv_init, bound
/// at the first start) on a communicator of their own. One round of a
/// partitioned stencil's halo exchange is one start: each rank's border rows
/// to its neighbours, theirs into its halo rows. Byte ranges of stores are
/// sent and received; a store's buffer never moves once allocated.
///
/// Without MPI (a plain process, rank 0 of 1) a message to rank 0 is a copy
/// to the receive of the same tag, done at start (a periodic boundary on
/// one rank is its own neighbour).
class Exchange {
public:
  /// `persistent`: the messages are MPI persistent requests, bound at the
  /// first start and started again each round. Without, the exchange has
  /// one round of plain MPI_Isend/MPI_Irecv: what a kernel's halo rows and
  /// gathers use (Engine, gatherBlocks, exchangeRows).
  explicit Exchange(bool persistent = true);
  ~Exchange();
  Exchange(const Exchange &) = delete;
  Exchange &operator=(const Exchange &) = delete;

  /// Adds a message: `bytes` bytes at byte `offset` of `store` to rank
  /// `peer`, received there by a receive of the same `tag` (0 <= tag <
  /// 2^15) in the peer's exchange made at the same point of the program
  /// (the n-th Exchange a rank makes pairs with every rank's n-th, as
  /// control replication makes them).
  void send(StoreRef store, size_t offset, size_t bytes, int peer, int tag);
  /// Adds a receive of `bytes` bytes from rank `peer` into byte `offset` of
  /// `store`.
  void receive(StoreRef store, size_t offset, size_t bytes, int peer, int tag);

  /// Starts every message (returns at once); a round must be complete
  /// (test() true, or wait()) before the next start.
  void start();
  /// Whether every message of the round started last has completed (never
  /// blocks).
  bool test();
  /// Blocks until every message of the round has completed.
  void wait();

  /// What one round moves from and to this rank.
  size_t bytesSent() const { return bytes(true); }
  size_t bytesReceived() const { return bytes(false); }
  size_t messages() const { return parts_.size(); }
  size_t receives() const;
  /// The stores sent from (a round reads them) and received into (writes;
  /// with a store of the exchange's own, which orders its rounds).
  std::vector<StoreRef> reads() const;
  std::vector<StoreRef> writes() const;
  /// The same with the bytes each message reads or writes (Task's ranges):
  /// a round that sends a block's border rows and receives the rows beside
  /// it does not wait for, or hold up, a task that reads the block only.
  void ranges(std::vector<StoreRef> &reads,
              std::vector<std::pair<size_t, size_t>> &readRanges,
              std::vector<StoreRef> &writes,
              std::vector<std::pair<size_t, size_t>> &writeRanges) const;

private:
  struct Part {
    bool isSend;
    StoreRef store;
    size_t offset, bytes;
    int peer, tag;
  };
  std::vector<Part> parts_;
  void add(bool isSend, StoreRef store, size_t offset, size_t bytes, int peer,
           int tag);
  size_t bytes(bool isSend) const;
  void addStores(bool isSend, std::vector<StoreRef> &v) const;
  struct Requests; // MPI_Request each, once bound (Comm.cpp)
  std::unique_ptr<Requests> requests_;
  bool started_ = false;
  bool persistent_;
  int rounds_ = 0;
  // Made in the same order on every rank (control replication): its
  // messages' MPI tags carry it, so that two exchanges with the same peers
  // and tags never take each other's messages.
  int64_t id_;
  // Written by every round (submitExchange): rounds of one exchange run one
  // after another even when it only sends.
  StoreRef token_;
};

/// What this rank's messages and collectives moved since the process
/// started (or resetTraffic()), counted when they are submitted under
/// several ranks: the bytes this rank receives (a collective's result bytes
/// that come from other ranks: an all-reduce's whole store), its
/// point-to-point messages received, and its collectives. What
/// CPN_SIMULATE_RANKS's counts predict, measured (stats(), docs/mpi.md).
struct Traffic {
  uint64_t bytesReceived = 0, messages = 0, collectives = 0;
};
Traffic traffic();
void resetTraffic();

/// Submits one round of `exchange` to `graph` as a task: it starts when the
/// tasks it depends on through its stores have finished (the writers of the
/// rows it sends, the readers of the stores it receives into) and finishes
/// when every message has arrived, holding no thread meanwhile (Task::poll):
/// tasks that do not read the stores it receives into run while the
/// messages travel, those that do after. (Dependencies are per store: a
/// stencil's interior overlaps its halo's travel when the halo rows are a
/// store of their own.) Under several ranks MPI must run with
/// MPI_THREAD_MULTIPLE (messages are tested from any thread): an Error
/// otherwise.
TaskRef submitExchange(TaskGraph &graph, std::shared_ptr<Exchange> exchange,
                       std::string name = "exchange", bool inOrder = false);

/// The collectives of a partitioned program as tasks of `graph`, each a
/// non-blocking MPI collective (MPI_Iallreduce, MPI_Iallgatherv, MPI_Ibcast)
/// started by the task and polled until done, holding no thread meanwhile.
/// A collective must start in the same order on every rank: these tasks
/// are submitted in order (TaskGraph::submit's inOrder), so they start in
/// the order they were submitted, which control replication makes the same
/// everywhere; tasks that do not depend on them run meanwhile. Without MPI
/// (one rank) each is a copy or nothing. A collective (or an exchange round)
/// whose input failed does not start on this rank while the others start
/// theirs: with several ranks it ends every rank with the error
/// (comm::abortAll), as an uncaught error on any rank does.
enum class ReduceOp { Sum, Prod, Min, Max, LogicalAnd, LogicalOr };

/// `out` = `op` over the ranks of `in`, element by element (the whole
/// stores, of one dtype and size; `in` may be `out`). bool takes every op
/// (Sum and Max are or, Prod and Min and: NumPy's bool arithmetic); float
/// Min and Max give NaN where any rank's value is NaN (NumPy's maximum and
/// minimum; MPI's own ops would drop it); complex takes Sum and Prod and
/// float16 nothing (an Error), and integers no logical ops.
TaskRef submitAllReduce(TaskGraph &graph, StoreRef in, StoreRef out,
                        ReduceOp op, std::string name = "all_reduce");

/// The first row of rank q's block of an n-row array split over `ranks`
/// ranks (rows [blockRow(n, q), blockRow(n, q + 1)) are rank q's): the cut
/// of cpn-localize and of the runtime's split stores.
inline int64_t blockRow(int64_t n, int64_t q, int64_t ranks) {
  return n * q / ranks;
}

/// The rows [first, second) of rank `from`'s block that rank `to` reads
/// when each rank q reads rows [rows[2q], rows[2q + 1]) of an n-row split
/// array (empty when second <= first): what `from` sends `to` in a halo
/// round (exchangeRows), and what a rank's summary.txt lists.
inline std::pair<int64_t, int64_t> rowsSent(const int64_t *rows, int64_t n,
                                            int64_t from, int64_t to,
                                            int64_t ranks) {
  return {std::max(rows[2 * to], blockRow(n, from, ranks)),
          std::min(rows[2 * to + 1], blockRow(n, from + 1, ranks))};
}

/// A store split by rows (Distribution::BlockRows: this rank holds its block
/// of rows current) made whole on every rank: one MPI_Iallgatherv in place
/// (submitAllGather with local == full; a store of 2 GiB or more: each
/// rank's block sent to every other rank as one round of messages, an
/// Exchange in order with the collectives); the store is then Replicated.
/// Nothing for a replicated store or on one rank. Every rank must call it for
/// the same store at the same point (a sync point of the program, the inputs of
/// a kernel that reads the store whole).
void gatherBlocks(TaskGraph &graph, const StoreRef &store);

/// Before a kernel that reads rows [rows[2q], rows[2q + 1]) of the split
/// `store` on each rank q (one pair per rank, the same list on every
/// rank): each rank sends the rows of its block that others read and
/// receives those it reads from their owners (an Exchange, as a task). A
/// store every rank reads whole is gathered instead; one whose readers
/// read only their own blocks moves nothing.
void exchangeRows(TaskGraph &graph, const StoreRef &store,
                  const std::vector<int64_t> &rows);

/// Every rank's `local` store, one after another in rank order, into
/// `full` on every rank: `rankBytes[r]` is rank r's byte count (its block
/// of rows), and `local` holds rankBytes[rank()] bytes; `local` may be
/// `full`, which then holds this rank's bytes at their place (in place).
TaskRef submitAllGather(TaskGraph &graph, StoreRef local, StoreRef full,
                        std::vector<size_t> rankBytes,
                        std::string name = "all_gather");

/// Every rank's blocks to every rank (a transposed or reshaped split
/// array): `sendBytes[q]` bytes of `send` go to rank q, in rank order from
/// its start; `recvBytes[q]` bytes from rank q land in `recv`, in rank
/// order. `send` and `recv` are two stores.
TaskRef submitAllToAll(TaskGraph &graph, StoreRef send, StoreRef recv,
                       std::vector<size_t> sendBytes,
                       std::vector<size_t> recvBytes,
                       std::string name = "all_to_all");

/// `bytes` bytes at byte `offset` of `store` on rank `root` into the same
/// place of `store` on every rank (a replicated view of a few rows of a
/// split array, sent by their owner).
TaskRef submitBroadcast(TaskGraph &graph, StoreRef store, size_t offset,
                        size_t bytes, int root, std::string name = "broadcast");

/// Prints `message` to stderr, prefixed with this rank, and ends every rank
/// with exit status `code` (MPI_Abort; std::_Exit when not active).
[[noreturn]] void abortAll(const std::string &message, int code);

/// Ends MPI (MPI_Finalize) if this process started it. Every rank calls it
/// at a normal exit; with several ranks, each first waits for the others to
/// arrive, and ends them all (abortAll) if they have not within
/// `waitSeconds` (0: no limit): a rank that left early would otherwise hang
/// the ones still waiting for it in a collective.
void finish(double waitSeconds);

} // namespace cpnrt::comm

#endif // CPNRT_COMM_H
