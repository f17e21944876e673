//===- BufferizableOpInterfaceImpl.cpp - cpn ops in one-shot bufferize ----===//
//
// Part of cpnumeric. cpn.libcall {in_place} (np.put, ufunc.at: the result is
// the first operand with some elements rewritten) stays a tensor op until
// one-shot bufferization, which decides whether the callee may write into
// the first operand's buffer: in place where nothing reads the old value
// afterwards and the buffer is writable (a donated input), otherwise into a
// copy that bufferization makes. The callee skips its own copy when its
// output is its first operand.
//
//===----------------------------------------------------------------------===//

#include "cpn/Dialect/CPN/Transforms/BufferizableOpInterfaceImpl.h"
#include "cpn/Dialect/CPN/CPNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::bufferization;

void mlir::cpn::emitLibcall(OpBuilder &b, Location loc, LibcallOp op,
                            ValueRange buffers) {
  Type i64 = b.getI64Type();
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
  };
  auto toI64 = [&](Value index) -> Value {
    return arith::IndexCastOp::create(b, loc, i64, index);
  };
  SmallVector<Value> words{cst(static_cast<int64_t>(buffers.size()))};
  SmallVector<Value> ptrs;
  for (Value m : buffers) {
    auto md = memref::ExtractStridedMetadataOp::create(b, loc, m);
    ptrs.push_back(
        toI64(memref::ExtractAlignedPointerAsIndexOp::create(b, loc, m)));
    int64_t rank = cast<MemRefType>(m.getType()).getRank();
    words.push_back(toI64(md.getOffset()));
    words.push_back(cst(rank));
    for (Value size : md.getSizes())
      words.push_back(toI64(size));
    for (Value stride : md.getStrides())
      words.push_back(toI64(stride));
  }
  words.push_back(cst(static_cast<int64_t>(op.getArgs().size())));
  for (int64_t a : op.getArgs())
    words.push_back(cst(a));
  auto meta = memref::AllocaOp::create(
      b, loc, MemRefType::get({static_cast<int64_t>(words.size())}, i64));
  for (auto [i, w] : llvm::enumerate(words))
    memref::StoreOp::create(
        b, loc, w, meta, ValueRange{arith::ConstantIndexOp::create(b, loc, i)});
  SmallVector<Value> args{
      toI64(memref::ExtractAlignedPointerAsIndexOp::create(b, loc, meta))};
  args.append(ptrs);
  while (args.size() < 5)
    args.push_back(cst(0));
  std::string name = ("cpn_lib_" + op.getCallee()).str();
  auto module = op->getParentOfType<ModuleOp>();
  auto func = module.lookupSymbol<func::FuncOp>(name);
  if (!func) {
    OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
    func = func::FuncOp::create(
        mb, loc, name,
        mb.getFunctionType(SmallVector<Type>(args.size(), i64), {}));
    func.setPrivate();
  }
  func::CallOp::create(b, loc, func, args);
}

namespace {
/// cpn.libcall {in_place}: operand 0 is read and written in place (its
/// buffer is the result's, equivalent), the other operands are only read.
struct InPlaceLibcallOpInterface
    : public BufferizableOpInterface::ExternalModel<InPlaceLibcallOpInterface,
                                                    cpn::LibcallOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *op, OpOperand &operand,
                               const AnalysisState &) const {
    return cast<cpn::LibcallOp>(op).getInPlace() &&
           operand.getOperandNumber() == 0;
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &operand,
                                      const AnalysisState &) const {
    if (cast<cpn::LibcallOp>(op).getInPlace() &&
        operand.getOperandNumber() == 0)
      return {{op->getResult(0), BufferRelation::Equivalent}};
    return {};
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rw,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto call = cast<cpn::LibcallOp>(op);
    if (!call.getInPlace())
      return op->emitOpError("is lowered by convert-cpn-to-linalg unless it "
                             "is in place");
    Location loc = op->getLoc();
    SmallVector<Value> buffers;
    for (Value v : call.getOperands()) {
      FailureOr<Value> buf = getBuffer(rw, v, options, state);
      if (failed(buf))
        return failure();
      buffers.push_back(*buf);
    }
    // The callee writes a C-contiguous output: a first operand with any
    // other layout (a slice's subview) is copied into one.
    Value out = buffers[0];
    auto outTy = cast<MemRefType>(out.getType());
    if (!outTy.getLayout().isIdentity()) {
      auto fresh = memref::AllocOp::create(
          rw, loc, MemRefType::get(outTy.getShape(), outTy.getElementType()));
      memref::CopyOp::create(rw, loc, out, fresh);
      out = buffers[0] = fresh;
    }
    buffers.insert(buffers.begin(), out);
    cpn::emitLibcall(rw, loc, call, buffers);
    replaceOpWithBufferizedValues(rw, op, out);
    return success();
  }
};
} // namespace

void mlir::cpn::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, cpn::CPNDialect *) {
    cpn::LibcallOp::attachInterface<InPlaceLibcallOpInterface>(*ctx);
  });
}
