//===- Trace.h - the op list recorded from Python calls --------*- C++ -*-===//
//
// Part of cpnumeric. No MLIR here: a trace is a compact list of ops, hashed as
// it is built, so that a flush whose hash is known never touches MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_TRACE_TRACE_H
#define CPN_TRACE_TRACE_H

#include "cpn/Trace/FpErrors.h"
#include "cpnrt/Error.h"
#include "cpnrt/Store.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cpn {

/// The number of elements of an array of this shape.
inline int64_t numel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// A value seen from Python: either materialized (it has a store) or pending
/// (the result of op `opIndex` of the current trace). Python handles hold it
/// by shared_ptr; the trace only holds weak references to op results, so a
/// result whose handles all died is never materialized.
struct ValueNode {
  std::vector<int64_t> shape;
  cpnrt::DType dtype;
  cpnrt::StoreRef store;
  int32_t opIndex = -1;
  uint64_t epoch = 0;
  // Why the value could not be computed (its window failed to compile and
  // this op, or one it reads, was the cause; or the baseline tier's op
  // failed after writing an input in place); reading it raises this, as a
  // cpnrt::Error of this kind (a compiler's error: Runtime).
  std::string error;
  cpnrt::ErrorKind errorKind = cpnrt::ErrorKind::Runtime;
  // The least and greatest element, once an index check has computed them
  // (a value never changes: a write makes a new node).
  std::optional<std::pair<int64_t, int64_t>> bounds;

  int64_t numel() const { return cpn::numel(shape); }
};
using NodeRef = std::shared_ptr<ValueNode>;

/// A value whose store NumPy arrays share (np.asarray; cpnrt::Store::lent)
/// gets a copy of its elements as they are now, its own from here on:
/// kernels that read it run later, and NumPy code may write the shared
/// buffer before they do. Called wherever a computed value enters a kernel.
void detachIfLent(ValueNode &node);

/// np.asarray's exports that shared a store, and the copies that reads of
/// lent stores took later (detachIfLent), for stats().
struct LendStats {
  uint64_t exports = 0, copies = 0, bytesCopied = 0;
  /// NumPy arrays brought in: borrowed (cp.asarray without a copy) and
  /// copied (from_numpy), with the bytes copied.
  uint64_t importsBorrowed = 0, importCopies = 0, importBytes = 0;
};
LendStats lendStats();
void countSharedExport();
void countImport(bool borrowed, uint64_t bytes);
void resetLendStats();

/// One recorded op. Operand references: k >= 0 is the result of op k,
/// k < 0 is input -k-1.
struct TraceOp {
  std::string name;
  std::vector<int32_t> operands;
  std::vector<int64_t> iattrs;
  std::string sattr;
  std::vector<int64_t> shape;
  cpnrt::DType dtype;
  std::weak_ptr<ValueNode> result;
  // The Python line that recorded the op (only when IR is dumped): IR
  // locations, and the source lines of each kernel in summary.txt.
  std::string file;
  int32_t line = 0;
  // Which floating-point errors the compiled op reports (FpError bits; 0:
  // none): those errstate did not set to 'ignore' when it was recorded.
  uint8_t fpChecks = 0;
  // A view or update whose element offset (iattrs[0]) is a kernel argument
  // (Engine::chooseOffsetArgs sets it on the window being compiled): the
  // kernel takes one i64 per such op, in op order, after its inputs.
  bool offsetArg = false;
};

/// Whether `op` has an element offset (iattrs[0]) that may be a kernel
/// argument: views and updates.
inline bool hasViewOffset(const TraceOp &op) {
  return (op.name == "view" || op.name == "update") && !op.iattrs.empty();
}

/// NumPy's floating-point error categories, as bits of TraceOp::fpChecks and
/// of the status a kernel reports per checked op.
enum FpError : uint8_t {
  FpDivide = 1,   // divide by zero (a pole: 1/0, log(0))
  FpOverflow = 2, // an infinite result of finite operands
  FpInvalid = 4,  // a NaN result of operands that are not NaN
  FpAll = 7,
};

