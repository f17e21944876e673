//===- BufferizableOpInterfaceImpl.h - cpn ops in one-shot bufferize -*- C++ -*-===//
//
// Part of cpnumeric. Ops that stay tensor ops until one-shot bufferization
// (an in-place cpn.libcall) and the call they become.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_DIALECT_CPN_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
#define CPN_DIALECT_CPN_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectRegistry.h"

namespace mlir::cpn {
class LibcallOp;

/// The call `cpn_lib_<callee>(meta, out, in...)` of `op` on buffers:
/// `buffers[0]` is the output (C-contiguous, identity layout), the rest the
/// operands in order (any layout). `meta` is a stack array of each buffer's
/// offset, rank, sizes and strides, then the op's integer arguments (see
/// runtime/include/cpnrt/Lapack.h).
void emitLibcall(OpBuilder &b, Location loc, LibcallOp op,
                 ValueRange buffers);

/// Attaches BufferizableOpInterface to cpn.libcall {in_place}: the first
/// operand is read and written and its buffer is the result's.
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);
} // namespace mlir::cpn

#endif // CPN_DIALECT_CPN_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
