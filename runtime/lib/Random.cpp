//===- Random.cpp - Philox words on the host ------------------------------===//
//
// Part of cpnumeric's runtime (libcpnrt). See cpnrt/Random.h; the kernels'
// version is lowerRandomBits in lib/Conversion/CPNToLinalg/Random.cpp, and
// test_random.py checks that both give the same words.
//
//===----------------------------------------------------------------------===//

#include "cpnrt/Random.h"

void cpnrt::philoxWords(uint64_t key, uint64_t counter, int64_t n,
                        uint64_t *out) {
  constexpr uint64_t kMask = 0xffffffffull;
  constexpr uint64_t kM0 = 0xD2511F53ull, kM1 = 0xCD9E8D57ull;
  constexpr uint64_t kW0 = 0x9E3779B9ull, kW1 = 0xBB67AE85ull;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t ctr = counter + static_cast<uint64_t>(i);
    uint64_t c0 = ctr & kMask, c1 = ctr >> 32, c2 = 0, c3 = 0;
    uint64_t k0 = key & kMask, k1 = key >> 32;
    for (int round = 0; round < 10; ++round) {
      uint64_t p0 = c0 * kM0, p1 = c2 * kM1;
      uint64_t n0 = (p1 >> 32) ^ c1 ^ k0, n2 = (p0 >> 32) ^ c3 ^ k1;
      c1 = p1 & kMask;
      c3 = p0 & kMask;
      c0 = n0;
      c2 = n2;
      k0 = (k0 + kW0) & kMask;
      k1 = (k1 + kW1) & kMask;
    }
    out[i] = (c0 << 32) | c1;
  }
}
