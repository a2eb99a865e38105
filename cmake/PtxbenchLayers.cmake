# The include rule, enforced by the build. Each src/<area>/ is a static library, and its headers
# are reachable only through that library: ptxbench_area() gives the area an include root under the
# build tree that holds a link to src/<area> and nothing else. A target therefore sees the headers of
# exactly the areas it links (its own and, transitively, the layers below it); including a header of
# a layer above it fails to compile with "No such file or directory". docs/architecture.md draws the
# layers.

# ptxbench_area(<target> <area>): <target> is (one of) the library target(s) of src/<area>, e.g.
# ptxbench_area(ptxbench_eval eval) or ptxbench_area(ptxbench_harness gpu/harness).
function(ptxbench_area target area)
  set(root ${CMAKE_BINARY_DIR}/layers/${area})
  if(NOT EXISTS ${root}/${area})
    get_filename_component(parent ${root}/${area} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${CMAKE_SOURCE_DIR}/src/${area} ${root}/${area} SYMBOLIC)
  endif()
  target_include_directories(${target} PUBLIC ${root})
endfunction()

# ptxbench_precompile(<target> [EXTRA <header>...] [REUSE_FROM <owner>]): precompiled headers for the
# target's C++ sources — the standard library, nlohmann-json and fmt, which nearly every file parses —
# and any EXTRA (gtest, CLI11). With REUSE_FROM the target uses <owner>'s precompiled header instead
# of building its own: building one costs about as much as compiling two files, and a unity batch
# (PTXBENCH_UNITY) saves only about a second with it, so one header per kind of target pays and one
# per target does not. GCC uses a precompiled header only where the compiler flags match (-fPIC for
# libraries, -fPIE for executables) and every macro defined when it was built is defined alike, so
# an owner has no definitions its reusers lack: ptxbench_core for the libraries, the core tests for
# the test executables (each warns, -Winvalid-pch, where that breaks). CUDA sources are left alone.
# PTXBENCH_PCH=OFF turns it off (a compiler without PCH support, or a check that every file includes
# what it uses).
option(PTXBENCH_PCH "Precompile the heavy common headers" ON)
function(ptxbench_precompile target)
  cmake_parse_arguments(ARG "" "REUSE_FROM" "EXTRA" ${ARGN})
  if(NOT PTXBENCH_PCH)
    return()
  endif()
  if(ARG_REUSE_FROM)
    set_target_properties(${target} PROPERTIES PRECOMPILE_HEADERS_REUSE_FROM ${ARG_REUSE_FROM})
    return()
  endif()
  set(headers <algorithm> <cstdint> <filesystem> <functional> <map> <memory> <optional> <set> <string>
              <string_view> <vector> <nlohmann/json.hpp> <fmt/format.h> ${ARG_EXTRA})
  foreach(h ${headers})
    target_precompile_headers(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:${h}>")
  endforeach()
endfunction()

# ptxbench_library(<target> <area> SOURCES ... [DEPS ...] [PRIVATE_DEPS ...]): a static library for one
# area. DEPS are the layers its headers include (PUBLIC: whoever includes its headers sees theirs);
# PRIVATE_DEPS are layers only its sources use: a consumer does not see their headers through it, so
# a layer that needs one must link it itself. (Static libraries still link transitively.)
function(ptxbench_library target area)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(${target} STATIC ${ARG_SOURCES})
  ptxbench_area(${target} ${area})
  if(target STREQUAL "ptxbench_core")
    ptxbench_precompile(${target})
  else()
    ptxbench_precompile(${target} REUSE_FROM ptxbench_core)
  endif()
  target_link_libraries(${target} PUBLIC ${ARG_DEPS})
  if(ARG_PRIVATE_DEPS)
    target_link_libraries(${target} PRIVATE ${ARG_PRIVATE_DEPS})
  endif()
endfunction()
