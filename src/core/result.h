#pragma once
// result<T>: a value or an error, for failures a caller is expected to handle (bad input, a missing
// tool, a rejected candidate's infrastructure). Written here because std::expected needs C++23
// (g++ 12 has it only with -std=c++2b) and tl::expected is not packaged in Debian bookworm.

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace ptxbench {

/// What went wrong, for a person: one line, and where it happened (a JSON path, a file:line).
struct error {
  std::string message;

  /// Returns a copy whose message is "context: message", as the error travels up.
  [[nodiscard]] error with_context(const std::string& context) const {
    return error{context + ": " + message};
  }
};

template <typename T>
class [[nodiscard]] result {
 public:
  result(T value) : m_state(std::move(value)) {}            // NOLINT(google-explicit-constructor)
  result(error err) : m_state(std::move(err)) {}            // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool ok() const { return std::holds_alternative<T>(m_state); }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<T>(m_state); }
  const T& value() const& { return std::get<T>(m_state); }
  T&& value() && { return std::get<T>(std::move(m_state)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  [[nodiscard]] const error& err() const { return std::get<error>(m_state); }

 private:
  std::variant<T, error> m_state;
};

/// result<void>: success carries nothing.
struct ok_t {};
using status = result<ok_t>;
inline status ok() { return ok_t{}; }

inline error make_error(std::string message) { return error{std::move(message)}; }

}  // namespace ptxbench
