//===- Error.h - errors that carry their kind -------------------*- C++ -*-===//
//
// Part of cpnumeric's runtime (libcpnrt).
//
// Owns the kinds of error the runtime and the Engine report (ErrorKind) and
// the exception that carries one (Error). A failure keeps its kind from where
// it happens (a library call's per-thread slot, Lapack.h; a task of the task
// graph, TaskGraph.h) to the thread that waits for its value, where the
// bindings (python/src/errors.cpp) raise the Python class of the kind: the
// message is never parsed to find it. No Python here: the kinds name NumPy's
// classes only in their documentation.
//
//===----------------------------------------------------------------------===//

#ifndef CPNRT_ERROR_H
#define CPNRT_ERROR_H

#include <stdexcept>
#include <string>

namespace cpnrt {

/// What kind of failure an error is; the bindings raise the Python class of
/// each. The values are part of cpn_lib_take_error's C interface (cpnc's
/// modules pick their exception by them): append, never renumber.
enum class ErrorKind : int {
  Runtime = 0, ///< anything else (RuntimeError; a compiler's error included)
  LinAlg = 1,  ///< LAPACK's errors (numpy.linalg.LinAlgError)
  Index = 2,   ///< an index out of bounds in a library call (IndexError)
  Memory = 3,  ///< a store that could not be allocated (MemoryError)
};

/// A failure as it travels (a library call's slot, a task, a value): its
/// kind and its message, as the user reads it. An empty message: none.
struct Failure {
  ErrorKind kind = ErrorKind::Runtime;
  std::string message;

  explicit operator bool() const { return !message.empty(); }
};

/// An exception that carries its kind. Exported: it is thrown in libcpnrt
/// and the Engine and caught in the bindings, which are built with hidden
/// visibility, so its type must be one across the shared libraries.
class __attribute__((visibility("default"))) Error : public std::runtime_error {
public:
  Error(ErrorKind kind, const std::string &message)
      : std::runtime_error(message), kind_(kind) {}
  explicit Error(const Failure &failure)
      : Error(failure.kind, failure.message) {}
  ~Error() override;

  ErrorKind kind() const { return kind_; }

private:
  ErrorKind kind_;
};

} // namespace cpnrt

#endif // CPNRT_ERROR_H
