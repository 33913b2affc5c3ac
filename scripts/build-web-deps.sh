#!/usr/bin/env bash
# Builds the C and C++ libraries the web page compiles in, from Debian 12's own source packages
# (`apt-get source`, a deb-src entry for Debian's archive: scripts/install-deps-web.sh adds it),
# with Debian's emscripten. Nothing is fetched from anywhere else, and no emscripten port is used.
#
#   zlib, libdeflate, sqlite3 (its amalgamation, made by the source's own build), glpk (with the AMD/COLAMD
#   copies its source carries), simdjson (its single-header build), imgui 1.86 (the GLFW and
#   OpenGL3 backends, the latter for WebGL2 / GLES3), libstb (stb_image_write, stb_truetype,
#   stb_rect_pack), nlohmann-json3 (headers).
#
# Exit codes: 0 ready, 3 something could not be had here (emcc, apt-get source), 1 a build failed.
# Output: build/web-deps/prefix/{include,lib} (PARALENS_WEB_DEPS overrides build/web-deps), read
# by cmake/ParalensWebDependencies.cmake. Each library is rebuilt only when its source version or
# the flags below change (a stamp file per library), so a second run takes a second.
# Every object is compiled with -pthread (the page's workers share one memory) and C++ with
# -fexceptions (paralens' errors are exceptions).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
deps=${PARALENS_WEB_DEPS:-$root/build/web-deps}
src=$deps/src
prefix=$deps/prefix
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs} # emscripten's JS tools need Debian's node modules
export EM_CACHE_QUIET=1
cflags=(-O2 -pthread)
cxxflags=(-O2 -pthread -fexceptions -std=c++17)
flags_id="emcc $(emcc -dumpversion 2>/dev/null || echo '?') ${cflags[*]} | ${cxxflags[*]} | v3"
jobs=$(nproc 2>/dev/null || echo 2)

say() { echo "build-web-deps: $*" >&2; }
die() { echo "build-web-deps: $*" >&2; exit 1; }
unavailable() { echo "build-web-deps: $*" >&2; exit 3; } # cannot be had here (exit 3), not a failed build

command -v emcc >/dev/null || unavailable "emcc not found: run scripts/install-deps-web.sh (Debian package emscripten)"
command -v apt-get >/dev/null || unavailable "apt-get not found: the libraries come from Debian's source packages"
mkdir -p "$src" "$prefix/include" "$prefix/lib"

# The unpacked source of Debian package $1, fetched once into $src/$1/.
source_dir() {
  local pkg=$1 dir
  dir=$(find "$src/$pkg" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | head -n 1)
  if [ -z "$dir" ]; then
    say "apt-get source $pkg"
    rm -rf "$src/$pkg.tmp" && mkdir -p "$src/$pkg.tmp"
    (cd "$src/$pkg.tmp" && apt-get source -qq "$pkg" >/dev/null 2>"$src/$pkg.log") ||
      unavailable "apt-get source $pkg failed ($(tail -n 1 "$src/$pkg.log")); is there a deb-src entry? (scripts/install-deps-web.sh adds one)"
    rm -rf "$src/$pkg" && mv "$src/$pkg.tmp" "$src/$pkg"
    dir=$(find "$src/$pkg" -mindepth 1 -maxdepth 1 -type d | head -n 1)
  fi
  echo "$dir"
}

# Up to date when the stamp names this source and these flags.
fresh() { [ -f "$prefix/.stamp-$1" ] && [ "$(cat "$prefix/.stamp-$1")" = "$2 | $flags_id" ]; }
stamp() { echo "$2 | $flags_id" > "$prefix/.stamp-$1"; }

