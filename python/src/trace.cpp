//===- trace.cpp - recording ops from Python ------------------------------===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#include "bindings.h"
#include "cpn/Compiler/Compiler.h"

#include <pybind11/stl.h>

namespace py = pybind11;
using cpn::NodeRef;

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
      .def_property_readonly(
          "ptr",
          [](const cpn::ValueNode &n) {
            return reinterpret_cast<uintptr_t>(&n);
          },
          "The node's identity (Python wrappers of one node may differ).");

  m.def(
      "op",
      [](std::string name, const std::vector<NodeRef> &operands,
         std::vector<int64_t> iattrs, std::string sattr,
         std::vector<int64_t> shape, const std::string &dtype) {
        return cpn::Engine::global().record(
            std::move(name), operands, std::move(iattrs), std::move(sattr),
            std::move(shape), cpnrt::parseDType(dtype));
      },
      py::arg("name"), py::arg("operands"), py::arg("iattrs"), py::arg("sattr"),
      py::arg("shape"), py::arg("dtype"),
      "Records one cpn op in the current trace and returns its pending value.");
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
