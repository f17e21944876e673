//===- Error.cpp - errors that carry their kind ---------------------------===//
//
// Part of cpnumeric's runtime (libcpnrt). See cpnrt/Error.h. Error's key
// function is here, so that its type information has one home (libcpnrt),
// which the Engine's throws and the bindings' catches share.
//
//===----------------------------------------------------------------------===//

#include "cpnrt/Error.h"

cpnrt::Error::~Error() = default;
