# The web page's dependencies (an Emscripten configuration: `cmake --preset web`). Every C/C++
# library was compiled from Debian's source packages by scripts/build-web-deps.sh into one prefix;
# this file names them as the same targets ParalensDependencies.cmake gives the desktop build, so
# core/ and app/gui build unchanged. GLFW is emscripten's own JS implementation (-sUSE_GLFW=3) and
# OpenGL is WebGL2; CUDA, CUPTI, MPI and the CLI are not part of the page.

set(PARALENS_WEB_DEPS "${PROJECT_SOURCE_DIR}/build/web-deps/prefix" CACHE PATH
    "Where scripts/build-web-deps.sh installed the page's libraries")
set(_missing "")
foreach(_lib z deflate sqlite3 glpk simdjson imgui stb)
  if(NOT EXISTS "${PARALENS_WEB_DEPS}/lib/lib${_lib}.a")
    list(APPEND _missing lib${_lib}.a)
  endif()
endforeach()
if(NOT EXISTS "${PARALENS_WEB_DEPS}/include/nlohmann/json.hpp")
  list(APPEND _missing nlohmann/json.hpp)
endif()
if(_missing)
  message(FATAL_ERROR "The web page's libraries are missing from ${PARALENS_WEB_DEPS} (${_missing}): "
                      "run scripts/install-deps-web.sh (it builds them from Debian's source packages)")
endif()

# Every object of the page shares one memory between its workers (pthreads) and throws C++
# exceptions: the libraries were compiled the same way.
add_compile_options(-pthread -fexceptions)
add_link_options(-pthread -fexceptions)

find_package(Threads REQUIRED)

function(paralens_web_library target lib)
  add_library(${target} STATIC IMPORTED GLOBAL)
  set_target_properties(${target} PROPERTIES IMPORTED_LOCATION "${PARALENS_WEB_DEPS}/lib/${lib}"
                        INTERFACE_INCLUDE_DIRECTORIES "${PARALENS_WEB_DEPS}/include")
endfunction()
paralens_web_library(ZLIB::ZLIB libz.a)
paralens_web_library(Deflate::Deflate libdeflate.a)
paralens_web_library(SQLite::SQLite3 libsqlite3.a)
paralens_web_library(GLPK::GLPK libglpk.a)
paralens_web_library(simdjson::simdjson libsimdjson.a)
paralens_web_library(paralens_web_stb libstb.a)
paralens_web_library(paralens_web_imgui libimgui.a)
add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED GLOBAL)
set_target_properties(nlohmann_json::nlohmann_json PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${PARALENS_WEB_DEPS}/include")

# The same interface target the desktop's window links: ImGui (with its GLFW and OpenGL3 backends,
# the latter on GLES3 = WebGL2), stb, emscripten's GLFW.
set(PARALENS_HAVE_GUI ON)
add_library(paralens_imgui INTERFACE)
target_include_directories(paralens_imgui SYSTEM INTERFACE ${PARALENS_WEB_DEPS}/include/imgui
                           ${PARALENS_WEB_DEPS}/include/imgui/backends ${PARALENS_WEB_DEPS}/include/stb)
target_compile_definitions(paralens_imgui INTERFACE IMGUI_IMPL_OPENGL_ES3)
target_link_libraries(paralens_imgui INTERFACE paralens_web_imgui paralens_web_stb)
target_link_options(paralens_imgui INTERFACE -sUSE_GLFW=3 -sMAX_WEBGL_VERSION=2 -sMIN_WEBGL_VERSION=2)

set(PARALENS_HAVE_BLAS OFF)
set(PARALENS_HAVE_MPI OFF)
set(PARALENS_HAVE_CUDA OFF)
set(PARALENS_HAVE_NCCL OFF)
set(PARALENS_HAVE_CUPTI OFF)
set(PARALENS_BUILD_TESTS OFF CACHE BOOL "" FORCE)  # the page's tests run in a browser: tests/web
set(PARALENS_BUILD_BENCH OFF CACHE BOOL "" FORCE)
