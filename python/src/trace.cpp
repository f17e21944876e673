//===- trace.cpp - recording ops from Python ------------------------------===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#include "bindings.h"
#include "cpn/Compiler/Compiler.h"
#include "cpn/Engine/Engine.h"

#include <pybind11/stl.h>

#include <dlfcn.h>
#include <frameobject.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>

#include <cstring>

#include <cstdint>
#include <limits>

namespace py = pybind11;
using cpn::NodeRef;

namespace {
/// The ints of a sequence, or false with a TypeError set.
bool int64s(PyObject *seq, const char *what, std::vector<int64_t> &out) {
  PyObject *fast = PySequence_Fast(seq, what);
  if (!fast)
    return false;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  out.resize(n);
  PyObject **items = PySequence_Fast_ITEMS(fast);
  for (Py_ssize_t i = 0; i < n; ++i) {
    out[i] = PyLong_AsLongLong(items[i]);
    if (out[i] == -1 && PyErr_Occurred()) {
      Py_DECREF(fast);
      return false;
    }
  }
  Py_DECREF(fast);
  return true;
}

std::string utf8(PyObject *s) {
  Py_ssize_t n;
  const char *p = PyUnicode_AsUTF8AndSize(s, &n);
  if (!p)
    throw py::error_already_set();
  return std::string(p, n);
}

/// The bytes this process could be given at once: physical memory and swap,
/// and no more than its address-space limit (RLIMIT_AS, where one is set:
/// NumPy's allocation fails there with a MemoryError at once, fuzz
/// 760:12742), read when first asked.
uint64_t addressableBytes() {
  static const uint64_t bytes = [] {
    uint64_t b = std::numeric_limits<uint64_t>::max();
    struct sysinfo si;
    if (sysinfo(&si) == 0)
      b = (static_cast<uint64_t>(si.totalram) + si.totalswap) * si.mem_unit;
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
      b = std::min<uint64_t>(b, rl.rlim_cur);
    return b;
  }();
  return bytes;
}

/// NumPy's checks of a new array's size, at the call that asks for it (the
/// store is allocated later, when the trace runs): a negative dimension or a
/// size beyond what the address space holds is a ValueError, more bytes than
/// the machine has (memory and swap) a MemoryError with NumPy's message. A
/// view allocates nothing: a broadcast may be larger than memory.
bool checkNewArray(const std::string &name, const std::vector<int64_t> &shape,
                   cpnrt::DType dtype) {
  uint64_t n = 1;
  bool overflow = false;
  for (int64_t d : shape) {
    if (d < 0) {
      PyErr_SetString(PyExc_ValueError, "negative dimensions are not allowed");
      return false;
    }
    overflow |= __builtin_mul_overflow(n, static_cast<uint64_t>(d), &n);
  }
  if (name == "view")
    return true;
  uint64_t bytes;
  overflow |= __builtin_mul_overflow(n, cpnrt::dtypeSize(dtype), &bytes);
  if (overflow || bytes > static_cast<uint64_t>(PTRDIFF_MAX)) {
    PyErr_SetString(PyExc_ValueError,
                    "array is too big; `arr.size * arr.dtype.itemsize` is "
                    "larger than the maximum possible size.");
    return false;
  }
  if (bytes <= addressableBytes())
    return true;
  static const char *units[] = {"bytes", "KiB", "MiB", "GiB",
                                "TiB",   "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  std::string dims;
  for (int64_t d : shape)
    dims += std::to_string(d) + ", ";
  if (shape.size() > 1)
    dims.resize(dims.size() - 2);
  else if (shape.size() == 1)
    dims.pop_back();
  static const char *names[] = {"bool",    "int8",    "int16",  "int32",
                                "int64",   "uint8",   "uint16", "uint32",
                                "uint64",  "float32", "float64", "float16",
                                "complex64", "complex128"};
  char msg[512];
  snprintf(msg, sizeof(msg),
           "Unable to allocate %.3g %s for an array with shape (%s) and data "
           "type %s",
           v, units[u], dims.c_str(), names[static_cast<int>(dtype)]);
  PyErr_SetString(PyExc_MemoryError, msg);
  return false;
}

/// The directory of this module (the cpnumeric package): frames of code
/// there are cpnumeric's own, not the user's.
const std::string &packageDir() {
  static const std::string dir = [] {
    Dl_info info;
    if (!dladdr(reinterpret_cast<void *>(&packageDir), &info) ||
        !info.dli_fname)
      return std::string();
    std::string path = info.dli_fname;
    size_t slash = path.rfind('/');
    return slash == std::string::npos ? std::string()
                                      : path.substr(0, slash + 1);
  }();
  return dir;
}

/// The file and line of the innermost Python frame outside the package.
bool userLocation(std::string &file, int32_t &line) {
  PyThreadState *ts = PyThreadState_Get();
  PyFrameObject *f = PyThreadState_GetFrame(ts); // new references throughout
  const std::string &dir = packageDir();
  while (f) {
    PyCodeObject *code = PyFrame_GetCode(f);
    Py_ssize_t n;
    const char *name = PyUnicode_AsUTF8AndSize(code->co_filename, &n);
    bool ours = !name || (!dir.empty() && static_cast<size_t>(n) >= dir.size() &&
                          std::memcmp(name, dir.data(), dir.size()) == 0);
    if (!ours) {
      file.assign(name, n);
      line = PyFrame_GetLineNumber(f);
    }
    Py_DECREF(code);
    if (!ours) {
      Py_DECREF(f);
      return true;
    }
    PyFrameObject *back = PyFrame_GetBack(f);
    Py_DECREF(f);
    f = back;
  }
  PyErr_Clear();
  return false;
}
} // namespace

NodeRef recordFromPython(std::string name, const std::vector<NodeRef> &operands,
                         std::vector<int64_t> iattrs, std::string sattr,
                         std::vector<int64_t> shape, cpnrt::DType dtype) {
  if (!checkNewArray(name, shape, dtype))
    return nullptr;
  cpn::Engine &engine = cpn::Engine::global();
  cpn::Trace &trace = engine.trace();
  // Only where no location is set (CPN_DUMP_IR sets one for every op).
  bool locate = trace.fpChecks() && !trace.locationLine() &&
                cpn::canRaiseFpError(name);
  if (locate) {
    std::string file;
    int32_t line = 0;
    if (!userLocation(file, line))
      locate = false;
    else
      trace.setLocation(std::move(file), line);
  }
  struct Reset {
    cpn::Trace &trace;
    bool on;
    ~Reset() {
      if (on)
        trace.setLocation("", 0);
    }
  } reset{trace, locate};
  return engine.record(std::move(name), operands, std::move(iattrs),
                       std::move(sattr), std::move(shape), dtype);
}

namespace {
/// op(name, operands, iattrs, sattr, shape, dtype): Engine::record, with the
/// arguments read by the CPython API (this is called for every recorded op;
/// pybind11's generic casting of six arguments cost more than the record).
PyObject *op(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 6) {
    PyErr_SetString(PyExc_TypeError,
                    "op(name, operands, iattrs, sattr, shape, dtype)");
    return nullptr;
  }
  if (!PyUnicode_Check(args[0]) || !PyUnicode_Check(args[3]) ||
      !PyUnicode_Check(args[5])) {
    PyErr_SetString(PyExc_TypeError, "op: name, sattr and dtype are strings");
    return nullptr;
  }
  return translatingExceptions([&]() -> PyObject * {
    std::vector<int64_t> iattrs, shape;
    if (!int64s(args[2], "op: iattrs must be a sequence of ints", iattrs) ||
        !int64s(args[4], "op: shape must be a sequence of ints", shape))
      return nullptr;
    PyObject *fast =
        PySequence_Fast(args[1], "op: operands must be a sequence");
    if (!fast)
      return nullptr;
    std::vector<NodeRef> operands;
    try {
      Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
      operands.reserve(n);
      for (Py_ssize_t i = 0; i < n; ++i)
        operands.push_back(
            py::cast<NodeRef>(py::handle(PySequence_Fast_GET_ITEM(fast, i))));
    } catch (...) {
      Py_DECREF(fast);
      throw;
    }
    Py_DECREF(fast);
    cpnrt::DType dtype = cpnrt::parseDType(utf8(args[5]));
    NodeRef r = recordFromPython(utf8(args[0]), operands, std::move(iattrs),
                                 utf8(args[3]), std::move(shape), dtype);
    if (!r)
      return nullptr;
    return py::cast(std::move(r)).release().ptr();
  });
}

PyMethodDef opMethods[] = {
    {"op", reinterpret_cast<PyCFunction>(reinterpret_cast<void *>(op)),
     METH_FASTCALL,
     "op(name, operands, iattrs, sattr, shape, dtype): records one cpn op in "
     "the current trace and returns its pending value."},
    {nullptr, nullptr, 0, nullptr}};
} // namespace

