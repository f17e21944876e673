//===- Trace.cpp - the op list recorded from Python calls -----------------===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#include "cpn/Trace/Trace.h"
#include "cpnrt/Profile.h"

#include <algorithm>
#include <atomic>
#include <set>
#include <sstream>
#include <stdexcept>

using namespace cpn;

void Trace::mix(const std::string &s) {
  for (unsigned char c : s)
    mix(c);
  mix(0xff);
}

namespace {
std::atomic<uint64_t> sharedExports{0}, lentCopies{0}, lentBytes{0};
std::atomic<uint64_t> importsBorrowed{0}, importCopies{0}, importBytes{0};
} // namespace

cpn::LendStats cpn::lendStats() {
  return {sharedExports.load(),   lentCopies.load(),   lentBytes.load(),
          importsBorrowed.load(), importCopies.load(), importBytes.load()};
}

void cpn::countSharedExport() { ++sharedExports; }

void cpn::countImport(bool borrowed, uint64_t bytes) {
  if (borrowed) {
    ++importsBorrowed;
    return;
  }
  ++importCopies;
  importBytes += bytes;
}

void cpn::resetLendStats() {
  sharedExports = 0;
  lentCopies = 0;
  lentBytes = 0;
  importsBorrowed = 0;
  importCopies = 0;
  importBytes = 0;
}

void cpn::detachIfLent(ValueNode &node) {
  if (!node.store || !node.store->lent())
    return;
  cpnrt::StoreRef lent = node.store;
  lent->wait(); // lent while its writer may still run (another thread)
  auto own = std::make_shared<cpnrt::Store>(lent->dtype(), lent->shape());
  {
    cpnrt::ProfileScope scope("copy", "detach_lent");
    cpnrt::copyBytes(own->data(), lent->data(), lent->nbytes());
  }
  ++lentCopies;
  lentBytes += lent->nbytes();
  node.store = std::move(own);
}

int32_t Trace::operandRef(const NodeRef &node) {
  if (!node->store) {
    if (!node->error.empty())
      throw cpnrt::Error(node->errorKind, node->error);
    if (node->epoch != epoch_ || node->opIndex < 0)
      throw std::logic_error("cpnumeric: a pending value from an older trace "
                             "was used; this is a bug in cpnumeric");
    return node->opIndex;
  }
  auto it = inputIndex_.find(node.get());
  if (it != inputIndex_.end())
    return it->second;
  detachIfLent(*node);
  int32_t ref = -static_cast<int32_t>(inputs_.size()) - 1;
  inputs_.push_back(node);
  inputIndex_[node.get()] = ref;
  // Inputs enter the hash by type only: their data never changes the code.
  mix(0x1234);
  mix(static_cast<uint64_t>(node->dtype));
  for (int64_t d : node->shape)
    mix(static_cast<uint64_t>(d));
  return ref;
}

NodeRef Trace::add(std::string name, const std::vector<NodeRef> &operands,
                   std::vector<int64_t> iattrs, std::string sattr,
                   std::vector<int64_t> shape, cpnrt::DType dtype,
                   NodeRef into) {
  TraceOp op;
  for (const NodeRef &o : operands)
    op.operands.push_back(operandRef(o));
  mix(name);
  for (int32_t r : op.operands)
    mix(static_cast<uint64_t>(static_cast<int64_t>(r)));
  mix(0xa0);
  bool offset = name == "view" || name == "update";
  for (size_t k = 0; k < iattrs.size(); ++k) {
    if (offset && k == 0)
      hash_ = hashMix(hash_, static_cast<uint64_t>(iattrs[0]));
    else
      mix(static_cast<uint64_t>(iattrs[k]));
  }
  mix(sattr);
  for (int64_t d : shape)
    mix(static_cast<uint64_t>(d));
  mix(static_cast<uint64_t>(dtype) + 0x100);
  if (fpChecks_ && canRaiseFpError(name)) {
    op.fpChecks = fpChecks_;
    mix(0xf00 + fpChecks_);
  }
  NodeRef node = into ? std::move(into) : std::make_shared<ValueNode>();
  node->shape = shape;
  node->dtype = dtype;
  node->opIndex = static_cast<int32_t>(ops_.size());
  node->epoch = epoch_;
  op.name = std::move(name);
  op.iattrs = std::move(iattrs);
  if (locLine_) {
    op.file = locFile_;
    op.line = locLine_;
  }
  op.sattr = std::move(sattr);
  op.shape = std::move(shape);
  op.dtype = dtype;
  op.result = node;
  ops_.push_back(std::move(op));
  return node;
}

