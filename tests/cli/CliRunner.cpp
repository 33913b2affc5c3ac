#include "CliRunner.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace {

std::string Slurp(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

int g_counter = 0;

} // namespace

CliTempDir::CliTempDir()
{
    path = (std::filesystem::temp_directory_path() /
            ("paralens-cli-" + std::to_string(::getpid()) + "-" + std::to_string(g_counter++))).string();
    std::filesystem::create_directories(path);
}

CliTempDir::~CliTempDir() { std::filesystem::remove_all(path); }

CliResult RunParalens(const std::string& args, const std::string& env)
{
    CliTempDir dir;
    std::string outPath = dir.File("stdout"), errPath = dir.File("stderr");
    std::string cmd = env + " '" PARALENS_BINARY "' " + args + " </dev/null >'" + outPath + "' 2>'" + errPath + "'";
    int status = std::system(cmd.c_str());
    CliResult r;
    r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = Slurp(outPath);
    r.err = Slurp(errPath);
    return r;
}

nlohmann::json RunParalensJson(const std::string& args)
{
    const CliResult r = RunParalens(args);
    INFO(args << "\nstderr: " << r.err);
    REQUIRE(r.exitCode == 0);
    return nlohmann::json::parse(r.out);
}
