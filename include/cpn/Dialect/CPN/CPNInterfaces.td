//===- CPNInterfaces.td - cpn op interfaces ---------------*- tablegen -*-===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_INTERFACES
#define CPN_INTERFACES

include "mlir/IR/OpBase.td"

def CPN_UfuncOpInterface : OpInterface<"UfuncOpInterface"> {
  let description = [{
    An elementwise op that applies one NumPy ufunc to each element (or pair
    of elements): every cpn unary and binary op. `getUfunc` names it as the
    `Ufunc` enum, which the scalar lowering (cpn::emitScalarUfunc) and the
    floating-point checks (cpn.fp_flag, cpn::emitFpErrorBits) switch on.
    The op class declares its case as `kUfunc` (CPN_UnaryOp, CPN_BinaryOp).
  }];
  let cppNamespace = "::mlir::cpn";
  let methods = [
    InterfaceMethod<"The ufunc applied to each element.", "::mlir::cpn::Ufunc",
                    "getUfunc", (ins), [{}],
                    [{ return ConcreteOp::kUfunc; }]>,
  ];
}

#endif // CPN_INTERFACES