# compile OBJDIR LIB COMPILER FLAGS... -- FILES...: every file to an object (in parallel), then one archive.
compile() {
  local objdir=$1 lib=$2 compiler=$3; shift 3
  local flags=()
  while [ "$1" != "--" ]; do flags+=("$1"); shift; done
  shift
  rm -rf "$objdir" && mkdir -p "$objdir"
  printf '%s\n' "$@" | xargs -P "$jobs" -I{} sh -c \
    'f="$1"; shift; o="$0/$(echo "${f#./}" | tr / _).o"; "$@" -c "$f" -o "$o" || { echo "failed: $f" >&2; exit 255; }' \
    "$objdir" {} "$compiler" "${flags[@]}"
  rm -f "$prefix/lib/$lib.tmp" && emar rcs "$prefix/lib/$lib.tmp" "$objdir"/*.o && mv "$prefix/lib/$lib.tmp" "$prefix/lib/$lib"
}

build_zlib() {
  local dir; dir=$(source_dir zlib)
  fresh zlib "$dir" && return
  say "zlib ($(basename "$dir"))"
  # The library built with unistd.h and stdarg.h, as zlib's configure finds them on a POSIX system,
  # and its users given the zconf.h that configure writes then, so that both agree on z_off_t
  # (off_t, 64 bits).
  mkdir -p "$deps/obj/zlib-include"
  sed -e 's|^#ifdef HAVE_UNISTD_H .*|#if 1|' -e 's|^#ifdef HAVE_STDARG_H .*|#if 1|' "$dir/zconf.h" > "$deps/obj/zlib-include/zconf.h"
  (cd "$dir" && compile "$deps/obj/zlib" libz.a emcc "${cflags[@]}" -DHAVE_UNISTD_H -DHAVE_STDARG_H -- \
    adler32.c compress.c crc32.c deflate.c gzclose.c gzlib.c gzread.c gzwrite.c infback.c inffast.c inflate.c \
    inftrees.c trees.c uncompr.c zutil.c)
  cp "$dir/zlib.h" "$deps/obj/zlib-include/zconf.h" "$prefix/include/"
  stamp zlib "$dir"
}

build_libdeflate() {
  local dir; dir=$(source_dir libdeflate)
  fresh libdeflate "$dir" && return
  say "libdeflate ($(basename "$dir"))"
  local files=()
  mapfile -t files < <(cd "$dir" && find lib -name '*.c' | sort) # lib/x86 and lib/arm compile to nothing here
  (cd "$dir" && compile "$deps/obj/libdeflate" libdeflate.a emcc "${cflags[@]}" -I. -- "${files[@]}")
  cp "$dir/libdeflate.h" "$prefix/include/"
  stamp libdeflate "$dir"
}

build_sqlite3() {
  local dir; dir=$(source_dir sqlite3)
  fresh sqlite3 "$dir" && return
  say "sqlite3 ($(basename "$dir")): the amalgamation, by the source's own build on this machine"
  command -v tclsh >/dev/null || unavailable "tclsh not found (Debian package tcl): sqlite3's amalgamation is made by Tcl scripts"
  rm -rf "$deps/obj/sqlite3-host" && mkdir -p "$deps/obj/sqlite3-host"
  (cd "$deps/obj/sqlite3-host" && "$dir/configure" --disable-tcl >configure.log 2>&1 && make -j"$jobs" sqlite3.c >make.log 2>&1) ||
    die "sqlite3's amalgamation did not build (see $deps/obj/sqlite3-host/*.log)"
  (cd "$deps/obj/sqlite3-host" && compile "$deps/obj/sqlite3" libsqlite3.a emcc "${cflags[@]}" \
    -DSQLITE_THREADSAFE=1 -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_DEFAULT_MEMSTATUS=0 -- sqlite3.c)
  cp "$deps/obj/sqlite3-host/sqlite3.h" "$deps/obj/sqlite3-host/sqlite3ext.h" "$prefix/include/"
  stamp sqlite3 "$dir"
}

build_glpk() {
  local dir; dir=$(source_dir glpk)
  fresh glpk "$dir" && return
  say "glpk ($(basename "$dir"))"
  local includes=() files=()
  for d in "$dir"/src "$dir"/src/*/; do
    case "$d" in */zlib/) continue ;; esac # Debian builds against zlib, not GLPK's copy
    includes+=(-I"${d%/}")
  done
  mapfile -t files < <(cd "$dir/src" && find . -name '*.c' -not -path './zlib/*' | sort)
  # TLS: GLPK keeps its environment per thread (Debian's configure finds __thread too).
  (cd "$dir/src" && compile "$deps/obj/glpk" libglpk.a emcc "${cflags[@]}" -w -DTLS=__thread -I"$prefix/include" \
    "${includes[@]}" -- "${files[@]}")
  cp "$dir/src/glpk.h" "$prefix/include/"
  stamp glpk "$dir"
}

