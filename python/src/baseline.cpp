//===- baseline.cpp - the baseline tier's door into Python ----------------===//
//
// Part of cpnumeric. The Engine runs a window that is not worth waiting for a
// compile in the baseline tier (Engine::runBaseline): this file hands the
// window to cpnumeric._baseline (NumPy's loops, op by op) and gives that
// module the runtime's library calls (sorting, gathers, LAPACK) on NumPy
// arrays, so that the tier computes library calls with the same code as the
// compiled kernels.
//
//===----------------------------------------------------------------------===//

#include "bindings.h"
#include "cpn/Engine/Engine.h"
#include "cpnrt/Lapack.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <string>
#include <unordered_map>

namespace py = pybind11;

namespace {
/// The `cpn_lib_*` entry points by callee name ("take_f8").
const std::unordered_map<std::string, cpn_lib_fn> &libraryFunctions() {
  static const auto *table = [] {
    auto *t = new std::unordered_map<std::string, cpn_lib_fn>();
    size_t n = 0;
    const cpn_lib_entry *e = cpn_lib_functions(&n);
    for (size_t i = 0; i < n; ++i) {
      std::string name = e[i].name;
      if (name.rfind("cpn_lib_", 0) == 0)
        name = name.substr(8);
      (*t)[name] = e[i].fn;
    }
    return t;
  }();
  return *table;
}

/// Appends an array's layout words (offset, rank, sizes, strides in
/// elements; see cpnrt/Lapack.h).
void layoutWords(const py::array &a, std::vector<int64_t> &w) {
  w.push_back(0);
  w.push_back(a.ndim());
  for (py::ssize_t d = 0; d < a.ndim(); ++d)
    w.push_back(a.shape(d));
  for (py::ssize_t d = 0; d < a.ndim(); ++d) {
    if (a.strides(d) % a.itemsize())
      throw std::invalid_argument("cpnumeric: a library call's array has a "
                                  "stride that is not a whole element");
    w.push_back(a.strides(d) / a.itemsize());
  }
}
} // namespace

void initBaseline(py::module_ &m) {
  m.def(
      "set_baseline",
      [](py::object run) {
        // Leaked: the Engine outlives the interpreter's teardown.
        auto *fn = new py::object(std::move(run));
        cpn::Engine::global().setBaselineRunner([fn](cpn::BaselineWindow &w) {
          py::gil_scoped_acquire gil;
          py::list ops;
          for (const cpn::TraceOp &op : w.trace.ops())
            ops.append(py::make_tuple(op.name, py::tuple(py::cast(op.operands)),
                                      py::tuple(py::cast(op.iattrs)), op.sattr,
                                      py::tuple(py::cast(op.shape)),
                                      cpnrt::dtypeName(op.dtype),
                                      int(op.fpChecks)));
          // A donated input is writable: its old value dies in the window.
          std::vector<bool> donated(w.trace.inputs().size(), false);
          for (int32_t d : w.donors)
            if (d >= 0)
              donated[d] = true;
          py::list inputs, dests;
          for (size_t i = 0; i < w.trace.inputs().size(); ++i)
            // Read by the runner on this thread, then let go: a borrowed
            // NumPy buffer stays borrowed where no other thread could
            // write it meanwhile (storeOwner).
            inputs.append(storeArray(w.trace.inputs()[i]->store, donated[i],
                                     false, true));
          for (const cpnrt::StoreRef &d : w.dests)
            dests.append(storeArray(d, true));
          py::list sites;
          if (w.fp)
            for (const std::string &name : w.fp->names)
              sites.append(name);
          py::object status =
              (*fn)(ops, inputs, py::cast(w.outputs), dests, sites, w.threads);
          if (status.is_none())
            return false;
          if (PyExceptionInstance_Check(status.ptr())) {
            cpnrt::Failure failure = failureOf(status);
            w.error = std::move(failure.message);
            w.errorKind = failure.kind;
            return true;
          }
          auto words = status.cast<std::vector<int32_t>>();
          for (size_t i = 0; i < words.size() && i < w.status.size(); ++i)
            w.status[i] |= words[i];
          return true;
        });
      },
      py::arg("run"),
      "Sets the baseline tier's runner: run(ops, inputs, outputs, dests, "
      "fp_sites, threads) computes the window's outputs into `dests` (inputs "
      "donated to an output are writable) on at most `threads` threads and "
      "returns the fp status words; None "
      "(nothing written) when it cannot; the exception when an op failed "
      "after a donated input was written (the window's values fail with it: "
      "LinAlgError, IndexError, MemoryError as they are, another class as "
      "RuntimeError).");
  m.def(
      "updates_first_input",
      [](const std::string &callee) {
        return cpnrt::updatesFirstInput(callee);
      },
      py::arg("callee"),
      "Whether runtime library call `callee` (put_f8, at_add_f8) computes "
      "its output as its first input with some elements rewritten, and "
      "skips that copy when given the first input's buffer as its output.");
  m.def(
      "call_library",
      [](const std::string &callee, py::array out,
         const std::vector<py::array> &inputs,
         const std::vector<int64_t> &args) {
        auto it = libraryFunctions().find(callee);
        if (it == libraryFunctions().end())
          throw std::invalid_argument("cpnumeric: no library call '" + callee +
                                      "'");
        if (inputs.size() > 3)
          throw std::invalid_argument(
              "cpnumeric: a library call takes at most 3 inputs");
        if (!(out.flags() & py::array::c_style) || !out.writeable())
          throw std::invalid_argument("cpnumeric: a library call's output "
                                      "must be a writable C-ordered array");
        std::vector<int64_t> meta{int64_t(1 + inputs.size())};
        layoutWords(out, meta);
        int64_t ptrs[3] = {0, 0, 0};
        for (size_t i = 0; i < inputs.size(); ++i) {
          layoutWords(inputs[i], meta);
          ptrs[i] = reinterpret_cast<int64_t>(inputs[i].data());
        }
        meta.push_back(static_cast<int64_t>(args.size()));
        meta.insert(meta.end(), args.begin(), args.end());
        {
          py::gil_scoped_release release;
          it->second(reinterpret_cast<int64_t>(meta.data()),
                     reinterpret_cast<int64_t>(out.mutable_data()), ptrs[0],
                     ptrs[1], ptrs[2]);
        }
        // Raised as the class of its kind (errors.cpp): LinAlgError, ...
        if (cpnrt::Failure error = cpnrt::takeKernelError())
          throw cpnrt::Error(error);
      },
      py::arg("callee"), py::arg("out"), py::arg("inputs"), py::arg("args"),
      "Runs runtime library call `callee` (cpn_lib_<callee>) on NumPy arrays "
      "into `out` (C-ordered, of the call's output layout), as a compiled "
      "cpn.libcall does; raises the call's error (numpy.linalg.LinAlgError, "
      "IndexError).");
}