void initTrace(py::module_ &m) {
  py::class_<cpn::ValueNode, NodeRef>(m, "Node")
      .def_property_readonly("shape",
                             [](const cpn::ValueNode &n) {
                               py::tuple t(n.shape.size());
                               for (size_t i = 0; i < n.shape.size(); ++i)
                                 t[i] = n.shape[i];
                               return t;
                             })
      .def_property_readonly("dtype",
                             [](const cpn::ValueNode &n) {
                               return std::string(cpnrt::dtypeName(n.dtype));
                             })
      .def_property_readonly(
          "materialized",
          [](const cpn::ValueNode &n) { return static_cast<bool>(n.store); })
      .def_property(
          "bounds",
          [](const cpn::ValueNode &n) -> py::object {
            if (!n.bounds)
              return py::none();
            return py::make_tuple(n.bounds->first, n.bounds->second);
          },
          [](cpn::ValueNode &n, std::pair<int64_t, int64_t> b) {
            n.bounds = b;
          },
          "(least, greatest) element of an integer value, as an index check "
          "found them; None before.")
      .def_property_readonly(
          "ptr",
          [](const cpn::ValueNode &n) {
            return reinterpret_cast<uintptr_t>(&n);
          },
          "The node's identity (Python wrappers of one node may differ).");

  if (PyModule_AddFunctions(m.ptr(), opMethods) < 0)
    throw py::error_already_set();
  m.def(
      "set_location",
      [](std::string file, int32_t line) {
        cpn::Engine::global().trace().setLocation(std::move(file), line);
      },
      py::arg("file"), py::arg("line"),
      "The Python line of the ops recorded next (IR locations, summary.txt).");
  m.def("trace_len", [] { return cpn::Engine::global().trace().size(); });
  m.def(
      "trace_text", [] { return cpn::Engine::global().trace().str(); },
      "The current trace, as the `trace` stage of IR dumps shows it.");
  m.def(
      "trace_module",
      [] {
        auto &t = cpn::Engine::global().trace();
        return cpn::buildModuleText(t, t.liveResults());
      },
      "The cpn module the current trace would compile to.");
}
