// PTXBench TVM-FFI compatibility: tvm::ffi::Error and the TVM_FFI_THROW / TVM_FFI_ICHECK family.
//
// As in TVM-FFI, `TVM_FFI_THROW(ValueError) << "message"` throws a tvm::ffi::Error of that kind and
// `TVM_FFI_ICHECK(cond) << "why"` throws an InternalError when cond is false. The entry point that
// TVM_FFI_DLL_EXPORT_TYPED_FUNC generates catches it and reports it to the harness as the call's error
// ("run threw: ValueError: message (kernel.cu:12)"). No backtrace is collected: the file and line of
// the throw stand in for it.
#ifndef TVM_FFI_ERROR_H_
#define TVM_FFI_ERROR_H_

#include <tvm/ffi/c_api.h>

#include <exception>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

namespace tvm {
namespace ffi {

/// An error with a kind ("ValueError", "InternalError", ...) and a message.
class Error : public std::exception {
 public:
  Error(std::string kind, std::string message, std::string backtrace = std::string())
      : m_kind(std::move(kind)), m_message(std::move(message)), m_backtrace(std::move(backtrace)) {
    m_what = m_kind + ": " + m_message;
    if (!m_backtrace.empty()) m_what += " (" + m_backtrace + ")";
  }
  const std::string& kind() const noexcept { return m_kind; }
  const std::string& message() const noexcept { return m_message; }
  /// Where it was thrown ("kernel.cu:12"), when a TVM_FFI_THROW/CHECK macro threw it.
  const std::string& backtrace() const noexcept { return m_backtrace; }
  std::string FullMessage() const { return m_what + "\n"; }
  const char* what() const noexcept override { return m_what.c_str(); }

 private:
  std::string m_kind, m_message, m_backtrace, m_what;
};

namespace details {

inline const char* file_basename(const char* path) {
  const char* base = path;
  for (const char* p = path; *p; ++p)
    if (*p == '/') base = p + 1;
  return base;
}

/// Collects the streamed message and throws when the full expression ends. Throwing from a
/// destructor is the usual way to let `THROW(kind) << a << b;` read like a statement; the builder
/// only ever lives as a temporary, never during unwinding.
class error_builder {
 public:
  error_builder(const char* kind, const char* file, int line, bool log_before_throw)
      : m_kind(kind), m_where(std::string(file_basename(file)) + ":" + std::to_string(line)), m_log(log_before_throw) {}
  error_builder(const error_builder&) = delete;
  error_builder& operator=(const error_builder&) = delete;
  [[noreturn]] ~error_builder() noexcept(false) {
    Error error(m_kind, m_stream.str(), m_where);
    if (m_log) std::cerr << error.FullMessage();
    throw error;
  }
  std::ostringstream& stream() { return m_stream; }

 private:
  std::string m_kind, m_where;
  bool m_log;
  std::ostringstream m_stream;
};

// The comparison helpers return what the message needs when the check fails, nothing when it holds.
// Comparing an int with a size_t is common in kernels and harmless here, so the sign warning is off.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsign-compare"
template <typename X, typename Y>
std::optional<std::string> check_failed_text(const X& x, const Y& y) {
  std::ostringstream os;
  os << " (" << x << " vs. " << y << ") ";
  return os.str();
}
#define TVM_FFI_PTXBENCH_DEFINE_CHECK_(name, op)                          \
  template <typename X, typename Y>                                      \
  std::optional<std::string> check_##name(const X& x, const Y& y) {      \
    if (x op y) return std::nullopt;                                     \
    return check_failed_text(x, y);                                      \
  }
TVM_FFI_PTXBENCH_DEFINE_CHECK_(LT, <)
TVM_FFI_PTXBENCH_DEFINE_CHECK_(GT, >)
TVM_FFI_PTXBENCH_DEFINE_CHECK_(LE, <=)
TVM_FFI_PTXBENCH_DEFINE_CHECK_(GE, >=)
TVM_FFI_PTXBENCH_DEFINE_CHECK_(EQ, ==)
TVM_FFI_PTXBENCH_DEFINE_CHECK_(NE, !=)
#undef TVM_FFI_PTXBENCH_DEFINE_CHECK_
#pragma GCC diagnostic pop

template <typename T>
T&& check_not_null(T&& value, const char* expr, const char* file, int line) {
  if (value == nullptr) error_builder("InternalError", file, line, false).stream() << "Check not null: " << expr;
  return std::forward<T>(value);
}

}  // namespace details
}  // namespace ffi
}  // namespace tvm

