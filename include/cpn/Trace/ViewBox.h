//===- ViewBox.h - a strided view as a box of its base ----------*- C++ -*-===//
//
// Part of cpnumeric. No MLIR here: convert-cpn-to-linalg lowers views and
// updates with it, and the Engine asks it whether a kernel compiled for one
// view offset serves another (kernels with offset arguments).
//
//===----------------------------------------------------------------------===//

#ifndef CPN_TRACE_VIEWBOX_H
#define CPN_TRACE_VIEWBOX_H

#include <cstdint>
#include <optional>
#include <vector>

namespace cpn {

/// The row-major (C-order) element strides of `shape`: what every layer
/// means by a contiguous array (views' offsets and strides, the kernels'
/// flat indices). `clampEmpty`: a dimension of size 0 counts as 1, as in
/// NumPy's strides of an empty array (a product of 0 would make every outer
/// stride 0).
inline std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &shape,
                                            bool clampEmpty = false) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    s[i - 1] = s[i] * (clampEmpty && shape[i] == 0 ? 1 : shape[i]);
  return s;
}

/// A view expressed per base dimension: base index j = offsets[j] +
/// sum over view dims i with owner[i] == j of coeffs[i] * d_i.
struct BoxView {
  std::vector<int64_t> offsets;
  std::vector<int64_t> owner;  // base dim of each view dim, -1 if stride 0
  std::vector<int64_t> coeffs; // step along that base dim
};

/// Decomposes a strided view (element `offset` and `strides` over the flat
/// C-order index of a base of `baseShape`; the view's shape `sizes`) into
/// per-dimension affine forms. Fails when the view crosses base rows (as a
/// reshaped view can). Which base dimension walks each view dimension
/// (owner, coeffs) does not depend on the offset; whether the view stays
/// inside every base dimension does.
inline std::optional<BoxView> decomposeView(const std::vector<int64_t> &baseShape,
                                            int64_t offset,
                                            const std::vector<int64_t> &strides,
                                            const std::vector<int64_t> &sizes) {
  size_t k = baseShape.size();
  std::vector<int64_t> bs = rowMajorStrides(baseShape);
  BoxView v;
  v.offsets.assign(k, 0);
  int64_t rem = offset;
  for (size_t j = 0; j < k; ++j) {
    v.offsets[j] = bs[j] ? rem / bs[j] : 0;
    rem -= v.offsets[j] * bs[j];
  }
  if (rem != 0 || strides.size() != sizes.size())
    return std::nullopt;
  for (size_t i = 0; i < sizes.size(); ++i) {
    int64_t s = strides[i], n = sizes[i];
    if (s == 0 || n == 1) {
      v.owner.push_back(-1);
      v.coeffs.push_back(0);
      continue;
    }
    int64_t owner = -1;
    for (size_t j = 0; j < k; ++j) // The outermost dim whose stride divides s.
      if (baseShape[j] > 1 && bs[j] != 0 && s % bs[j] == 0) {
        owner = static_cast<int64_t>(j);
        break;
      }
    if (owner < 0)
      return std::nullopt;
    v.owner.push_back(owner);
    v.coeffs.push_back(s / bs[owner]);
  }
  // Each base index must stay within its dimension over the whole view.
  for (size_t j = 0; j < k; ++j) {
    int64_t lo = v.offsets[j], hi = v.offsets[j];
    for (size_t i = 0; i < sizes.size(); ++i)
      if (v.owner[i] == static_cast<int64_t>(j))
        (v.coeffs[i] > 0 ? hi : lo) += v.coeffs[i] * (sizes[i] - 1);
    if (lo < 0 || hi >= baseShape[j])
      return std::nullopt;
  }
  return v;
}

} // namespace cpn

#endif // CPN_TRACE_VIEWBOX_H
