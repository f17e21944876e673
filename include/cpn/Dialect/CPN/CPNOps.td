//===- CPNOps.td - cpn operations -------------------------*- tablegen -*-===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_OPS
#define CPN_OPS

include "cpn/Dialect/CPN/CPNDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "cpn/Dialect/CPN/CPNInterfaces.td"

// Tensors of any rank; dimensions are static except in shape-generic kernels
// (cpnc signatures with `:` dimensions), where the ops that can carry a
// dynamic dimension are the elementwise ones, cpn.remap, cpn.reduce and
// cpn.matmul. Views, updates and iota stay static.
def CPN_Tensor : RankedTensorOf<[AnyType]>;
def CPN_StaticTensor : StaticShapeTensorOf<[AnyType]>;

// Operands have the result's shape (verified by cpn::verifySameShapes).
def CPN_SameShape : NativeOpTrait<"CPNSameShape">;

//===----------------------------------------------------------------------===//
// Views and updates.
//===----------------------------------------------------------------------===//

def CPN_ViewOp : CPN_Op<"view", [Pure]> {
  let summary = "a strided view of a base array";
  let description = [{
    Reads the elements of `base` that a NumPy view with the given element
    `offset` and element `strides` (over the base's C-order flat index) selects;
    the result's shape is the view's shape. Strides may be zero (broadcast) or
    negative (a reversed view). Every NumPy basic view is one `cpn.view`.

    With a `dyn_offset` operand (a kernel whose view offsets are arguments:
    `b[i]`, `A[i, :]` in a loop) the element offset is that operand's value
    and `offset` is one it was recorded with: the caller guarantees that the
    view is a box of its base (decomposeView) at the run-time offset exactly
    when it is at `offset`.

    ```mlir
    %v = cpn.view %u {offset = 5 : i64, strides = array<i64: 4, 1>}
        : tensor<4x4xf64> -> tensor<2x2xf64>
    %w = cpn.view %u [%off] {offset = 5 : i64, strides = array<i64: 4, 1>}
        : tensor<4x4xf64> -> tensor<2x2xf64>
    ```
  }];
  let arguments = (ins CPN_StaticTensor:$base, Optional<Index>:$dyn_offset,
                   I64Attr:$offset, DenseI64ArrayAttr:$strides);
  let results = (outs CPN_StaticTensor:$result);
  let assemblyFormat = [{
    $base (`[` $dyn_offset^ `]`)? attr-dict `:` type($base) `->` type($result)
  }];
  let hasVerifier = 1;
}

def CPN_RemapOp : CPN_Op<"remap", [Pure]> {
  let summary = "broadcast and transpose a whole array (any dimension sizes)";
  let description = [{
    Result dimension `i` walks base dimension `dims[i]`, or, where
    `dims[i] = -1`, repeats the base along a new (broadcast) dimension. Every
    base dimension is walked once, except base dimensions of size 1, which may
    be dropped. The sizes of dynamic broadcast dimensions are the `sizes`
    operands, in order. This is the form a cpn.view takes in shape-generic
    kernels, where element offsets and strides are not constants.

    ```mlir
    %t = cpn.remap %x {dims = array<i64: 1, 0>} : tensor<?x3xf64> -> tensor<3x?xf64>
    %b = cpn.remap %s, %n {dims = array<i64: -1>} : tensor<f64>, index -> tensor<?xf64>
    ```
  }];
  let arguments = (ins CPN_Tensor:$base, Variadic<Index>:$sizes,
                   DenseI64ArrayAttr:$dims);
  let results = (outs CPN_Tensor:$result);
  let assemblyFormat = [{
    $base (`,` $sizes^)? attr-dict `:` type($base) (`,` type($sizes)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def CPN_UpdateOp : CPN_Op<"update", [Pure]> {
  let summary = "write a value through a strided view; yields the new base";
  let description = [{
    The value of `base` with the elements selected by the view
    (`offset`, `strides`, and the shape of `value`) replaced by `value`. The
    view must not select an element twice (NumPy raises for writes through
    broadcast views before tracing). A `dyn_offset` operand is the element
    offset as for cpn.view.

    ```mlir
    %u1 = cpn.update %u0, %v {offset = 5 : i64, strides = array<i64: 4, 1>}
        : tensor<4x4xf64>, tensor<2x2xf64> -> tensor<4x4xf64>
    ```
  }];
  let arguments = (ins CPN_StaticTensor:$base, CPN_StaticTensor:$value,
                   Optional<Index>:$dyn_offset, I64Attr:$offset,
                   DenseI64ArrayAttr:$strides);
  let results = (outs CPN_StaticTensor:$result);
  let assemblyFormat = [{
    $base `,` $value (`[` $dyn_offset^ `]`)? attr-dict `:` type($base) `,` type($value) `->` type($result)
  }];
  let hasVerifier = 1;
}

def CPN_CopyOp : CPN_Op<"copy", [Pure, SameOperandsAndResultType]> {
  let summary = "a fresh array equal to its operand";
  let description = [{
    ```mlir
    %c = cpn.copy %v : tensor<3x4xf32>
    ```
  }];
  let arguments = (ins CPN_Tensor:$x);
  let results = (outs CPN_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

// The NumPy ufunc of each elementwise op (its mnemonic), and `cast`: what
// cpn.fp_flag reports and what the scalar lowering (cpn/Conversion/
// ScalarOps.h) switches on. Each unary and binary op below names its own
// case (`kUfunc`, CPN_UfuncOpInterface): an op without one does not build.
def CPN_Ufunc : I32EnumAttr<"Ufunc", "a NumPy ufunc applied elementwise", [
  I32EnumAttrCase<"negative", 0>, I32EnumAttrCase<"positive", 1>,
  I32EnumAttrCase<"absolute", 2>, I32EnumAttrCase<"sign", 3>,
  I32EnumAttrCase<"square", 4>, I32EnumAttrCase<"reciprocal", 5>,
  I32EnumAttrCase<"sqrt", 6>, I32EnumAttrCase<"cbrt", 7>,
  I32EnumAttrCase<"exp", 8>, I32EnumAttrCase<"exp2", 9>,
  I32EnumAttrCase<"expm1", 10>, I32EnumAttrCase<"log", 11>,
  I32EnumAttrCase<"log2", 12>, I32EnumAttrCase<"log10", 13>,
  I32EnumAttrCase<"log1p", 14>, I32EnumAttrCase<"sin", 15>,
  I32EnumAttrCase<"cos", 16>, I32EnumAttrCase<"tan", 17>,
  I32EnumAttrCase<"arcsin", 18>, I32EnumAttrCase<"arccos", 19>,
  I32EnumAttrCase<"arctan", 20>, I32EnumAttrCase<"sinh", 21>,
  I32EnumAttrCase<"cosh", 22>, I32EnumAttrCase<"tanh", 23>,
  I32EnumAttrCase<"arcsinh", 24>, I32EnumAttrCase<"arccosh", 25>,
  I32EnumAttrCase<"arctanh", 26>, I32EnumAttrCase<"floor", 27>,
  I32EnumAttrCase<"ceil", 28>, I32EnumAttrCase<"trunc", 29>,
  I32EnumAttrCase<"rint", 30>, I32EnumAttrCase<"logical_not", 31>,
  I32EnumAttrCase<"invert", 32>, I32EnumAttrCase<"isnan", 33>,
  I32EnumAttrCase<"isinf", 34>, I32EnumAttrCase<"isfinite", 35>,
  I32EnumAttrCase<"signbit", 36>, I32EnumAttrCase<"conjugate", 37>,
  I32EnumAttrCase<"bitwise_count", 38>, I32EnumAttrCase<"spacing", 39>,
  I32EnumAttrCase<"real", 40>, I32EnumAttrCase<"imag", 41>,
  I32EnumAttrCase<"bitcast", 42>, I32EnumAttrCase<"add", 43>,
  I32EnumAttrCase<"complex", 44>, I32EnumAttrCase<"gcd", 45>,
  I32EnumAttrCase<"lcm", 46>, I32EnumAttrCase<"nextafter", 47>,
  I32EnumAttrCase<"subtract", 48>, I32EnumAttrCase<"multiply", 49>,
  I32EnumAttrCase<"divide", 50>, I32EnumAttrCase<"floor_divide", 51>,
  I32EnumAttrCase<"remainder", 52>, I32EnumAttrCase<"fmod", 53>,
  I32EnumAttrCase<"power", 54>, I32EnumAttrCase<"maximum", 55>,
  I32EnumAttrCase<"minimum", 56>, I32EnumAttrCase<"fmax", 57>,
  I32EnumAttrCase<"fmin", 58>, I32EnumAttrCase<"arctan2", 59>,
  I32EnumAttrCase<"hypot", 60>, I32EnumAttrCase<"copysign", 61>,
  I32EnumAttrCase<"logaddexp", 62>, I32EnumAttrCase<"logaddexp2", 63>,
  I32EnumAttrCase<"equal", 64>, I32EnumAttrCase<"not_equal", 65>,
  I32EnumAttrCase<"less", 66>, I32EnumAttrCase<"less_equal", 67>,
  I32EnumAttrCase<"greater", 68>, I32EnumAttrCase<"greater_equal", 69>,
  I32EnumAttrCase<"logical_and", 70>, I32EnumAttrCase<"logical_or", 71>,
  I32EnumAttrCase<"logical_xor", 72>, I32EnumAttrCase<"bitwise_and", 73>,
  I32EnumAttrCase<"bitwise_or", 74>, I32EnumAttrCase<"bitwise_xor", 75>,
  I32EnumAttrCase<"left_shift", 76>, I32EnumAttrCase<"right_shift", 77>,
  I32EnumAttrCase<"cast", 78>]> {
  let cppNamespace = "::mlir::cpn";
}

//===----------------------------------------------------------------------===//
// Elementwise ops: one per ufunc. Operands have the result's shape (the front
// end broadcasts with zero-stride views); element types are the ones NumPy's
// promotion chose, already cast.
//===----------------------------------------------------------------------===//

class CPN_UnaryOp<string mnemonic>
    : CPN_Op<mnemonic, [Pure, CPN_SameShape, CPN_UfuncOpInterface]> {
  let summary = "elementwise `" # mnemonic # "` (the NumPy ufunc)";
  let description = [{
    Applies NumPy's `}] # mnemonic # [{` to each element. The result has the
    operand's shape; its element type is the ufunc's output type.

    ```mlir
    %r = cpn.}] # mnemonic # [{ %x : tensor<8xf64> -> tensor<8xf64>
    ```
  }];
  let arguments = (ins CPN_Tensor:$x, UnitAttr:$is_unsigned);
  let results = (outs CPN_Tensor:$result);
  let extraClassDeclaration = "static constexpr ::mlir::cpn::Ufunc kUfunc = "
                               "::mlir::cpn::Ufunc::" # mnemonic # ";";
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
}

class CPN_BinaryOp<string mnemonic>
    : CPN_Op<mnemonic, [Pure, CPN_SameShape, SameTypeOperands,
                        CPN_UfuncOpInterface]> {
  let summary = "elementwise `" # mnemonic # "` (the NumPy ufunc)";
  let description = [{
    Applies NumPy's `}] # mnemonic # [{` to each pair of elements. Both operands
    have the result's shape and the same element type.

    ```mlir
    %r = cpn.}] # mnemonic # [{ %a, %b : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
    ```
  }];
  let arguments = (ins CPN_Tensor:$lhs, CPN_Tensor:$rhs, UnitAttr:$is_unsigned);
  let results = (outs CPN_Tensor:$result);
  let extraClassDeclaration = "static constexpr ::mlir::cpn::Ufunc kUfunc = "
                               "::mlir::cpn::Ufunc::" # mnemonic # ";";
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
}

// Unary ufuncs.
def CPN_NegativeOp : CPN_UnaryOp<"negative">;
def CPN_PositiveOp : CPN_UnaryOp<"positive">;
def CPN_AbsoluteOp : CPN_UnaryOp<"absolute">;
def CPN_SignOp : CPN_UnaryOp<"sign">;
def CPN_SquareOp : CPN_UnaryOp<"square">;
def CPN_ReciprocalOp : CPN_UnaryOp<"reciprocal">;
def CPN_SqrtOp : CPN_UnaryOp<"sqrt">;
def CPN_CbrtOp : CPN_UnaryOp<"cbrt">;
def CPN_ExpOp : CPN_UnaryOp<"exp">;
def CPN_Exp2Op : CPN_UnaryOp<"exp2">;
def CPN_Expm1Op : CPN_UnaryOp<"expm1">;
def CPN_LogOp : CPN_UnaryOp<"log">;
def CPN_Log2Op : CPN_UnaryOp<"log2">;
def CPN_Log10Op : CPN_UnaryOp<"log10">;
def CPN_Log1pOp : CPN_UnaryOp<"log1p">;
def CPN_SinOp : CPN_UnaryOp<"sin">;
def CPN_CosOp : CPN_UnaryOp<"cos">;
def CPN_TanOp : CPN_UnaryOp<"tan">;
def CPN_ArcsinOp : CPN_UnaryOp<"arcsin">;
def CPN_ArccosOp : CPN_UnaryOp<"arccos">;
def CPN_ArctanOp : CPN_UnaryOp<"arctan">;
def CPN_SinhOp : CPN_UnaryOp<"sinh">;
def CPN_CoshOp : CPN_UnaryOp<"cosh">;
def CPN_TanhOp : CPN_UnaryOp<"tanh">;
def CPN_ArcsinhOp : CPN_UnaryOp<"arcsinh">;
def CPN_ArccoshOp : CPN_UnaryOp<"arccosh">;
def CPN_ArctanhOp : CPN_UnaryOp<"arctanh">;
def CPN_FloorOp : CPN_UnaryOp<"floor">;
def CPN_CeilOp : CPN_UnaryOp<"ceil">;
def CPN_TruncOp : CPN_UnaryOp<"trunc">;
def CPN_RintOp : CPN_UnaryOp<"rint">;
def CPN_LogicalNotOp : CPN_UnaryOp<"logical_not">;
def CPN_InvertOp : CPN_UnaryOp<"invert">;
def CPN_IsnanOp : CPN_UnaryOp<"isnan">;
def CPN_IsinfOp : CPN_UnaryOp<"isinf">;
def CPN_IsfiniteOp : CPN_UnaryOp<"isfinite">;
def CPN_SignbitOp : CPN_UnaryOp<"signbit">;
def CPN_ConjugateOp : CPN_UnaryOp<"conjugate">;
def CPN_BitwiseCountOp : CPN_UnaryOp<"bitwise_count">;
def CPN_SpacingOp : CPN_UnaryOp<"spacing">;
// The real and imaginary parts (np.real, np.imag; the identity and zeros on
// real elements).
def CPN_RealOp : CPN_UnaryOp<"real">;
def CPN_ImagOp : CPN_UnaryOp<"imag">;
// The element's bits as another integer or float type of the same width
// (ndarray.view(dtype), getfield, byteswap).
def CPN_BitcastOp : CPN_UnaryOp<"bitcast"> {
  let hasVerifier = 1;
}

// Binary ufuncs.
def CPN_AddOp : CPN_BinaryOp<"add">;
// real + 1j * imag from two float operands, without NumPy's inf * 0 terms.
def CPN_ComplexOp : CPN_BinaryOp<"complex">;
def CPN_GcdOp : CPN_BinaryOp<"gcd">;
def CPN_LcmOp : CPN_BinaryOp<"lcm">;
def CPN_NextafterOp : CPN_BinaryOp<"nextafter">;
def CPN_SubtractOp : CPN_BinaryOp<"subtract">;
def CPN_MultiplyOp : CPN_BinaryOp<"multiply">;
def CPN_DivideOp : CPN_BinaryOp<"divide">;
def CPN_FloorDivideOp : CPN_BinaryOp<"floor_divide">;
def CPN_RemainderOp : CPN_BinaryOp<"remainder">;
def CPN_FmodOp : CPN_BinaryOp<"fmod">;
def CPN_PowerOp : CPN_BinaryOp<"power">;
def CPN_MaximumOp : CPN_BinaryOp<"maximum">;
def CPN_MinimumOp : CPN_BinaryOp<"minimum">;
def CPN_FmaxOp : CPN_BinaryOp<"fmax">;
def CPN_FminOp : CPN_BinaryOp<"fmin">;
def CPN_Arctan2Op : CPN_BinaryOp<"arctan2">;
def CPN_HypotOp : CPN_BinaryOp<"hypot">;
def CPN_CopysignOp : CPN_BinaryOp<"copysign">;
def CPN_LogaddexpOp : CPN_BinaryOp<"logaddexp">;
def CPN_Logaddexp2Op : CPN_BinaryOp<"logaddexp2">;
def CPN_EqualOp : CPN_BinaryOp<"equal">;
def CPN_NotEqualOp : CPN_BinaryOp<"not_equal">;
def CPN_LessOp : CPN_BinaryOp<"less">;
def CPN_LessEqualOp : CPN_BinaryOp<"less_equal">;
def CPN_GreaterOp : CPN_BinaryOp<"greater">;
def CPN_GreaterEqualOp : CPN_BinaryOp<"greater_equal">;
def CPN_LogicalAndOp : CPN_BinaryOp<"logical_and">;
def CPN_LogicalOrOp : CPN_BinaryOp<"logical_or">;
def CPN_LogicalXorOp : CPN_BinaryOp<"logical_xor">;
def CPN_BitwiseAndOp : CPN_BinaryOp<"bitwise_and">;
def CPN_BitwiseOrOp : CPN_BinaryOp<"bitwise_or">;
def CPN_BitwiseXorOp : CPN_BinaryOp<"bitwise_xor">;
def CPN_LeftShiftOp : CPN_BinaryOp<"left_shift">;
def CPN_RightShiftOp : CPN_BinaryOp<"right_shift">;

def CPN_CastOp : CPN_Op<"cast", [Pure, CPN_SameShape]> {
  let summary = "elementwise conversion between NumPy dtypes";
  let description = [{
    Converts each element as NumPy's `astype(..., casting='unsafe')` does.
    `src_unsigned`/`dst_unsigned` say that the integer source or destination is
    unsigned. Conversion to `i1` is `x != 0`.

    ```mlir
    %r = cpn.cast %x {src_unsigned} : tensor<8xi8> -> tensor<8xf64>
    ```
  }];
  let arguments = (ins CPN_Tensor:$x, UnitAttr:$src_unsigned,
                   UnitAttr:$dst_unsigned);
  let results = (outs CPN_Tensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
}

def CPN_SelectOp : CPN_Op<"select", [Pure, CPN_SameShape]> {
  let summary = "elementwise choice: NumPy's where(cond, a, b)";
  let description = [{
    ```mlir
    %r = cpn.select %c, %a, %b : tensor<8xi1>, tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
    ```
  }];
  let arguments = (ins CPN_Tensor:$cond, CPN_Tensor:$a, CPN_Tensor:$b);
  let results = (outs CPN_Tensor:$result);
  let assemblyFormat = [{
    $cond `,` $a `,` $b attr-dict `:` type($cond) `,` type($a) `,` type($b) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions, creation, linear algebra.
//===----------------------------------------------------------------------===//

def CPN_ReduceKind : I32EnumAttr<"ReduceKind", "what cpn.reduce computes", [
  I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"prod", 1>,
  I32EnumAttrCase<"min", 2>, I32EnumAttrCase<"max", 3>,
  I32EnumAttrCase<"any", 4>, I32EnumAttrCase<"all", 5>,
  I32EnumAttrCase<"argmin", 6>, I32EnumAttrCase<"argmax", 7>]> {
  let cppNamespace = "::mlir::cpn";
}

def CPN_ReduceOp : CPN_Op<"reduce", [Pure]> {
  let summary = "reduce along axes (sum, prod, min, max, any, all, argmin, argmax)";
  let description = [{
    Reduces `x` along `axes` (sorted, distinct, in range); the result's shape is
    the operand's without those axes. `kind` (the first word) is one of `sum`,
    `prod`, `min`, `max`, `any`, `all`, `argmin`, `argmax` (the enum
    `ReduceKind`). `min`/`max` propagate NaN as NumPy
    does; `argmin`/`argmax` take exactly one axis and give `i64` indices of the
    first extremum (the first NaN if there is one).

    ```mlir
    %s = cpn.reduce sum %x {axes = array<i64: 1>}
        : tensor<4x5xf64> -> tensor<4xf64>
    ```
  }];
  let arguments = (ins CPN_Tensor:$x, CPN_ReduceKind:$kind,
                   DenseI64ArrayAttr:$axes, UnitAttr:$is_unsigned);
  let results = (outs CPN_Tensor:$result);
  let assemblyFormat = "$kind $x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// A reduction of `x` to `type` over `axes`, at b's insertion point, with
    /// this op's other attributes (kind, is_unsigned, fp checks, row blocks):
    /// one piece of a reduction that a pass splits.
    ReduceOp cloneOn(::mlir::OpBuilder &b, ::mlir::Value x, ::mlir::Type type,
                     ::llvm::ArrayRef<int64_t> axes);
  }];
}

def CPN_IotaOp : CPN_Op<"iota", [Pure]> {
  let summary = "the index along one dimension, as an array";
  let description = [{
    Each element is its own index along `dim` (the building block of
    `arange`, `linspace`, `eye`).

    ```mlir
    %i = cpn.iota {dim = 0 : i64} : tensor<10xi64>
    ```
  }];
  let arguments = (ins I64Attr:$dim);
  let results = (outs CPN_StaticTensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def CPN_MatmulOp : CPN_Op<"matmul", [Pure]> {
  let summary = "matrix product of two 2-D arrays (BLAS gemm on CPUs)";
  let description = [{
    ```mlir
    %c = cpn.matmul %a, %b : tensor<4x3xf64>, tensor<3x5xf64> -> tensor<4x5xf64>
    ```
  }];
  let arguments = (ins CPN_Tensor:$lhs, CPN_Tensor:$rhs);
  let results = (outs CPN_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def CPN_RandomBitsOp : CPN_Op<"random_bits", [Pure]> {
  let summary = "counter-based random 64-bit words (Philox4x32-10)";
  let description = [{
    Element `i` (row-major linear index) is the Philox4x32-10 block of the
    128-bit counter (`counter` + i, 0) under the 64-bit `key`, its first two
    32-bit words joined into one (unsigned) 64-bit integer. Every element
    depends only on the key, the counter and its index, so the values are the
    same whatever the loop order, tiling or thread count, and the op fuses
    with the elementwise ops that turn the words into a distribution.

    ```mlir
    %bits = cpn.random_bits %key, %counter : tensor<i64>, tensor<i64> -> tensor<1000xi64>
    ```
  }];
  let arguments = (ins 0DTensorOf<[I64]>:$key, 0DTensorOf<[I64]>:$counter);
  let results = (outs StaticShapeTensorOf<[I64]>:$result);
  let assemblyFormat = [{
    $key `,` $counter attr-dict `:` type($key) `,` type($counter) `->` type($result)
  }];
}

def CPN_LibcallOp : CPN_Op<"libcall", [Pure]> {
  let summary = "a call into the runtime's library (LAPACK, sorting, gathers)";
  let description = [{
    Computes its result with the runtime entry point `cpn_lib_<callee>` (for
    example `inv_f64`: LAPACK through LAPACKE, on CPUs; `sort_f8`, `take_i4`:
    runtime/lib/Algorithms.cpp). Operands are read,
    never written; the result is a fresh C-contiguous array whose layout the
    callee documents (runtime/include/cpnrt/Lapack.h), often several results
    packed into one flat array that views take apart. `args` are extra integer
    arguments. At most three operands; static shapes only.

    With `in_place` the result is the first operand with some elements
    rewritten (`put`, `at_add`: the callee starts from a copy of its first
    operand), and the op is not lowered with the others: one-shot
    bufferization gives the callee the first operand's buffer as its output
    where no later read of the old value forbids it (otherwise a copy of it),
    and the callee then skips its copy (BufferizableOpInterfaceImpl.cpp).

    ```mlir
    %r = cpn.libcall "inv_f64"(%a) {args = array<i64>}
        : (tensor<4x4xf64>) -> tensor<4x4xf64>
    %p = cpn.libcall "put_f8"(%a, %i, %v) {args = array<i64: 2>, in_place}
        : (tensor<8xf64>, tensor<3xi64>, tensor<3xf64>) -> tensor<8xf64>
    ```
  }];
  let arguments = (ins Variadic<CPN_StaticTensor>:$operands, StrAttr:$callee,
                   DenseI64ArrayAttr:$args, UnitAttr:$in_place);
  let results = (outs CPN_StaticTensor:$result);
  let assemblyFormat = [{
    $callee `(` $operands `)` attr-dict `:` functional-type($operands, $result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Floating-point error reporting (np.errstate).
//===----------------------------------------------------------------------===//

def CPN_FpFlagOp : CPN_Op<"fp_flag", [MemoryEffects<[MemWrite]>]> {
  let summary = "reports one element's floating-point errors (np.errstate)";
  let description = [{
    Emitted in the scalar body of an elementwise op that checks NumPy's
    floating-point errors: `result` is the element of ufunc `ufunc` (or
    `cast`) computed from `args`; `checks` are the FpError bits to report
    (1 divide by zero, 2 overflow, 4 invalid) as site `site` of the kernel's
    status argument (the function argument marked `cpn.fp_status`: bits
    3 * (site % 10) of 32-bit word site / 10).

    cpn-lower-fp-flags makes errors cheap to rule out: a float result is NaN
    or infinite whenever it is an error, so the loops only sum the results
    and test the sum; the exact bits (cpn::emitFpErrorBits) are computed only
    in a copy of the loop nest that runs when the test is set. Its write
    effect keeps it alive through fusion and canonicalization;
    cpn-fuse-elementwise erases generics whose results are unused even when
    they hold flags (their consumers check the elements they read).

    ```mlir
    cpn.fp_flag divide(%x, %y) -> %q {checks = 7 : i64, site = 0 : i64} : f64, f64 -> f64
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$args, AnyType:$result,
                   CPN_Ufunc:$ufunc, I64Attr:$checks, I64Attr:$site);
  let assemblyFormat = [{
    $ufunc `(` $args `)` `->` $result attr-dict `:` type($args) `->` type($result)
  }];
}

#endif // CPN_OPS
