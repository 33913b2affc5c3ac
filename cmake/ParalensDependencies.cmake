# Finds what paralens builds against. Everything comes from Debian packages
# (scripts/install-deps.sh) or the CUDA toolkit; CUDA, NCCL, CUPTI and the GUI are optional.

find_package(Threads REQUIRED)
find_package(ZLIB REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(simdjson REQUIRED)
find_package(SQLite3 REQUIRED) # Nsight Systems reports (their SQLite export)
find_package(CLI11 REQUIRED)
# GLPK (Debian's libglpk-dev): the exact ILP of auto-parallelization. It ships no CMake package.
find_path(GLPK_INCLUDE_DIR glpk.h)
find_library(GLPK_LIBRARY glpk)
if(NOT GLPK_INCLUDE_DIR OR NOT GLPK_LIBRARY)
  message(FATAL_ERROR "GLPK (glpk.h, libglpk) not found; run scripts/install-deps.sh (package libglpk-dev)")
endif()
# libdeflate (Debian's libdeflate-dev): .json.gz traces compressed on all cores. No CMake package.
find_path(DEFLATE_INCLUDE_DIR libdeflate.h)
find_library(DEFLATE_LIBRARY deflate)
if(NOT DEFLATE_INCLUDE_DIR OR NOT DEFLATE_LIBRARY)
  message(FATAL_ERROR "libdeflate (libdeflate.h, libdeflate) not found; run scripts/install-deps.sh (package libdeflate-dev)")
endif()
add_library(Deflate::Deflate UNKNOWN IMPORTED)
set_target_properties(Deflate::Deflate PROPERTIES IMPORTED_LOCATION ${DEFLATE_LIBRARY} INTERFACE_INCLUDE_DIRECTORIES ${DEFLATE_INCLUDE_DIR})
add_library(GLPK::GLPK UNKNOWN IMPORTED)
set_target_properties(GLPK::GLPK PROPERTIES IMPORTED_LOCATION ${GLPK_LIBRARY} INTERFACE_INCLUDE_DIRECTORIES ${GLPK_INCLUDE_DIR})

# ---- GUI: Debian's libimgui-dev (1.86, with the GLFW and OpenGL3 backends inside libimgui.a) ----
set(PARALENS_HAVE_GUI OFF)
if(NOT PARALENS_WITH_GUI STREQUAL "OFF")
  find_package(glfw3 3.3 QUIET)
  find_package(OpenGL QUIET)
  find_path(IMGUI_INCLUDE_DIR imgui.h PATH_SUFFIXES imgui)
  find_library(IMGUI_LIBRARY imgui)
  # Debian builds libimgui.a against libstb (stb_truetype, stb_rect_pack); the PNG writer and
  # reader come from libstb too.
  find_path(STB_INCLUDE_DIR stb_image_write.h PATH_SUFFIXES stb)
  find_library(STB_LIBRARY stb)
  if(glfw3_FOUND AND OpenGL_FOUND AND IMGUI_INCLUDE_DIR AND IMGUI_LIBRARY AND STB_INCLUDE_DIR AND STB_LIBRARY)
    set(PARALENS_HAVE_GUI ON)
    add_library(paralens_imgui INTERFACE)
    target_include_directories(paralens_imgui SYSTEM INTERFACE ${IMGUI_INCLUDE_DIR} ${IMGUI_INCLUDE_DIR}/backends ${STB_INCLUDE_DIR})
    target_link_libraries(paralens_imgui INTERFACE ${IMGUI_LIBRARY} ${STB_LIBRARY} glfw OpenGL::GL ${CMAKE_DL_LIBS})
  elseif(PARALENS_WITH_GUI STREQUAL "ON")
    message(FATAL_ERROR "PARALENS_WITH_GUI=ON but libimgui-dev, libglfw3-dev, libstb-dev or OpenGL were not found; "
                        "run scripts/install-deps.sh")
  endif()
endif()

# ---- OpenBLAS (Debian's libopenblas-dev): the real CPU GEMMs of pipeline stage processes ----
set(PARALENS_HAVE_BLAS OFF)
set(BLA_VENDOR OpenBLAS)
find_package(BLAS QUIET)
find_path(PARALENS_CBLAS_INCLUDE cblas.h PATH_SUFFIXES openblas x86_64-linux-gnu/openblas-pthread)
if(BLAS_FOUND AND PARALENS_CBLAS_INCLUDE)
  set(PARALENS_HAVE_BLAS ON)
endif()

# ---- MPI (Open MPI from Debian): the multi-process backend of `paralens run` ----
set(PARALENS_HAVE_MPI OFF)
if(NOT PARALENS_WITH_MPI STREQUAL "OFF")
  find_package(MPI QUIET COMPONENTS CXX)
  if(MPI_CXX_FOUND)
    set(PARALENS_HAVE_MPI ON)
  elseif(PARALENS_WITH_MPI STREQUAL "ON")
    message(FATAL_ERROR "PARALENS_WITH_MPI=ON but no MPI was found; run scripts/install-deps.sh (openmpi)")
  endif()
endif()

# ---- CUDA, NCCL, CUPTI: detected, never required ----
set(PARALENS_HAVE_CUDA OFF)
set(PARALENS_HAVE_NCCL OFF)
set(PARALENS_HAVE_CUPTI OFF)
if(NOT PARALENS_WITH_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    # Never "native": a machine without a GPU must configure. 80 = A100, 90 = H100/H200.
    set(CMAKE_CUDA_ARCHITECTURES "80;90" CACHE STRING "CUDA architectures to build for")
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    find_package(CUDAToolkit QUIET)
  endif()
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND)
    set(PARALENS_HAVE_CUDA ON)
    # NCCL and CUPTI may come from the toolkit, from NCCL_HOME, or from pip wheels (nvidia/nccl,
    # nvidia/cuda_cupti under Python's site-packages).
    set(_paralens_wheel_roots "")
    find_program(PARALENS_PYTHON3 python3)
    if(PARALENS_PYTHON3)
      execute_process(COMMAND ${PARALENS_PYTHON3} -c "import site; print(';'.join(site.getsitepackages()))"
                      OUTPUT_VARIABLE _paralens_site OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      foreach(_dir IN LISTS _paralens_site)
        # CUDA 12's wheels have a folder each; CUDA 13's (cupti, runtime, cuBLAS) share nvidia/cu13.
        list(APPEND _paralens_wheel_roots ${_dir}/nvidia/nccl ${_dir}/nvidia/cuda_cupti ${_dir}/nvidia/cu13)
      endforeach()
    endif()
    find_path(NCCL_INCLUDE_DIR nccl.h
              HINTS $ENV{NCCL_HOME} ${CUDAToolkit_INCLUDE_DIRS} ${_paralens_wheel_roots} PATH_SUFFIXES include)
    find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2
                 HINTS $ENV{NCCL_HOME} ${CUDAToolkit_LIBRARY_DIR} ${_paralens_wheel_roots} PATH_SUFFIXES lib lib64)
    if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
      set(PARALENS_HAVE_NCCL ON)
    endif()
    if(NOT PARALENS_WITH_CUPTI STREQUAL "OFF")
      find_path(CUPTI_INCLUDE_DIR cupti.h
                HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI ${_paralens_wheel_roots}
                PATH_SUFFIXES include)
      find_library(CUPTI_LIBRARY NAMES cupti libcupti.so.13 libcupti.so.12
                   HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI ${_paralens_wheel_roots}
                   PATH_SUFFIXES lib lib64)
      if(CUPTI_INCLUDE_DIR AND CUPTI_LIBRARY)
        set(PARALENS_HAVE_CUPTI ON)
      elseif(PARALENS_WITH_CUPTI STREQUAL "ON")
        message(FATAL_ERROR "PARALENS_WITH_CUPTI=ON but cupti.h / libcupti were not found")
      endif()
    endif()
  elseif(PARALENS_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "PARALENS_WITH_CUDA=ON but no CUDA compiler/toolkit was found (is nvcc on the PATH?)")
  endif()
  if(PARALENS_WITH_CUDA STREQUAL "ON" AND NOT PARALENS_HAVE_NCCL)
    message(FATAL_ERROR "PARALENS_WITH_CUDA=ON but nccl.h / libnccl were not found (set NCCL_HOME)")
  endif()
endif()
