//===- compiler.cpp - flushing, options and statistics --------------------===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#include "cpn/Compiler/Compiler.h"
#include "bindings.h"
#include "cpn/Engine/Engine.h"
#include "cpn/Trace/ViewBox.h"
#include "cpnrt/Blas.h"
#include "cpnrt/Comm.h"
#include "cpnrt/TaskGraph.h"

#include <pybind11/stl.h>

namespace py = pybind11;

/// A cpn::SizeExpr as Python passes it: (c, coefficients).
using Affine = std::pair<int64_t, std::vector<int64_t>>;

/// A binding that sets one of the Engine's options and returns its old value.
template <typename T>
static auto optionSetter(T cpn::CompilerOptions::*field) {
  return [field](T value) {
    cpn::CompilerOptions &o = cpn::Engine::global().options();
    T old = o.*field;
    o.*field = value;
    return old;
  };
}

void initCompiler(py::module_ &m) {
  m.def(
      "flush", [] { cpn::Engine::global().flush(); },
      "Compiles and submits the pending trace (returns before it runs).");
  m.def("statement_end", [] { cpn::Engine::global().statementEnd(); });
  m.def(
      "set_fp_state",
      [](int checks, std::array<int, 3> actions) {
        std::array<uint8_t, 3> a;
        for (int i = 0; i < 3; ++i)
          a[i] = static_cast<uint8_t>(actions[i]);
        cpn::Engine::global().setFpState(static_cast<uint8_t>(checks), a);
      },
      py::arg("checks"), py::arg("actions"),
      "np.errstate: FpError bits checked in ops recorded from now on, and "
      "the action per category (divide, over, invalid).");
  m.def(
      "set_fp_quiet",
      [](bool quiet) { cpn::Engine::global().setFpQuiet(quiet); },
      py::arg("quiet"), "No floating-point checks in ops recorded while set.");
  m.def(
      "take_fp_reports",
      [] {
        py::list out;
        for (const cpn::FpReport &r : cpn::takeFpReports())
          out.append(py::make_tuple(r.op, int(r.bits), int(r.actions[0]),
                                    int(r.actions[1]), int(r.actions[2]),
                                    r.file, r.line));
        return out;
      },
      "(op, FpError bits, divide/over/invalid actions, file, line) of every "
      "checked op of the kernel runs finished since the last call that found "
      "errors; file and line say where the op was recorded.");
  m.def(
      "configure",
      [](std::string dumpDir, size_t traceLimit, int optLevel, int threads,
         std::string cacheDir, uint64_t cacheMaxBytes, uint64_t baselineWork,
         bool backgroundCompile) {
        auto &o = cpn::Engine::global().options();
        o.baselineWork = baselineWork;
        o.backgroundCompile = backgroundCompile;
        o.dumpDir = std::move(dumpDir);
        o.cacheDir = std::move(cacheDir);
        o.cacheMaxBytes = cacheMaxBytes;
        o.traceLimit = std::max<size_t>(1, traceLimit);
        o.optLevel = optLevel;
        cpn::setKernelThreads(threads);
      },
      py::arg("dump_dir"), py::arg("trace_limit"), py::arg("opt_level"),
      py::arg("threads") = 0, py::arg("cache_dir") = "",
      py::arg("cache_max_bytes") = uint64_t(1) << 30,
      py::arg("baseline_work") = uint64_t(1) << 26,
      py::arg("background_compile") = true);
  py::class_<cpn::CapturedTrace, std::shared_ptr<cpn::CapturedTrace>>(
      m, "CapturedTrace",
      "A function's whole trace, compiled once (see cpnumeric.jit).")
      .def_readonly("inputs", &cpn::CapturedTrace::inputs)
      .def_readonly("results", &cpn::CapturedTrace::results)
      .def(
          "forget_values",
          [](cpn::CapturedTrace &c, const std::vector<size_t> &argInputs) {
            // Later calls read only shapes and dtypes here: the first
            // call's arguments and results are the caller's to free (a
            // borrowed NumPy argument's buffer among them).
            auto shapeOnly = [](const cpn::NodeRef &n) {
              auto s = std::make_shared<cpn::ValueNode>();
              s->shape = n->shape;
              s->dtype = n->dtype;
              return s;
            };
            for (size_t i : argInputs)
              if (i < c.inputs.size())
                c.inputs[i] = shapeOnly(c.inputs[i]);
            for (cpn::NodeRef &r : c.results)
              r = shapeOnly(r);
          },
          py::arg("arg_inputs"),
          "Replaces the inputs at `arg_inputs` (the function's arguments) "
          "and the results by shape-only nodes, once the entry is built.")
      .def_property(
          "shape_symbols",
          [](const cpn::CapturedTrace &c) { return c.shapeSymbols.sizes; },
          [](cpn::CapturedTrace &c, std::map<int64_t, int> sizes) {
            c.shapeSymbols.sizes = std::move(sizes);
          },
          "{representative size: dimension number}: input dimensions of "
          "these sizes are dynamic in object() and as_text()")
      .def(
          "set_shape_model",
          [](cpn::CapturedTrace &c,
             const std::map<int32_t, std::vector<Affine>> &shapes,
             const std::map<
                 int32_t, std::tuple<std::vector<int64_t>, std::vector<int64_t>,
                                     std::vector<Affine>>> &boxes) {
            auto expr = [](const Affine &a) {
              return cpn::SizeExpr{a.first, a.second};
            };
            c.shapeSymbols.shapes.clear();
            c.shapeSymbols.boxes.clear();
            for (const auto &[i, dims] : shapes)
              for (const Affine &a : dims)
                c.shapeSymbols.shapes[i].push_back(expr(a));
            for (const auto &[i, box] : boxes) {
              cpn::SizeBox &to = c.shapeSymbols.boxes[i];
              to.owner = std::get<0>(box);
              to.coeffs = std::get<1>(box);
              for (const Affine &a : std::get<2>(box))
                to.starts.push_back(expr(a));
            }
          },
          py::arg("shapes"), py::arg("boxes"),
          "cpnc's fit of a shape-generic trace: {op: [(c, coefs) per "
          "dimension]} and {op: (owner, coeffs, [(c, coefs) per base "
          "dimension])} for its views and updates (cpn::ShapeSymbols).")
      .def(
          "op_fields",
          [](const cpn::CapturedTrace &c) {
            py::list out;
            const cpn::Trace &t = c.trace;
            for (const cpn::TraceOp &op : t.ops()) {
              py::object box = py::none();
              if (cpn::hasViewOffset(op) && !op.operands.empty()) {
                std::vector<int64_t> sizes =
                    op.name == "view" ? op.shape
                    : op.operands.size() > 1
                        ? t.operandShape(op.operands[1])
                        : std::vector<int64_t>();
                std::optional<cpn::BoxView> v = cpn::decomposeView(
                    t.operandShape(op.operands[0]), op.iattrs[0],
                    std::vector<int64_t>(op.iattrs.begin() + 1,
                                         op.iattrs.end()),
                    sizes);
                if (v)
                  box = py::make_tuple(v->offsets, v->owner, v->coeffs);
              }
              out.append(py::make_tuple(op.name, op.operands, op.shape,
                                        op.iattrs, op.sattr, box, op.file,
                                        op.line));
            }
            return out;
          },
          "Per op: (name, operands, shape, iattrs, sattr, box or None, file, "
          "line); box is a view's or update's (offsets, owner, coeffs) per "
          "base dimension (cpn/Trace/ViewBox.h).")
      .def("call", &cpn::CapturedTrace::call, py::arg("args"),
           "Runs the compiled trace on new inputs; returns the new results.")
      .def(
          "as_text",
          [](const cpn::CapturedTrace &c, const std::string &stage) {
            return cpn::stageText(c.trace, c.outputs, stage,
                                  cpn::Engine::global().options().optLevel,
                                  c.shapeSymbols);
          },
          py::arg("stage"))
      .def(
          "object",
          [](const cpn::CapturedTrace &c, const std::string &symbol,
             int optLevel, const std::string &target,
             const std::string &dumpDir) {
            cpn::ObjectOptions o;
            o.symbol = symbol;
            o.optLevel = optLevel;
            o.target = target;
            o.dumpDir = dumpDir;
            o.symbols = c.shapeSymbols;
            std::vector<char> obj = cpn::compileObject(c.trace, c.outputs, o);
            return py::bytes(obj.data(), obj.size());
          },
          py::arg("symbol"), py::arg("opt_level") = 3,
          py::arg("target") = "openmp", py::arg("dump_dir") = "",
          "A position-independent ELF object exporting `symbol` (cpnc), for a "
          "target of cpn/Compiler/Target.h (\"openmp\", \"cpu\"; an unknown "
          "name raises ValueError).")
      .def("cost", [](const cpn::CapturedTrace &c) {
        cpn::TraceCost t = cpn::traceCost(c.trace, c.outputs);
        py::dict d;
        d["values"] = t.values;
        d["outputs"] = t.outputs;
        d["kernels"] = t.kernels;
        d["temporaries"] = t.temporaries;
        d["bytes_moved"] = t.bytesMoved;
        d["argument_bytes"] = t.argumentBytes;
        d["peak_bytes"] = t.peakBytes;
        return d;
      });
  m.def(
      "begin_capture", [] { cpn::Engine::global().beginCapture(); },
      "Flushes, then records one window without cuts (for @jit).");
  m.def(
      "end_capture",
      [](bool execute) { return cpn::Engine::global().endCapture(execute); },
      py::arg("execute"));
  m.def("capturing", [] { return cpn::Engine::global().capturing(); });
  m.def("set_baseline_work", optionSetter(&cpn::CompilerOptions::baselineWork),
        py::arg("work"),
        "Sets CPN_BASELINE_WORK (0: every window compiled); returns the old "
        "value.");
  m.def("set_simulate_ranks",
        optionSetter(&cpn::CompilerOptions::simulateRanks), py::arg("ranks"),
        "Sets CPN_SIMULATE_RANKS (0 or 1: off); returns the old value.");
  m.def(
      "set_partition",
      [](bool on, int64_t ranks, int64_t rank) {
        cpn::CompilerOptions &o = cpn::Engine::global().options();
        bool old = o.partition;
        o.partition = on;
        o.ranks = ranks;
        o.rank = rank;
        return old;
      },
      py::arg("on"), py::arg("ranks"), py::arg("rank"),
      "Sets CPN_PARTITION: under several ranks each window is compiled into "
      "this rank's program over blocks of rows; returns the old setting.");
  m.def("set_partition_threshold",
        optionSetter(&cpn::CompilerOptions::partitionThreshold),
        py::arg("elements"),
        "Sets CPN_PARTITION_THRESHOLD (values with fewer elements are "
        "replicated); returns the old value.");
  m.def("set_halo_overlap", optionSetter(&cpn::CompilerOptions::haloOverlap),
        py::arg("elements"),
        "Sets CPN_HALO_OVERLAP (a partitioned stencil window whose blocks "
        "hold at least this many elements computes its interior while its "
        "halo rows travel; 0: never); returns the old value.");
  m.def("set_background_compile",
        optionSetter(&cpn::CompilerOptions::backgroundCompile), py::arg("on"),
        "Sets CPN_BACKGROUND_COMPILE; returns the old value.");
  m.def(
      "stop_compiles",
      [] {
        py::gil_scoped_release release;
        cpn::Engine::stopCompiles();
      },
      "At exit: drops the compiler thread's queued windows and waits for "
      "the one it is compiling (LLVM's statics must outlive it).");
  m.def(
      "wait_compiles",
      [] {
        {
          py::gil_scoped_release release;
          cpn::Engine::waitCompilerIdle();
        }
        cpn::Engine::global().collectCompiles();
      },
      "Waits for the compiler thread's queued windows and collects their "
      "kernels (tests, benchmarks: what stats() counts no longer moves).");
  m.def("set_kernel_threads", &cpn::setKernelThreads, py::arg("threads"));
  m.def("kernel_threads", &cpn::kernelThreads,
        "OpenMP threads compiled kernels run on.");
  m.def("stats", [] {
    cpn::Engine::global().collectCompiles();
    const auto &s = cpn::Engine::global().stats();
    cpnrt::PoolStats p = cpnrt::poolStats();
    py::dict d;
    d["flushes"] = s.flushes;
    d["compilations"] = s.compilations;
    d["cache_hits"] = s.cacheHits;
    d["ops_recorded"] = s.opsRecorded;
    d["values_materialized"] = s.valuesMaterialized;
    d["dead_values_skipped"] = s.deadValuesSkipped;
    d["buffers_donated"] = s.buffersDonated;
    d["compile_seconds"] = s.compileSeconds;
    d["compile_mlir_seconds"] = s.compileMlirSeconds;
    d["disk_hits"] = s.diskHits;
    d["disk_writes"] = s.diskWrites;
    d["windows_recovered"] = s.windowsRecovered;
    d["values_failed"] = s.valuesFailed;
    d["disk_load_seconds"] = s.diskLoadSeconds;
    d["baseline_windows"] = s.baselineWindows;
    // CPN_SIMULATE_RANKS: per rank, summed over the windows run.
    d["simulated_ranks"] = cpn::Engine::global().options().simulateRanks;
    d["simulated_runs"] = s.simulatedRuns;
    // What this rank received from the others (messages and collectives
    // submitted under several ranks): CPN_SIMULATE_RANKS's counts measured.
    cpnrt::comm::Traffic t = cpnrt::comm::traffic();
    d["comm_bytes_received"] = t.bytesReceived;
    d["comm_messages"] = t.messages;
    d["comm_collectives"] = t.collectives;
    d["simulated_bytes"] = s.simulated.bytes;
    d["simulated_operations"] = s.simulated.operations;
    d["simulated_bytes_by_kind"] = s.simulated.bytesByKind;
    d["simulated_operations_by_kind"] = s.simulated.operationsByKind;
    d["offset_arg_windows"] = s.offsetArgWindows;
    d["halo_overlap_windows"] = s.haloOverlapWindows;
    d["baseline_seconds"] = s.baselineSeconds;
    d["background_compiles"] = s.backgroundCompiles;
    d["compile_wait_seconds"] = s.compileWaitSeconds;
    cpn::CheckCompileStats c = cpn::checkCompileStats();
    d["check_compilations"] = c.compilations;
    d["check_compile_seconds"] = c.seconds;
    d["tasks_run"] = cpnrt::TaskGraph::global().tasksRun();
    cpnrt::BlasStats b = cpnrt::blasStats();
    d["symmetry_checks"] = b.symmetryChecks;
    d["symmetric_products"] = b.symmetricProducts;
    d["buffer_allocations"] = p.allocations;
    d["buffer_reuses"] = p.reuses;
    d["bytes_live"] = p.bytesLive;
    d["bytes_peak"] = p.bytesPeak;
    d["bytes_cached"] = p.bytesCached;
    // np.asarray's shared exports, and the copies later reads of them took.
    cpn::LendStats l = cpn::lendStats();
    d["exports_shared"] = l.exports;
    d["export_copies"] = l.copies;
    d["export_copy_bytes"] = l.bytesCopied;
    // NumPy arrays in: borrowed by cp.asarray, or copied into stores.
    d["imports_borrowed"] = l.importsBorrowed;
    // Held NumPy arrays borrowed under write protection (cpnrt::Store::
    // borrow), and the copies writes to them made.
    cpnrt::GuardStats g = cpnrt::guardStats();
    d["imports_guarded"] = g.borrowed;
    d["guard_copies"] = g.copies;
    d["guard_copy_bytes"] = g.copyBytes;
    d["import_copies"] = l.importCopies;
    d["import_copy_bytes"] = l.importBytes;
    return d;
  });
  m.def("reset_stats", [] {
    cpn::Engine::global().resetStats();
    cpn::resetCheckCompileStats();
    cpnrt::resetPoolStats();
    cpnrt::resetBlasStats();
    cpnrt::comm::resetTraffic();
    cpn::resetLendStats();
    cpnrt::resetGuardStats();
  });
}
