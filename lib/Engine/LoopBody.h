//===- LoopBody.h - where windows are cut in a loop -------------*- C++ -*-===//
//
// Part of cpnumeric. Private to lib/Engine.
//
// A window is cut at the end of a statement once it holds traceLimit ops.
// In a loop whose body is not a multiple of the statements that end where
// the limit falls (np.roll, concatenate and indexing write pieces and end
// statements of their own), the cuts drift through the body: each window is
// a different op sequence, a different kernel, and runs in the baseline tier
// because none repeats (Game of Life, 500 x 500: 156 of 160 windows). The
// recent ops' signatures, across windows, give the loop body's length p;
// windows are then cut only where their length is a multiple of p, so each
// starts where the previous one did and all are one kernel.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_LIB_ENGINE_LOOPBODY_H
#define CPN_LIB_ENGINE_LOOPBODY_H

#include "cpn/Trace/Trace.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cpn::detail {

/// What an op computes, for finding loop bodies: its name, attributes (but
/// a view's or update's offset), shape, dtype, checks and operand count (not
/// which values it reads).
uint64_t opSignature(const TraceOp &op);

class LoopBody {
public:
  /// Called for every op recorded outside a @jit capture.
  void recorded(uint64_t signature);
  /// At a statement end, with `n` ops in the window (n >= limit): whether
  /// to cut the window there.
  bool cutHere(size_t n, size_t limit);
  /// At a statement end, with `n` ops in the window: whether the window
  /// holds a whole loop body (as long as cutHere's for `limit` at most).
  /// A body found before counts from its first repetition (a loop entered
  /// again, as each time step enters its pressure iterations), not its
  /// third.
  bool bodyEnds(size_t n, size_t limit);
  /// The signatures of the last p ops recorded (fewer if fewer were).
  std::vector<uint64_t> last(size_t p) const {
    return {recent_.end() - std::ptrdiff_t(std::min(p, recent_.size())),
            recent_.end()};
  }
  /// Whether the last ops recorded are `body` (signatures), from any of its
  /// ops on: a loop that goes on, also after a sync point (whose ops come
  /// between two bodies).
  bool endsWith(const std::vector<uint64_t> &body) const;
  /// The body length found last (0: none), for tests and logs.
  size_t period() const { return period_; }

private:
  size_t findPeriod(size_t maxPeriod) const;
  bool repeats(size_t p) const;
  bool endsWithBody() const;
  /// Keeps the body while the recent ops repeat it or end with it (the
  /// loop goes on after a sync point between iterations); finds it again
  /// otherwise.
  void refresh(size_t limit);
  std::vector<uint64_t> recent_;
  // The signatures of the body refresh() found last.
  std::vector<uint64_t> body_;
  size_t period_ = 0;
  // Bodies bodyEnds() saw (of at least two ops), the latest last.
  std::vector<std::vector<uint64_t>> known_;
};

} // namespace cpn::detail

#endif // CPN_LIB_ENGINE_LOOPBODY_H
