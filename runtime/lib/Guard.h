//===- Guard.h - borrowed NumPy buffers, inside the runtime -----*- C++ -*-===//
//
// Part of cpnumeric's runtime (libcpnrt). Between Store.cpp and Guard.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef CPNRT_LIB_GUARD_H
#define CPNRT_LIB_GUARD_H

#include "cpnrt/Store.h"

namespace cpnrt {

/// At a store's destruction: its pages writable again (waiting for a copy
/// another thread is making), the copy of its own freed.
void releaseGuard(Store &store);

/// The system's page size.
size_t pageSize();

/// Before the pages [begin, begin + bytes) are freed (Pages.cpp): every
/// store that guards some of them gets its copy first (a NumPy array's data
/// freed or moved under a value that reads it: ndarray.resize with
/// refcheck=False, __setstate__), so that malloc never writes guarded pages.
void unguardPages(const void *begin, size_t bytes);

/// A buffer of the store pool (Store.cpp), and its return.
void *takeBuffer(size_t nbytes);
void giveBuffer(void *p, size_t nbytes);

} // namespace cpnrt

#endif // CPNRT_LIB_GUARD_H
