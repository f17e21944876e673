//===- runtime.cpp - moving data between NumPy and stores -----------------===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#include "bindings.h"
#include "cpn/Engine/Engine.h"
#include "cpnrt/Blas.h"
#include "cpnrt/Comm.h"
#include "cpnrt/Profile.h"
#include "cpnrt/Random.h"
#include "cpnrt/TaskGraph.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace py = pybind11;
using cpn::NodeRef;

namespace {
std::string dtypeKey(const py::dtype &dt) {
  char kind = dt.kind();
  if (kind == 'b')
    return "b1";
  return std::string(1, kind) + std::to_string(dt.itemsize());
}

/// The args of a copy event (its size), when profiling.
std::string bytesArgs(const NodeRef &node) {
  if (!cpnrt::Profiler::global().enabled() || !node->store)
    return "";
  return "{\"bytes\": " + std::to_string(node->store->nbytes()) + "}";
}

/// Bytes of a split array above which reading it (np.asarray, print,
/// float() of a distributed array: each rank then holds all of it) warns:
/// CPN_GATHER_WARN_BYTES, read at each such read (256 MiB by default).
uint64_t gatherWarnBytes() {
  const char *v = std::getenv("CPN_GATHER_WARN_BYTES");
  return v && *v ? std::strtoull(v, nullptr, 10) : uint64_t(1) << 28;
}

/// A RuntimeWarning (on every rank; rank 0's shows) when a read gathers a
/// split store of at least gatherWarnBytes() onto every rank.
void warnLargeGather(const cpnrt::StoreRef &store) {
  if (store->distribution() != cpnrt::Distribution::BlockRows ||
      cpnrt::comm::size() <= 1 || store->nbytes() < gatherWarnBytes())
    return;
  std::string msg =
      "cpnumeric: reading an array of " +
      std::to_string(store->nbytes() >> 20) + " MiB split over " +
      std::to_string(cpnrt::comm::size()) +
      " ranks gathers all of it onto every rank (np.asarray, print, "
      "float() of a distributed array); read a reduction or a small result "
      "computed from it instead, or raise CPN_GATHER_WARN_BYTES (now " +
      std::to_string(gatherWarnBytes()) + ") to silence this";
  if (PyErr_WarnEx(PyExc_RuntimeWarning, msg.c_str(), 1) < 0)
    throw py::error_already_set();
}
} // namespace

/// Makes sure `node` has a finished store: flushes the trace if it is
/// pending, then waits for the task that writes it. Releases the GIL while
/// waiting.
cpnrt::StoreRef materialize(const NodeRef &node) {
  // This thread waits next: the window's kernel runs here, no worker woken.
  cpnrt::TaskGraph::WaitFollows waitFollows;
  if (!node->store && node->error.empty())
    cpn::Engine::global().flush();
  if (!node->store && !node->error.empty())
    throw cpnrt::Error(node->errorKind, node->error);
  if (!node->store)
    throw std::runtime_error("cpnumeric: value was not materialized");
  // A store split over ranks (one rank's program wrote its rows) is
  // gathered first: every rank reads it here.
  warnLargeGather(node->store);
  cpnrt::comm::gatherBlocks(cpnrt::TaskGraph::global(), node->store);
  // Finished already (a sync point on a computed value): no GIL round trip.
  if (!cpnrt::TaskGraph::global().storeDone(*node->store)) {
    py::gil_scoped_release release;
    node->store->wait();
  }
  return node->store;
}

static const py::dtype &storeDType(cpnrt::DType dtype) {
  // NumPy's dtype of each DType, made once (parsing its name on every call
  // cost a small view's eager ufunc a few hundred ns). Leaked on purpose:
  // no Python object is released at exit.
  static py::dtype *dtypes[16] = {};
  size_t k = static_cast<size_t>(dtype);
  if (k >= 16)
    throw std::runtime_error("storeDType: unknown dtype");
  if (!dtypes[k]) {
    std::string key = cpnrt::dtypeName(dtype);
    dtypes[k] = new py::dtype(key == "b1" ? std::string("?") : "<" + key);
  }
  return *dtypes[k];
}

PyObject *storeDescr(cpnrt::DType dtype) { return storeDType(dtype).ptr(); }

