//===- CPNDialect.cpp - the cpn dialect
//------------------------------------===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#include "cpn/Dialect/CPN/CPNDialect.h"
#include "cpn/Dialect/CPN/CPNOps.h"

using namespace mlir;
using namespace mlir::cpn;

#include "cpn/Dialect/CPN/CPNInterfaces.cpp.inc"
#include "cpn/Dialect/CPN/CPNOpsDialect.cpp.inc"
#include "cpn/Dialect/CPN/CPNOpsEnums.cpp.inc"

void CPNDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "cpn/Dialect/CPN/CPNOps.cpp.inc"
      >();
}
