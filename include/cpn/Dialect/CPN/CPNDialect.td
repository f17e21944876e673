//===- CPNDialect.td - the cpn array dialect --------------*- tablegen -*-===//
//
// Part of cpnumeric. The cpn dialect: NumPy's building blocks on ranked
// tensors with static shapes and value semantics.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_DIALECT
#define CPN_DIALECT

include "mlir/IR/OpBase.td"

def CPN_Dialect : Dialect {
  let name = "cpn";
  let summary = "NumPy's array building blocks with value semantics";
  let description = [{
    The `cpn` dialect holds what a NumPy program does to its arrays, traced by
    the Python front end. Every value is a ranked tensor with a static shape.
    NumPy's casting is explicit (`cpn.cast`); a view of an array is a
    `cpn.view` of its base's current value, and a write through a view is a
    `cpn.update` that yields the base's next value. Integer signedness is not
    carried by the tensor types (they are signless, as in `arith`): ops whose
    meaning depends on it carry the `is_unsigned` unit attribute.
  }];
  let cppNamespace = "::mlir::cpn";
}

class CPN_Op<string mnemonic, list<Trait> traits = []>
    : Op<CPN_Dialect, mnemonic, traits>;

#endif // CPN_DIALECT