namespace {
/// cpnumeric's own Python threads (the baseline tier's helpers): they read
/// stores and never write a NumPy array of the program's.
std::mutex helperMutex;
std::vector<unsigned long> helperThreads;

/// Whether this interpreter runs no Python thread of the program's but the
/// calling one.
bool onlyPythonThread() {
  PyThreadState *me = PyThreadState_Get();
  std::lock_guard<std::mutex> lock(helperMutex);
  for (PyThreadState *t = PyInterpreterState_ThreadHead(me->interp); t;
       t = PyThreadState_Next(t))
    if (t != me && std::find(helperThreads.begin(), helperThreads.end(),
                             t->thread_id) == helperThreads.end())
      return false;
  return true;
}
} // namespace

PyObject *storeOwner(const cpnrt::StoreRef &store, bool lend, bool transient) {
  // A NumPy array over a borrowed buffer would see NumPy's later writes to
  // it: over the store's own copy instead (Guard.cpp).
  if (store->guarded() && !(transient && onlyPythonThread())) {
    py::gil_scoped_release release;
    store->unguard();
  }
  auto *ref = new cpnrt::StoreRef(store);
  PyObject *c =
      lend ? PyCapsule_New(ref, "cpnumeric.lent",
                           [](PyObject *c) {
                             auto *r = static_cast<cpnrt::StoreRef *>(
                                 PyCapsule_GetPointer(c, "cpnumeric.lent"));
                             (*r)->giveBack();
                             delete r;
                           })
           : PyCapsule_New(ref, "cpnumeric.store", [](PyObject *c) {
               delete static_cast<cpnrt::StoreRef *>(
                   PyCapsule_GetPointer(c, "cpnumeric.store"));
             });
  if (!c)
    delete ref; // MemoryError set: the store is not kept alive
  else if (lend)
    store->lend();
  return c;
}

py::object storeArray(const cpnrt::StoreRef &store, bool writable, bool lend,
                      bool transient) {
  const py::dtype &dt = storeDType(store->dtype());
  // The capsule owns a reference to the store: the array keeps its memory
  // alive.
  auto keep =
      py::reinterpret_steal<py::object>(storeOwner(store, lend, transient));
  if (!keep)
    throw py::error_already_set();
  py::array out(dt, store->shape(), {}, store->data(), keep);
  if (!writable)
    py::detail::array_proxy(out.ptr())->flags &=
        ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return std::move(out);
}

namespace {
/// NumPy arrays whose last store went away on a thread without the GIL
/// (a worker finishing the last task that read it): released by the main
/// thread at its next pending-call check, or at the next borrow.
std::mutex heldMutex;
std::vector<PyObject *> heldObjects;
bool heldScheduled = false;

void releaseHeldObjects() {
  std::vector<PyObject *> objs;
  {
    std::lock_guard<std::mutex> lock(heldMutex);
    objs.swap(heldObjects);
    heldScheduled = false;
  }
  for (PyObject *o : objs)
    Py_DECREF(o);
}

int releaseHeldCall(void *) {
  releaseHeldObjects();
  return 0;
}

bool finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

/// Drops the reference a borrowing store held, from any thread.
void releasePyObject(PyObject *obj) {
  if (!Py_IsInitialized() || finalizing())
    return; // the interpreter is going: nothing to give back to
  if (PyGILState_Check()) {
    Py_DECREF(obj);
    return;
  }
  std::lock_guard<std::mutex> lock(heldMutex);
  heldObjects.push_back(obj);
  // Py_AddPendingCall needs no GIL; its queue is short, so one call drains
  // them all (a full queue leaves it to the next borrow).
  if (!heldScheduled)
    heldScheduled = Py_AddPendingCall(releaseHeldCall, nullptr) == 0;
}
/// A value node of a NumPy array's dtype and shape (no store yet), and a
/// reference to the array for the store that uses its buffer.
cpn::NodeRef nodeOfArray(const py::array &arr) {
  auto node = std::make_shared<cpn::ValueNode>();
  node->dtype = cpnrt::parseDType(dtypeKey(arr.dtype()));
  for (py::ssize_t i = 0; i < arr.ndim(); ++i)
    node->shape.push_back(arr.shape(i));
  return node;
}

std::shared_ptr<void> arrayOwner(const py::array &arr) {
  releaseHeldObjects();
  PyObject *obj = arr.ptr();
  Py_INCREF(obj);
  return std::shared_ptr<void>(
      obj, [](void *o) { releasePyObject(static_cast<PyObject *>(o)); });
}
} // namespace

