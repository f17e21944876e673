//===- CPNDialect.h - the cpn dialect -------------------------*- C++ -*-===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_DIALECT_CPN_CPNDIALECT_H
#define CPN_DIALECT_CPN_CPNDIALECT_H

#include "mlir/IR/Dialect.h"

#include "cpn/Dialect/CPN/CPNOpsDialect.h.inc"

#endif // CPN_DIALECT_CPN_CPNDIALECT_H
