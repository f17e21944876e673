//===- Threads.h - where the library's parallel parts run -------*- C++ -*-===//
//
// Part of cpnumeric's runtime. The library calls (sorts, gathers, scans)
// split their work into parts that run on the runtime's own worker threads
// (runtime/lib/Threads.cpp). A thread may name another team for them: a
// compiled kernel whose loops run on OpenMP's threads gives its library calls
// those same threads, awake between its loops, instead of a second pool that
// would have to take turns with them (docs/architecture.md, "One thread pool
// in practice").
//
//===----------------------------------------------------------------------===//

#ifndef CPNRT_THREADS_H
#define CPNRT_THREADS_H

#include <cstdint>

namespace cpnrt {

/// Runs fn(ctx, t) once for every t < n on a team of threads that includes
/// the caller, returning when all have run. Parts never wait for each other.
using ParallelBackend = void (*)(int64_t n, void (*fn)(void *, int64_t),
                                 void *ctx);

/// Sets the team that library calls made on this thread run their parts on
/// (nullptr: the runtime's worker threads); returns the previous one.
ParallelBackend setThreadParallelBackend(ParallelBackend backend);

} // namespace cpnrt

#endif // CPNRT_THREADS_H
