//===- allocator.cpp - cpnumeric's allocator for NumPy's array data -------===//
//
// Part of cpnumeric.
//
// NEP 49 lets a program choose the allocator of its NumPy arrays' data. Ours
// gives arrays of cpnrt::pages::kMinBytes or more pages of their own
// (runtime/lib/Pages.cpp), which Store::borrow can guard wherever they were
// made, and leaves smaller ones to the allocator it replaces. Set at import
// where borrowing can work (one process, CPN_BORROW not 0, userfaultfd
// allowed); docs/numpy-api.md, "NumPy arrays in".
//
// The handler's layout is NumPy's PyDataMem_Handler (numpy/ndarraytypes.h,
// version 1, stable since NumPy 1.22); the C API entries are found as
// pybind11 finds its own, in the _ARRAY_API table, so that no NumPy headers
// are needed at build time.
//
//===----------------------------------------------------------------------===//

#include "bindings.h"
#include "cpnrt/Store.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace py = pybind11;

namespace {
struct DataAllocator {
  void *ctx;
  void *(*malloc)(void *ctx, size_t size);
  void *(*calloc)(void *ctx, size_t nelem, size_t elsize);
  void *(*realloc)(void *ctx, void *ptr, size_t size);
  void (*free)(void *ctx, void *ptr, size_t size);
};
struct DataHandler {
  char name[127];
  uint8_t version;
  DataAllocator allocator;
};
static_assert(offsetof(DataHandler, allocator) == 128,
              "NumPy's PyDataMem_Handler layout");

// numpy/__multiarray_api.h: PyDataMem_SetHandler, PyDataMem_GetHandler.
constexpr int kSetHandler = 304, kGetHandler = 305;

/// The allocator ours replaced (NumPy's default unless a program set
/// another): small arrays, and memory it gave before ours was set.
DataAllocator previous;

constexpr size_t kMin = cpnrt::pages::kMinBytes;

void *takeData(void *, size_t n) {
  if (n >= kMin)
    return cpnrt::pages::take(n, false);
  return previous.malloc(previous.ctx, n);
}

void *takeZeroed(void *, size_t nelem, size_t elsize) {
  size_t n;
  if (__builtin_mul_overflow(nelem, elsize, &n))
    return nullptr;
  if (n >= kMin)
    return cpnrt::pages::take(n, true);
  return previous.calloc(previous.ctx, nelem, elsize);
}

void *resizeData(void *, void *p, size_t n) {
  if (!p)
    return takeData(nullptr, n);
  if (!cpnrt::pages::owns(p, 0))
    return previous.realloc(previous.ctx, p, n);
  if (n >= kMin)
    return cpnrt::pages::resize(p, n);
  // Shrunk below kMin: into the other allocator's memory.
  void *q = previous.malloc(previous.ctx, n ? n : 1);
  if (!q)
    return nullptr;
  std::memcpy(q, p, n);
  cpnrt::pages::give(p);
  return q;
}

void giveData(void *, void *p, size_t n) {
  if (!cpnrt::pages::give(p))
    previous.free(previous.ctx, p, n);
}

DataHandler handler = {
    "cpnumeric", 1, {nullptr, takeData, takeZeroed, resizeData, giveData}};
bool installed = false;
} // namespace

void initAllocator(py::module_ &m) {
  m.def(
      "use_numpy_allocator",
      [](bool hugePages) {
        if (installed)
          return true;
        if (!cpnrt::borrowingPossible())
          return false;
        auto c = py::module_::import("numpy._core._multiarray_umath")
                     .attr("_ARRAY_API");
        void **api =
            static_cast<void **>(PyCapsule_GetPointer(c.ptr(), nullptr));
        if (!api)
          throw py::error_already_set();
        auto get = reinterpret_cast<PyObject *(*)()>(api[kGetHandler]);
        auto set =
            reinterpret_cast<PyObject *(*)(PyObject *)>(api[kSetHandler]);
        // The current handler stays alive for good: memory it gave is
        // freed through it.
        PyObject *current = get();
        if (!current)
          throw py::error_already_set();
        auto *cur = static_cast<DataHandler *>(
            PyCapsule_GetPointer(current, "mem_handler"));
        if (!cur) {
          Py_DECREF(current);
          throw py::error_already_set();
        }
        if (cur->version != 1) {
          Py_DECREF(current);
          return false;
        }
        previous = cur->allocator;
        cpnrt::pages::setHugePages(hugePages);
        py::capsule ours(static_cast<void *>(&handler), "mem_handler");
        PyObject *old = set(ours.ptr());
        if (!old)
          throw py::error_already_set();
        Py_DECREF(old);
        installed = true;
        return true;
      },
      py::arg("huge_pages"),
      "Sets cpnumeric's allocator for NumPy's array data in this context "
      "(NEP 49): arrays of 256 KiB or more get pages of their own, which "
      "can be borrowed wherever they were made; smaller ones keep the "
      "allocator it replaces. `huge_pages`: NumPy's madvise setting. False "
      "(nothing set) where borrowing cannot work here.");
  m.def("numpy_allocator_stats", [] {
    cpnrt::pages::Stats s = cpnrt::pages::stats();
    py::dict d;
    d["allocations"] = s.allocations;
    d["bytes_live"] = s.bytesLive;
    d["installed"] = installed;
    return d;
  });
}
