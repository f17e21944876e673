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

#include <cstddef>
#include <cstdint>
#include <string>

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
