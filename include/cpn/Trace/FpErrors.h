//===- FpErrors.h - which ufuncs raise floating-point errors ----*- C++ -*-===//
//
// Part of cpnumeric.
//
// The one table of which ufuncs can raise NumPy's floating-point errors
// (np.errstate's divide, overflow and invalid) and where: the trace reads it
// to give an op checks (Trace::record, and the bindings to locate the op's
// line), the lowering to write them (cpn::emitFpErrorBits). Plain C++, no
// MLIR: lib/Trace sits below the dialect.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_TRACE_FPERRORS_H
#define CPN_TRACE_FPERRORS_H

#include <string_view>

namespace cpn {

/// Where a finite operand gives an infinity (NumPy's divide-by-zero error).
enum class FpPole {
  None,
  SecondZero,       // x / 0, x // 0
  FirstZero,        // log(0), 1 / 0, 0 ** -y
  FirstMinusOne,    // log1p(-1)
  FirstMagnitudeOne // arctanh(+-1)
};

/// What one ufunc can raise on float operands. Every listed ufunc can raise
/// `invalid` (a NaN from operands that are not NaN); `overflows`: an
/// infinity from finite operands away from the pole; `pole`: divide by
/// zero. Integer division by zero (floor_divide, remainder, fmod) and casts
/// (NaN to an integer, a finite float to a narrower infinity) are checked by
/// their own rules; "cast" is listed so that casts get checks.
struct FpErrorFacts {
  std::string_view name;
  bool overflows;
  FpPole pole;
};

inline constexpr FpErrorFacts kFpErrorFacts[] = {
    {"add", true, FpPole::None},
    {"subtract", true, FpPole::None},
    {"multiply", true, FpPole::None},
    {"divide", true, FpPole::SecondZero},
    {"floor_divide", true, FpPole::SecondZero},
    {"remainder", false, FpPole::None},
    {"fmod", false, FpPole::None},
    {"power", true, FpPole::FirstZero},
    {"square", true, FpPole::None},
    {"reciprocal", true, FpPole::FirstZero},
    {"sqrt", false, FpPole::None},
    {"exp", true, FpPole::None},
    {"exp2", true, FpPole::None},
    {"expm1", true, FpPole::None},
    {"log", false, FpPole::FirstZero},
    {"log2", false, FpPole::FirstZero},
    {"log10", false, FpPole::FirstZero},
    {"log1p", false, FpPole::FirstMinusOne},
    {"sin", false, FpPole::None},
    {"cos", false, FpPole::None},
    {"tan", false, FpPole::None},
    {"arcsin", false, FpPole::None},
    {"arccos", false, FpPole::None},
    {"arccosh", false, FpPole::None},
    {"arctanh", false, FpPole::FirstMagnitudeOne},
    {"sinh", true, FpPole::None},
    {"cosh", true, FpPole::None},
    {"hypot", true, FpPole::None},
    {"cast", false, FpPole::None},
};

/// The facts of ufunc `name`; null for one that raises no fp error.
inline const FpErrorFacts *fpErrorFacts(std::string_view name) {
  for (const FpErrorFacts &f : kFpErrorFacts)
    if (f.name == name)
      return &f;
  return nullptr;
}

/// Whether ops of ufunc `name` (or "cast") get np.errstate checks.
inline bool canRaiseFpError(std::string_view name) {
  return fpErrorFacts(name) != nullptr;
}

} // namespace cpn

#endif // CPN_TRACE_FPERRORS_H
