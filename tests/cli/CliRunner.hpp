// Runs the built paralens binary for end-to-end tests, capturing stdout, stderr and exit code.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

struct CliResult {
    int exitCode = -1;
    std::string out;
    std::string err;
};

// `args` is appended to the binary path as shell words (quote them yourself). `env` is prepended
// (e.g. "DISPLAY= "). Standard input is /dev/null.
CliResult RunParalens(const std::string& args, const std::string& env = "");

// Runs `args`, REQUIREs exit code 0 (showing stderr when not) and parses standard output as JSON.
nlohmann::json RunParalensJson(const std::string& args);

// A fresh folder under the system temp folder, removed when the object dies.
struct CliTempDir {
    std::string path;
    CliTempDir();
    ~CliTempDir();
    std::string File(const std::string& name) const { return path + "/" + name; }
};
