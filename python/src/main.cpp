//===- main.cpp - the _cpn pybind11 module ---------------------------------===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#include "bindings.h"
#include "cpn/Engine/Engine.h"
#include "cpnrt/TaskGraph.h"

namespace py = pybind11;

PYBIND11_MODULE(_cpn, m) {
  m.doc() = "cpnumeric's C++ side: trace recording, compiler, runtime";
  initErrors(m);
  initTrace(m);
  initCompiler(m);
  initRuntime(m);
  initFast(m);
  initBaseline(m);
  initRanks(m);
  initAllocator(m);
  // A Python thread that finds another inside the engine (its flush let the
  // GIL go, in NumPy's loops or a library call) waits for it without the
  // GIL, which that thread needs to finish.
  cpn::Engine::setGateWaiter([](void (*wait)()) {
    if (PyGILState_Check()) {
      py::gil_scoped_release release;
      wait();
    } else {
      wait();
    }
  });
  // The runtime's task graph starts its worker at import, as NumPy sets
  // itself up at import: a program's first sync point does not pay for the
  // thread (~60 us, a tenth of a 3000-element Python loop's run).
  cpnrt::TaskGraph::global();
}
