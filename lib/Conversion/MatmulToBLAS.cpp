//===- MatmulToBLAS.cpp - linalg.matmul to a BLAS call ---------------------===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#include "cpn/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::cpn {
#define GEN_PASS_DEF_CONVERTMATMULTOBLAS
#include "cpn/Conversion/Passes.h.inc"
} // namespace mlir::cpn

using namespace mlir;

namespace {
struct ConvertMatmulToBLASPass
    : public cpn::impl::ConvertMatmulToBLASBase<ConvertMatmulToBLASPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::MatmulOp> matmuls;
    module.walk([&](linalg::MatmulOp op) {
      if (op.hasPureBufferSemantics())
        matmuls.push_back(op);
    });
    for (linalg::MatmulOp op : matmuls) {
      Type et = cast<MemRefType>(op.getDpsInputs()[0].getType()).getElementType();
      if (!et.isF32() && !et.isF64())
        continue;
      OpBuilder b(op);
      Location loc = op.getLoc();
      std::string name = et.isF32() ? "cpn_gemm_f32" : "cpn_gemm_f64";
      SmallVector<Value> args;
      // Per operand: aligned pointer, offset, row stride, column stride; then
      // M, N, K. All as i64 so the callee's signature is plain C.
      auto addOperand = [&](Value m) {
        auto md = memref::ExtractStridedMetadataOp::create(b, loc, m);
        Value ptr = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, m);
        for (Value v : {ptr, (Value)md.getOffset(), (Value)md.getStrides()[0],
                        (Value)md.getStrides()[1]})
          args.push_back(arith::IndexCastOp::create(b, loc, b.getI64Type(), v));
      };
      Value a = op.getDpsInputs()[0], bm = op.getDpsInputs()[1],
            c = op.getDpsInits()[0];
      addOperand(a);
      addOperand(bm);
      addOperand(c);
      auto aTy = cast<MemRefType>(a.getType()), bTy = cast<MemRefType>(bm.getType());
      for (int64_t v : {aTy.getDimSize(0), bTy.getDimSize(1), aTy.getDimSize(1)})
        args.push_back(arith::ConstantOp::create(b, loc, b.getI64Type(),
                                                 b.getI64IntegerAttr(v)));
      auto func = module.lookupSymbol<func::FuncOp>(name);
      if (!func) {
        OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
        SmallVector<Type> ins(args.size(), b.getI64Type());
        func = func::FuncOp::create(mb, loc, name, mb.getFunctionType(ins, {}));
        func.setPrivate();
      }
      func::CallOp::create(b, loc, func, args);
      op.erase();
    }
  }
};
} // namespace