std::vector<std::string> Trace::fpSites() const {
  std::vector<std::string> sites;
  for (const TraceOp &op : ops_)
    if (op.fpChecks &&
        std::find(sites.begin(), sites.end(), op.name) == sites.end())
      sites.push_back(op.name);
  return sites;
}

std::vector<std::pair<std::string, int32_t>> Trace::fpSiteLocations() const {
  std::vector<std::string> sites;
  std::vector<std::pair<std::string, int32_t>> where;
  for (const TraceOp &op : ops_)
    if (op.fpChecks &&
        std::find(sites.begin(), sites.end(), op.name) == sites.end()) {
      sites.push_back(op.name);
      where.emplace_back(op.file, op.line);
    }
  return where;
}

size_t Trace::offsetArgCount() const {
  size_t n = 0;
  for (const TraceOp &op : ops_)
    n += op.offsetArg;
  return n;
}

std::vector<int64_t> Trace::offsetArgs() const {
  std::vector<int64_t> out;
  for (const TraceOp &op : ops_)
    if (op.offsetArg)
      out.push_back(op.iattrs[0]);
  return out;
}

void Trace::setOffsetArgs(const std::vector<size_t> &positions) {
  size_t pos = 0, next = 0;
  for (TraceOp &op : ops_) {
    if (!hasViewOffset(op))
      continue;
    op.offsetArg = next < positions.size() && positions[next] == pos;
    next += op.offsetArg;
    ++pos;
  }
}

std::vector<int32_t> Trace::liveResults() const {
  std::vector<int32_t> live;
  for (size_t i = 0; i < ops_.size(); ++i)
    if (!ops_[i].result.expired())
      live.push_back(static_cast<int32_t>(i));
  return live;
}

void Trace::detachInputs() {
  inputIndex_.clear();
  for (NodeRef &in : inputs_) {
    auto node = std::make_shared<ValueNode>();
    node->shape = in->shape;
    node->dtype = in->dtype;
    in = node;
  }
}

void Trace::clear() {
  ops_.clear();
  inputs_.clear();
  inputIndex_.clear();
  hash_ = shapeHash_ = 0xcbf29ce484222325ull;
  ++epoch_;
}

std::string Trace::str() const {
  std::ostringstream os;
  auto ref = [](int32_t r) {
    return r >= 0 ? "%" + std::to_string(r) : "%in" + std::to_string(-r - 1);
  };
  auto shapeStr = [](const std::vector<int64_t> &s, cpnrt::DType t) {
    std::string out;
    for (int64_t d : s)
      out += std::to_string(d) + "x";
    return out + cpnrt::dtypeName(t);
  };
  for (size_t i = 0; i < inputs_.size(); ++i)
    os << "%in" << i << " : " << shapeStr(inputs_[i]->shape, inputs_[i]->dtype)
       << "\n";
  for (size_t i = 0; i < ops_.size(); ++i) {
    const TraceOp &op = ops_[i];
    os << "%" << i << " = " << op.name;
    for (size_t j = 0; j < op.operands.size(); ++j)
      os << (j ? ", " : " ") << ref(op.operands[j]);
    if (!op.iattrs.empty()) {
      os << " [";
      for (size_t j = 0; j < op.iattrs.size(); ++j) {
        os << (j ? ", " : "");
        if (j == 0 && op.offsetArg)
          os << "?";
        else
          os << op.iattrs[j];
      }
      os << "]";
    }
    if (!op.sattr.empty())
      os << " \"" << op.sattr << "\"";
    if (op.fpChecks)
      os << " {fp=" << int(op.fpChecks) << "}";
    os << " : " << shapeStr(op.shape, op.dtype)
       << (op.result.expired() ? "  (dead)" : "") << "\n";
  }
  return os.str();
}
