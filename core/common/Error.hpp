// paralens::Error: the one exception type core throws at input boundaries.
// Its what() is a sentence a user can act on: where (file, line or byte offset, or option name)
// and what was expected. Thread-safety: plain value type.
#pragma once

#include <stdexcept>
#include <string>

namespace paralens {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Throws Error with the message when the condition is false. For input validation, not for bugs.
inline void Require(bool condition, const std::string& message)
{
    if (!condition) throw Error(message);
}

} // namespace paralens
