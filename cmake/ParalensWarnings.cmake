# Warnings live on one INTERFACE target that every paralens target links privately.
add_library(paralens_warnings INTERFACE)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(paralens_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
      -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough>)
endif()

# Code that is not hot builds at -O1 in optimized builds: the command line's option handling and
# printing (app/cli) and the tests' bodies. They include CLI11, Catch2 and nlohmann::json, whose
# inline code at -O3 made most of the build's time (a CLI file 23 s at -O3, 13 s at -O1); core/, gpu/,
# the window and the benchmarks, which do the work, keep the build type's level.
add_library(paralens_light_optimization INTERFACE)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang" AND NOT EMSCRIPTEN)
  target_compile_options(paralens_light_optimization INTERFACE
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CONFIG:Release,RelWithDebInfo,MinSizeRel>>:-O1>)
endif()
