//===- LibFunctions.cpp - the table of every cpn_lib_* entry point --------===//
//
// Part of cpnumeric's runtime (libcpnrt). The JIT's symbol table of library
// calls (cpn_lib_functions), gathered from the families' own lists: LAPACK
// (Lapack.cpp), stacked products (Blas.cpp), the runtime's algorithms
// (Algorithms.cpp, Indexing.cpp, Scans.cpp) and FFT (Fft.cpp).
//
//===----------------------------------------------------------------------===//

#include "cpnrt/Lapack.h"

#include <cstring>
#include <string>
#include <unordered_set>
#include <vector>

extern "C" const cpn_lib_entry *cpn_lib_functions(size_t *count) {
  static const std::vector<cpn_lib_entry> table = [] {
    std::vector<cpn_lib_entry> t = cpnrt::lapackFunctions();
    for (auto part : {cpnrt::blasFunctions, cpnrt::algorithmFunctions,
                      cpnrt::fftFunctions})
      for (const cpn_lib_entry &e : part())
        t.push_back(e);
    return t;
  }();
  *count = table.size();
  return table.data();
}

bool cpnrt::isRuntimeAlgorithm(std::string_view callee) {
  static const std::unordered_set<std::string> names = [] {
    std::unordered_set<std::string> set;
    for (auto part : {cpnrt::algorithmFunctions, cpnrt::fftFunctions})
      for (const cpn_lib_entry &e : part())
        set.insert(std::string(e.name).substr(std::strlen("cpn_lib_")));
    return set;
  }();
  return names.count(std::string(callee)) != 0;
}
