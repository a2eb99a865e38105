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

# ptxbench_library(<target> <area> SOURCES ... [DEPS ...]): a static library for one area, linked to
# the libraries it builds on (PUBLIC where its headers expose them, which is the usual case here).
function(ptxbench_library target area)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${target} STATIC ${ARG_SOURCES})
  ptxbench_area(${target} ${area})
  target_link_libraries(${target} PUBLIC ${ARG_DEPS})
endfunction()