void initRuntime(py::module_ &m) {
  m.def(
      "from_numpy",
      [](py::array arr) {
        py::array c = py::array::ensure(arr, py::array::c_style);
        cpn::NodeRef node = nodeOfArray(c);
        node->store = std::make_shared<cpnrt::Store>(node->dtype, node->shape);
        cpnrt::ProfileScope scope("copy", "from_numpy", bytesArgs(node));
        cpn::countImport(false, node->store->nbytes());
        {
          // `c` stays referenced by this frame while the GIL is released.
          py::gil_scoped_release release;
          cpnrt::copyBytes(node->store->data(), c.data(),
                           node->store->nbytes());
        }
        return node;
      },
      "A materialized value holding a copy of a NumPy array.");
  m.def(
      "adopt_numpy",
      [](py::array arr) -> py::object {
        // The caller (_creation.py) checked: an array nothing else can
        // reach, aligned, native byte order, a store dtype.
        if (!(arr.flags() & py::array::c_style))
          throw py::value_error("adopt_numpy: not a C-contiguous array");
        // A split store's buffer is this rank's block: a copy, as before.
        if (cpn::Engine::global().options().partitioning())
          return py::none();
        cpn::NodeRef node = nodeOfArray(arr);
        node->store = std::make_shared<cpnrt::Store>(
            node->dtype, node->shape, const_cast<void *>(arr.data()),
            arrayOwner(arr));
        cpn::countImport(true, 0);
        return py::cast(node);
      },
      py::arg("array"),
      "A materialized value over a NumPy array's buffer, without a copy, for "
      "an array nothing else can reach (the store keeps it alive and is "
      "written as any other). None under CPN_PARTITION=rows (copy it).");
  m.def(
      "borrow_numpy",
      [](py::array arr) -> py::object {
        // The caller (_creation.py) checked: aligned, native byte order, a
        // store dtype, big. Here: C order, one process, and the
        // NumPy array at the end of the base chain owns the memory.
        if (!(arr.flags() & py::array::c_style) ||
            cpn::Engine::global().options().partitioning() ||
            cpnrt::comm::size() > 1)
          return py::none();
        auto &api = py::detail::npy_api::get();
        PyObject *cur = arr.ptr();
        for (;;) {
          if (!PyObject_TypeCheck(
                  cur, reinterpret_cast<PyTypeObject *>(api.PyArray_Type_)))
            return py::none(); // a buffer of another kind (mmap, bytes)
          auto *p = py::detail::array_proxy(cur);
          if (!p->base) {
            if (!(p->flags & py::detail::npy_api::NPY_ARRAY_OWNDATA_))
              return py::none();
            break;
          }
          cur = p->base;
        }
        auto *owner = py::detail::array_proxy(cur);
        auto ownerArray = py::reinterpret_borrow<py::array>(cur);
        size_t ownerBytes = size_t(ownerArray.nbytes());
        cpn::NodeRef node = nodeOfArray(arr);
        node->store = cpnrt::Store::borrow(
            node->dtype, node->shape, const_cast<void *>(arr.data()),
            arrayOwner(arr), owner->data, ownerBytes);
        if (!node->store)
          return py::none();
        return py::cast(node);
      },
      py::arg("array"),
      "A materialized value over the buffer of a NumPy array that NumPy "
      "code may still write, without a copy: the buffer is write-protected "
      "and the first write to it copies the elements for the value first "
      "(cpnrt::Store::borrow). None where it cannot be guarded (copy it).");
  m.def(
      "note_helper_thread",
      [] {
        std::lock_guard<std::mutex> lock(helperMutex);
        helperThreads.push_back(PyThreadState_Get()->thread_id);
      },
      "Marks the calling Python thread as cpnumeric's own (the baseline "
      "tier's helpers): it writes no NumPy array of the program's, so a "
      "borrowed buffer may be read in place while it runs.");
  m.def("borrowing", &cpnrt::borrowingAvailable,
        "Whether held NumPy arrays can be borrowed here (CPN_BORROW is not 0 "
        "and userfaultfd's write protection is allowed).");
  m.def(
      "numpy_owner_alone",
      [](py::handle a) {
        // Walks a's base chain (NumPy collapses views of views onto the
        // owner, so it is short): each base must be an exact NumPy array
        // that only the chain holds, the last one owning its memory.
        auto &api = py::detail::npy_api::get();
        PyObject *cur = a.ptr();
        if (Py_TYPE(cur) != api.PyArray_Type_)
          return false;
        for (;;) {
          PyObject *base = py::detail::array_proxy(cur)->base;
          if (!base)
            return bool(py::detail::array_proxy(cur)->flags &
                        py::detail::npy_api::NPY_ARRAY_OWNDATA_);
          if (Py_TYPE(base) != api.PyArray_Type_ || Py_REFCNT(base) != 1)
            return false;
          cur = base;
        }
      },
      py::arg("array"),
      "Whether an exact NumPy array's memory is its own, or its bases' that "
      "nothing but the chain holds (the array's own references are the "
      "caller's to count).");
  m.def(
      "to_numpy",
      [](const NodeRef &node) {
        cpnrt::StoreRef store = materialize(node);
        std::string key = cpnrt::dtypeName(node->dtype);
        py::dtype dt(key == "b1" ? std::string("?") : "<" + key);
        py::array out(dt, node->shape);
        cpnrt::ProfileScope scope("copy", "to_numpy", bytesArgs(node));
        void *dst = out.mutable_data();
        {
          py::gil_scoped_release release;
          // Another thread's NumPy write to a borrowed buffer waits for the
          // copy (counted without the GIL: no reader may wait for it).
          cpnrt::GuardedReads reading({store});
          cpnrt::copyBytes(dst, store->data(), store->nbytes());
        }
        return out;
      },
      "A NumPy copy of a value; a sync point.");
  m.def(
      "lend",
      [](const NodeRef &node, bool declineBorrowed) -> py::object {
        // A split store's buffer is this rank's (gathered when read, split
        // again by the next kernel): a copy, as before.
        cpn::Engine &engine = cpn::Engine::global();
        if (engine.options().partitioning())
          return py::none();
        cpnrt::StoreRef store = materialize(node);
        if (store->nbytes() == 0 || (declineBorrowed && store->guarded()))
          return py::none();
        if (store->guarded()) {
          // Its own memory first: no borrow can share it from here on.
          py::gil_scoped_release release;
          store->unguard();
        }
        if (store->borrowShared()) {
          // Borrowed by several values (cpnrt::Store::borrow): the NumPy
          // array would write the others' elements too. This one's own.
          auto own =
              std::make_shared<cpnrt::Store>(store->dtype(), store->shape());
          {
            py::gil_scoped_release release;
            cpnrt::GuardedReads reading({store});
            cpnrt::copyBytes(own->data(), store->data(), store->nbytes());
          }
          node->store = own;
          store = std::move(own);
        }
        // Lent before the GIL is released again: a read that another thread
        // records from here on takes a copy (Trace::operandRef).
        py::object out = storeArray(store, true, true);
        cpn::countSharedExport();
        node->bounds.reset(); // NumPy code may change the elements
        // Work recorded before runs before NumPy code may write: the pending
        // window that reads the value is run, and its readers waited for.
        bool flushed = engine.trace().hasInput(node.get());
        if (flushed)
          engine.flush();
        auto &graph = cpnrt::TaskGraph::global();
        if (flushed || !graph.storeDone(*store) || !graph.readersDone(*store)) {
          py::gil_scoped_release release;
          store->wait();
          graph.waitReaders(*store);
        }
        return out;
      },
      py::arg("node"), py::arg("decline_borrowed") = false,
      "A writable NumPy array over a value's store, without a copy (a sync "
      "point; None where it must be copied: a store split over ranks, no "
      "elements). While such an array lives the store is lent: no kernel "
      "writes it in place, and the next trace that reads the value takes a "
      "copy of it first (np.asarray's aliasing, docs/numpy-api.md). "
      "`decline_borrowed`: None for a borrowed NumPy buffer too (the caller "
      "copies the part it wants rather than the store copying all of it).");
  m.def(
      "host_view",
      [](const NodeRef &node) {
        cpnrt::ProfileScope scope("copy", "host_view", bytesArgs(node));
        // Read-only: writes go through the trace (or element_set).
        // Read at once by _host's callers (an element, a copy).
        return storeArray(materialize(node), false, false, true);
      },
      "A read-only NumPy view of a value's store, without a copy (a sync "
      "point). Copy what you keep: later work may reuse the buffer once no "
      "trace value refers to it.");
  m.def(
      "wait", [](const NodeRef &node) { materialize(node); },
      "Waits until a value is computed (flushing the trace if it is pending); "
      "raises the error of the work that computed it.");
  m.def(
      "philox_words",
      [](uint64_t key, uint64_t counter, int64_t n) {
        if (n < 0)
          throw py::value_error("philox_words: n must be non-negative");
        py::array_t<uint64_t> out(n);
        cpnrt::philoxWords(key, counter, n, out.mutable_data());
        return out;
      },
      py::arg("key"), py::arg("counter"), py::arg("n"),
      "The n uint64 words cpn.random_bits computes under `key` from "
      "`counter` (the eager path's small draws).");
  m.def(
      "trim_pool", [] { cpnrt::trimPool(); },
      "Return the pool's cached free buffers to the system.");
  m.def("dtype_names", &cpnrt::dtypeNames,
        "The runtime's dtypes as NumPy kind+itemsize keys (\"b1\", \"i1\", "
        "..., \"c16\"): the one table of them (cpnrt/Store.h).");
  m.def("set_pool_limit", &cpnrt::setPoolLimit, py::arg("bytes"),
        "Sets CPN_POOL_LIMIT (bytes of free buffers kept for reuse); returns "
        "the old limit.");
  m.def(
      "stream_triad",
      [](size_t n, int threads, int reps) {
        py::gil_scoped_release release;
        return cpnrt::streamTriadGBs(n, threads, reps);
      },
      py::arg("n"), py::arg("threads"), py::arg("reps") = 10,
      "STREAM triad bandwidth in GB/s (the benchmarks' memory bound).");
  m.def(
      "profile_begin", [] { return cpnrt::Profiler::global().begin(); },
      "Starts recording trace events; returns the session's first index.");
  m.def(
      "profile_end",
      [](size_t first, const std::string &path) {
        return cpnrt::Profiler::global().end(first, path);
      },
      py::arg("first"), py::arg("path"),
      "Writes the session's events as trace-event JSON; false on failure.");
  m.def(
      "profile_enabled", [] { return cpnrt::Profiler::global().enabled(); },
      "Whether a profile session is recording.");
  m.def("profile_now_us", &cpnrt::Profiler::nowUs,
        "The profiler's clock, in microseconds.");
  m.def(
      "profile_complete",
      [](std::string name, const std::string &cat, double startUs) {
        // Event categories are static strings: the Python layer's known ones.
        static const char *const cats[] = {"eager", "baseline", "copy"};
        for (const char *c : cats)
          if (cat == c)
            return cpnrt::Profiler::global().complete(std::move(name), c,
                                                      startUs);
        throw py::value_error("profile_complete: unknown category " + cat);
      },
      py::arg("name"), py::arg("cat"), py::arg("start_us"),
      "Adds an event of the Python layer that started at start_us and ends "
      "now.");
  m.def(
      "blas_config",
      [] {
        cpnrt::BlasConfig c = cpnrt::blasConfig();
        py::dict d;
        d["library"] = c.library;
        d["config"] = c.config;
        d["core"] = c.coreName;
        d["threads"] = c.threads;
        return d;
      },
      "The BLAS/LAPACK library the runtime calls: package, build, CPU "
      "kernels chosen, threads.");
  m.def("wait_all", [] {
    py::gil_scoped_release release;
    cpnrt::TaskGraph::global().waitAll();
  });
  m.def(
      "sync_if_idle",
      [] {
        cpn::Engine &engine = cpn::Engine::global();
        if (!engine.trace().empty() || cpn::hasFpReports() ||
            !cpnrt::TaskGraph::global().idle())
          return false;
        engine.flush(); // an empty window: a sync point's effect on cuts
        return true;
      },
      "synchronize()'s common case in one call, the GIL held: when nothing "
      "is recorded, in flight or reported, the sync point is made and True "
      "returned; False otherwise (flush_and_wait does the work).");
  m.def(
      "flush_and_wait",
      [] {
        // The window's kernel runs on this thread, which waits at once.
        cpnrt::TaskGraph::WaitFollows waitFollows;
        cpn::Engine::global().flush();
        py::gil_scoped_release release;
        cpnrt::TaskGraph::global().waitAll();
      },
      "flush(), then wait_all(): the flushed window's kernel runs on the "
      "calling thread.");
}
