//===- ranks.cpp - the ranks of an MPI launch, for Python ------------------===//
//
// Part of cpnumeric. Thin bindings of cpnrt/Comm.h; python/cpnumeric/_ranks.py
// decides what a rank does with them.
//
//===----------------------------------------------------------------------===//

#include "bindings.h"
#include "cpnrt/Comm.h"

namespace py = pybind11;

void initRanks(py::module_ &m) {
  namespace comm = cpnrt::comm;
  m.def("mpi_launched", &comm::launchedByMpi,
        "Whether an MPI launcher started this process (its environment).");
  m.def("mpi_start", &comm::start,
        "Starts MPI if an MPI launcher started this process; returns whether "
        "MPI is active.");
  m.def("mpi_active", &comm::active);
  m.def("mpi_rank", &comm::rank);
  m.def("mpi_size", &comm::size);
  m.def("mpi_local_rank", &comm::localRank);
  m.def("mpi_local_size", &comm::localSize);
  m.def("mpi_thread_level", &comm::threadLevel);
  m.def("mpi_library_version", &comm::libraryVersion);
  m.def(
      "mpi_barrier",
      [] {
        py::gil_scoped_release release;
        comm::barrier();
      },
      "Waits until every rank has called it.");
  m.def(
      "mpi_broadcast_u64",
      [](uint64_t value, int root) {
        py::gil_scoped_release release;
        comm::broadcast(&value, sizeof value, root);
        return value;
      },
      py::arg("value"), py::arg("root") = 0,
      "Root's value, on every rank.");
  m.def(
      "mpi_min_max",
      [](int64_t value) {
        int64_t lo, hi;
        {
          py::gil_scoped_release release;
          comm::minMax(value, lo, hi);
        }
        return py::make_tuple(lo, hi);
      },
      py::arg("value"), "(min, max) of value over the ranks.");
  m.def(
      "mpi_abort",
      [](const std::string &message, int code) {
        comm::abortAll(message, code);
      },
      py::arg("message"), py::arg("code") = 1,
      "Prints message (with this rank) and ends every rank with `code`.");
  m.def(
      "mpi_finish",
      [](double waitSeconds) {
        py::gil_scoped_release release;
        comm::finish(waitSeconds);
      },
      py::arg("wait_seconds"),
      "Ends MPI if this process started it (at a normal exit), after every "
      "rank got there; ends them all if they do not within wait_seconds.");
}
