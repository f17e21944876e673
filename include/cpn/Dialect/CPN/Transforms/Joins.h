//===- Joins.h - chains of cpn.update that tile their base ------*- C++ -*-===//
//
// Part of cpnumeric. cpn-split-joins (lib/Dialect/CPN/Transforms) computes
// elementwise ops of a join piece by piece, convert-cpn-updates
// (lib/Conversion) starts a join's chain from tensor.empty.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_DIALECT_CPN_TRANSFORMS_JOINS_H
#define CPN_DIALECT_CPN_TRANSFORMS_JOINS_H

#include "cpn/Dialect/CPN/CPNOps.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::cpn {

/// A join: a chain of cpn.update ops whose values tile the base along one
/// axis, each a contiguous run of whole slices in the base's own order
/// (np.concatenate, np.roll, np.stack, np.append write their result so), so
/// that no element of the chain's first base survives.
struct Join {
  UpdateOp first;              // the chain's first update (its base: dead)
  int64_t axis = 0;            // the axis the pieces split
  SmallVector<int64_t> bounds; // ascending, bounds[0] = 0, last = size
  SmallVector<Value> pieces;   // piece i spans [bounds[i], bounds[i + 1])
};

/// The join `v` is the result of, if it is one: a chain of at most
/// `maxPieces` updates whose results before `v` have no other reader
/// (static shapes and offsets only).
std::optional<Join> matchJoin(Value v, int64_t maxPieces);

} // namespace mlir::cpn

#endif // CPN_DIALECT_CPN_TRANSFORMS_JOINS_H
