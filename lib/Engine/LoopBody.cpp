//===- LoopBody.cpp - where windows are cut in a loop ---------------------===//
//
// Part of cpnumeric. See LoopBody.h.
//
//===----------------------------------------------------------------------===//

#include "LoopBody.h"

#include <algorithm>
#include <functional>

using namespace cpn;
using namespace cpn::detail;

namespace {
// Signatures kept: bodies up to a third of it are found.
constexpr size_t kRecent = 3072;
// A body longer than this many times the trace limit is not waited for: a
// window of one body would take long to compile (bufferization grows
// faster than linearly with the window's updates).
constexpr size_t kMaxBodyLimits = 4;
// Loop bodies remembered for bodyEnds() (a program's loops in turn).
constexpr size_t kKnownBodies = 8;
} // namespace

uint64_t cpn::detail::opSignature(const TraceOp &op) {
  uint64_t h = std::hash<std::string>()(op.name);
  h = hashMix(h, std::hash<std::string>()(op.sattr));
  h = hashMix(h, static_cast<uint64_t>(op.dtype) << 8 | op.fpChecks);
  // A view's or update's offset may be a kernel argument (offset-argument
  // kernels): `A[i, :] = ...` is one body whatever i is.
  for (size_t k = hasViewOffset(op) ? 1 : 0; k < op.iattrs.size(); ++k)
    h = hashMix(h, static_cast<uint64_t>(op.iattrs[k]));
  for (int64_t d : op.shape)
    h = hashMix(h, static_cast<uint64_t>(d) ^ 0x5bd1e995u);
  return hashMix(h, op.operands.size());
}

void LoopBody::recorded(uint64_t signature) {
  if (recent_.size() == 2 * kRecent)
    recent_.erase(recent_.begin(), recent_.begin() + kRecent);
  recent_.push_back(signature);
}

bool LoopBody::repeats(size_t p) const {
  size_t n = recent_.size();
  if (!p || 2 * p > n)
    return false;
  for (size_t i = n - p; i < n; ++i)
    if (recent_[i] != recent_[i - p])
      return false;
  return true;
}

size_t LoopBody::findPeriod(size_t maxPeriod) const {
  size_t n = std::min(recent_.size(), kRecent);
  // The shortest p that the last 3p signatures repeat with.
  for (size_t p = 1; p <= maxPeriod && 3 * p <= n; ++p) {
    bool periodic = true;
    for (size_t i = recent_.size() - 2 * p; i < recent_.size() && periodic; ++i)
      periodic = recent_[i] == recent_[i - p];
    if (periodic)
      return p;
  }
  return 0;
}

bool LoopBody::endsWithBody() const { return endsWith(body_); }

bool LoopBody::endsWith(const std::vector<uint64_t> &body) const {
  size_t p = body.size(), n = recent_.size();
  if (!p || n < p)
    return false;
  const uint64_t *tail = recent_.data() + (n - p);
  for (size_t r = 0; r < p; ++r) {
    size_t i = 0;
    while (i < p && tail[i] == body[(i + r) % p])
      ++i;
    if (i == p)
      return true;
  }
  return false;
}

void LoopBody::refresh(size_t limit) {
  if (repeats(period_) || endsWithBody())
    return;
  period_ = findPeriod(kMaxBodyLimits * limit);
  body_.assign(recent_.end() - std::ptrdiff_t(period_), recent_.end());
}

bool LoopBody::bodyEnds(size_t n, size_t limit) {
  refresh(limit);
  // A body that reads rows at a shift has a view and what uses it: a
  // period of one op is three alike statements, not a loop.
  if (period_ >= 2) {
    if (std::find(known_.begin(), known_.end(), body_) == known_.end()) {
      if (known_.size() == kKnownBodies)
        known_.erase(known_.begin());
      known_.push_back(body_);
    }
    return n >= period_;
  }
  // Not repeated three times yet: a body seen before whose ops the window
  // ends with (in any rotation) ends here. Its first iteration is then a
  // window of its own, not the first three with their ghost zones.
  for (const std::vector<uint64_t> &body : known_)
    if (n >= body.size() && endsWith(body))
      return true;
  return false;
}

bool LoopBody::cutHere(size_t n, size_t limit) {
  refresh(limit);
  if (!period_)
    return true; // no loop: the first statement end past the limit
  // A window of k bodies, the fewest that reach the limit, ends where it
  // began (a statement end is there: the previous cut was one). Past that
  // length without a statement end at it (the body changed), the first
  // statement end cuts.
  return n >= (limit + period_ - 1) / period_ * period_;
}
