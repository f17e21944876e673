//===- FpReports.cpp - np.errstate's reports from kernels -----------------===//
//
// Part of cpnumeric. Private to lib/Engine. The queue of floating-point error
// reports: kernels (their status words, read when they finish) and the
// baseline tier add to it on any thread; the bindings take them at a sync
// point and warn or raise as np.errstate says.
//
//===----------------------------------------------------------------------===//

#include "EngineInternal.h"

#include <mutex>
#include <tuple>

namespace cpn {
namespace {
std::mutex fpReportsMutex;
std::vector<FpReport> fpReports;
} // namespace

void detail::reportFpErrors(const FpSites &fp,
                            const std::vector<int32_t> &status) {
  std::lock_guard<std::mutex> lock(fpReportsMutex);
  for (size_t k = 0; k < fp.names.size(); ++k) {
    auto bits = static_cast<uint8_t>((status[k / ::cpn::kFpSitesPerWord] >>
                                      (3 * (k % ::cpn::kFpSitesPerWord))) &
                                     7);
    if (bits) {
      FpReport r{fp.names[k], bits, fp.actions};
      if (k < fp.locations.size())
        std::tie(r.file, r.line) = fp.locations[k];
      fpReports.push_back(std::move(r));
    }
  }
}

std::vector<FpReport> takeFpReports() {
  std::lock_guard<std::mutex> lock(fpReportsMutex);
  std::vector<FpReport> out;
  out.swap(fpReports);
  return out;
}

bool hasFpReports() {
  std::lock_guard<std::mutex> lock(fpReportsMutex);
  return !fpReports.empty();
}

} // namespace cpn