build_simdjson() {
  local dir; dir=$(source_dir simdjson)
  fresh simdjson "$dir" && return
  say "simdjson ($(basename "$dir")): the single-header build"
  (cd "$dir/singleheader" && compile "$deps/obj/simdjson" libsimdjson.a em++ "${cxxflags[@]}" -Wno-#pragma-messages -- simdjson.cpp)
  cp "$dir/singleheader/simdjson.h" "$prefix/include/"
  stamp simdjson "$dir"
}

build_nlohmann() {
  local dir; dir=$(source_dir nlohmann-json3)
  fresh nlohmann-json3 "$dir" && return
  say "nlohmann-json3 ($(basename "$dir")): headers"
  rm -rf "$prefix/include/nlohmann" && cp -r "$dir/include/nlohmann" "$prefix/include/"
  stamp nlohmann-json3 "$dir"
}

build_stb() {
  local dir; dir=$(source_dir libstb)
  fresh libstb "$dir" && return
  say "libstb ($(basename "$dir")): stb_image_write, stb_truetype, stb_rect_pack"
  mkdir -p "$prefix/include/stb" "$deps/obj"
  cp "$dir"/stb_image_write.h "$dir"/stb_truetype.h "$dir"/stb_rect_pack.h "$prefix/include/stb/"
  cat > "$deps/obj/stb_impl.c" <<'EOF'
/* The implementations Debian's libstb.a carries, for what paralens and Dear ImGui use. */
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include "stb/stb_image_write.h"
#define STB_RECT_PACK_IMPLEMENTATION
#include "stb/stb_rect_pack.h"
#define STB_TRUETYPE_IMPLEMENTATION
#include "stb/stb_truetype.h"
EOF
  (cd "$deps/obj" && compile "$deps/obj/stb" libstb.a emcc "${cflags[@]}" -I"$prefix/include" -- stb_impl.c)
  stamp libstb "$dir"
}

build_imgui() {
  local dir; dir=$(source_dir imgui)
  fresh imgui "$dir" && return
  say "imgui ($(basename "$dir")): core, GLFW backend (emscripten's GLFW), OpenGL3 backend on WebGL2"
  # As Debian's Makefile builds it: stb_truetype and stb_rect_pack from libstb.
  (cd "$dir" && compile "$deps/obj/imgui" libimgui.a em++ "${cxxflags[@]}" -I. -I"$prefix/include" \
    -DIMGUI_DISABLE_STB_RECT_PACK_IMPLEMENTATION '-DIMGUI_STB_RECT_PACK_FILENAME=<stb/stb_rect_pack.h>' \
    -DIMGUI_DISABLE_STB_TRUETYPE_IMPLEMENTATION '-DIMGUI_STB_TRUETYPE_FILENAME=<stb/stb_truetype.h>' \
    -DIMGUI_IMPL_OPENGL_ES3 -- \
    imgui.cpp imgui_draw.cpp imgui_tables.cpp imgui_widgets.cpp backends/imgui_impl_glfw.cpp backends/imgui_impl_opengl3.cpp)
  mkdir -p "$prefix/include/imgui/backends"
  cp "$dir"/*.h "$prefix/include/imgui/"
  cp "$dir"/backends/imgui_impl_glfw.h "$dir"/backends/imgui_impl_opengl3.h "$dir"/backends/imgui_impl_opengl3_loader.h \
    "$prefix/include/imgui/backends/"
  stamp imgui "$dir"
}

start=$(date +%s)
build_zlib
build_libdeflate
build_sqlite3
build_glpk
build_simdjson
build_nlohmann
build_stb
build_imgui
say "ready in $prefix ($(( $(date +%s) - start )) s)"