#define TVM_FFI_THROW(ErrorKind) ::tvm::ffi::details::error_builder(#ErrorKind, __FILE__, __LINE__, false).stream()
#define TVM_FFI_LOG_AND_THROW(ErrorKind) \
  ::tvm::ffi::details::error_builder(#ErrorKind, __FILE__, __LINE__, true).stream()

// `if (ok) {} else THROW << ...` rather than `if (!ok) THROW << ...`, so an `else` after a check
// inside an unbraced if binds to the user's if, not to the macro's.
#define TVM_FFI_CHECK(cond, ErrorKind) \
  if (TVM_FFI_PREDICT_TRUE(cond)) {    \
  } else                               \
    TVM_FFI_THROW(ErrorKind) << "Check failed: (" #cond ") is false: "

#define TVM_FFI_CHECK_BINARY_OP(name, op, x, y, ErrorKind)                                           \
  if (auto tvm_ffi_check_failed_ = ::tvm::ffi::details::check_##name((x), (y)); !tvm_ffi_check_failed_) { \
  } else                                                                                             \
    TVM_FFI_THROW(ErrorKind) << "Check failed: " #x " " #op " " #y << *tvm_ffi_check_failed_ << ": "

#define TVM_FFI_CHECK_LT(x, y, ErrorKind) TVM_FFI_CHECK_BINARY_OP(LT, <, x, y, ErrorKind)
#define TVM_FFI_CHECK_GT(x, y, ErrorKind) TVM_FFI_CHECK_BINARY_OP(GT, >, x, y, ErrorKind)
#define TVM_FFI_CHECK_LE(x, y, ErrorKind) TVM_FFI_CHECK_BINARY_OP(LE, <=, x, y, ErrorKind)
#define TVM_FFI_CHECK_GE(x, y, ErrorKind) TVM_FFI_CHECK_BINARY_OP(GE, >=, x, y, ErrorKind)
#define TVM_FFI_CHECK_EQ(x, y, ErrorKind) TVM_FFI_CHECK_BINARY_OP(EQ, ==, x, y, ErrorKind)
#define TVM_FFI_CHECK_NE(x, y, ErrorKind) TVM_FFI_CHECK_BINARY_OP(NE, !=, x, y, ErrorKind)
#define TVM_FFI_CHECK_NOTNULL(x, ErrorKind) ::tvm::ffi::details::check_not_null((x), #x, __FILE__, __LINE__)

#define TVM_FFI_ICHECK(x) TVM_FFI_CHECK(x, InternalError)
#define TVM_FFI_ICHECK_LT(x, y) TVM_FFI_CHECK_LT(x, y, InternalError)
#define TVM_FFI_ICHECK_GT(x, y) TVM_FFI_CHECK_GT(x, y, InternalError)
#define TVM_FFI_ICHECK_LE(x, y) TVM_FFI_CHECK_LE(x, y, InternalError)
#define TVM_FFI_ICHECK_GE(x, y) TVM_FFI_CHECK_GE(x, y, InternalError)
#define TVM_FFI_ICHECK_EQ(x, y) TVM_FFI_CHECK_EQ(x, y, InternalError)
#define TVM_FFI_ICHECK_NE(x, y) TVM_FFI_CHECK_NE(x, y, InternalError)
#define TVM_FFI_ICHECK_NOTNULL(x) TVM_FFI_CHECK_NOTNULL(x, InternalError)

// Debug checks stay on: a benchmark run is the place to find out.
#define TVM_FFI_DCHECK(x) TVM_FFI_ICHECK(x)
#define TVM_FFI_DCHECK_LT(x, y) TVM_FFI_ICHECK_LT(x, y)
#define TVM_FFI_DCHECK_GT(x, y) TVM_FFI_ICHECK_GT(x, y)
#define TVM_FFI_DCHECK_LE(x, y) TVM_FFI_ICHECK_LE(x, y)
#define TVM_FFI_DCHECK_GE(x, y) TVM_FFI_ICHECK_GE(x, y)
#define TVM_FFI_DCHECK_EQ(x, y) TVM_FFI_ICHECK_EQ(x, y)
#define TVM_FFI_DCHECK_NE(x, y) TVM_FFI_ICHECK_NE(x, y)

#endif  // TVM_FFI_ERROR_H_
