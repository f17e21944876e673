//===- EngineInternal.h - shared by the Engine's files ----------*- C++ -*-===//
//
// Part of cpnumeric. Private to lib/Engine.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_LIB_ENGINE_ENGINEINTERNAL_H
#define CPN_LIB_ENGINE_ENGINEINTERNAL_H

#include "cpn/Engine/Engine.h"

#include <cstdint>
#include <vector>

namespace cpn::detail {
/// Queues a report for each site of `fp` whose bits are set in `status` (a
/// kernel's fp status words, or the baseline tier's), for takeFpReports.
void reportFpErrors(const FpSites &fp, const std::vector<int32_t> &status);
} // namespace cpn::detail

#endif // CPN_LIB_ENGINE_ENGINEINTERNAL_H
