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

// The requested backend cannot run here: not built into this binary, no device, driver too old.
// Not a mistake in the input; the CLI exits with code 3 for it (2 for other Errors), so scripts
// can tell "cannot run here" from "asked wrongly".
class Unavailable : public Error {
public:
    explicit Unavailable(const std::string& message) : Error(message) {}
};

// Throws Error with the message when the condition is false. For input validation, not for bugs.
inline void Require(bool condition, const std::string& message)
{
    if (!condition) throw Error(message);
}

} // namespace paralens