/// `h` with the 64-bit word `v` mixed in: every bit of both reaches every bit
/// of the result (splitmix64's finalizer). Word-wise FNV (`(h ^ v) * p`)
/// only carries low bits upward: two operands swapped (`less(a, b)` and
/// `less(b, a)`, operand refs 0 and -2) collided whenever h was odd, and the
/// second window ran the first one's kernel.
inline uint64_t hashMix(uint64_t h, uint64_t v) {
  uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// The names of checked ops (fpChecks != 0) are numbered in order of first
/// use (Trace::fpSites); site k's error bits
/// are bits 3 * (k % kFpSitesPerWord) .. + 2 of 32-bit status word
/// k / kFpSitesPerWord.
constexpr int kFpSitesPerWord = 10;

class Trace {
public:
  /// Records an op and returns its (pending) result: `into` when given (a
  /// node of an abandoned trace that Python still holds, recorded again),
  /// else a new node.
  NodeRef add(std::string name, const std::vector<NodeRef> &operands,
              std::vector<int64_t> iattrs, std::string sattr,
              std::vector<int64_t> shape, cpnrt::DType dtype,
              NodeRef into = nullptr);

  const std::vector<TraceOp> &ops() const { return ops_; }
  const std::vector<NodeRef> &inputs() const { return inputs_; }
  bool hasInput(const ValueNode *node) const {
    return inputIndex_.count(node) != 0;
  }
  /// The shape of operand reference `r` (op r's result, or input -r-1).
  const std::vector<int64_t> &operandShape(int32_t r) const {
    return r >= 0 ? ops_[r].shape : inputs_[-r - 1]->shape;
  }
  uint64_t hash() const { return hash_; }
  /// The hash without the element offsets of views and updates: the same
  /// code shape whatever the offsets (see TraceOp::offsetArg).
  uint64_t shapeHash() const { return shapeHash_; }
  /// How many ops take their offset from the kernel's arguments, and those
  /// offsets in op order.
  size_t offsetArgCount() const;
  std::vector<int64_t> offsetArgs() const;
  /// Marks the offsets of the ops at `positions` (indices among the ops with
  /// hasViewOffset, in order) as kernel arguments.
  void setOffsetArgs(const std::vector<size_t> &positions);
  uint64_t epoch() const { return epoch_; }
  bool empty() const { return ops_.empty(); }
  size_t size() const { return ops_.size(); }

  /// Where the next ops come from (file "" = unknown). Not part of the hash.
  void setLocation(std::string file, int32_t line) {
    locFile_ = std::move(file);
    locLine_ = line;
  }

  /// The FpError bits checked in ops recorded from now on (those that can
  /// raise one); part of the hash.
  void setFpChecks(uint8_t checks) { fpChecks_ = checks; }
  uint8_t fpChecks() const { return fpChecks_; }

  /// The distinct names of the checked ops, in order of first use: the
  /// sites of kernel status words (see kFpSitesPerWord). Ops of one name
  /// share a site: their errors have the same message.
  std::vector<std::string> fpSites() const;
  /// Where each site was first recorded (file "" and line 0 when unknown), in
  /// the order of fpSites(): a warning names the line of the op, not of the
  /// sync point that reported it.
  std::vector<std::pair<std::string, int32_t>> fpSiteLocations() const;
  /// The line set by setLocation (0: none).
  int32_t locationLine() const { return locLine_; }
  const std::string &locationFile() const { return locFile_; }

  /// Indices of ops whose results still have a Python handle.
  std::vector<int32_t> liveResults() const;

  /// Replaces every input by a node of the same shape and dtype without a
  /// store (a kept copy of a trace must not keep the caller's arrays alive).
  void detachInputs();

  /// Forgets every op and input and starts a new epoch.
  void clear();

  /// A readable listing (the `trace` stage of IR dumps).
  std::string str() const;

private:
  int32_t operandRef(const NodeRef &node);
  void mix(uint64_t v) {
    hash_ = hashMix(hash_, v);
    shapeHash_ = hashMix(shapeHash_, v);
  }
  void mix(const std::string &s);

  std::vector<TraceOp> ops_;
  std::vector<NodeRef> inputs_;
  std::unordered_map<const ValueNode *, int32_t> inputIndex_;
  uint64_t hash_ = 0xcbf29ce484222325ull;
  uint64_t shapeHash_ = 0xcbf29ce484222325ull;
  uint64_t epoch_ = 1;
  std::string locFile_;
  int32_t locLine_ = 0;
  uint8_t fpChecks_ = 0;
};

} // namespace cpn

#endif // CPN_TRACE_TRACE_H
