# Every dependency comes from a Debian bookworm -dev package (scripts/setup.sh installs them).
find_package(Threads REQUIRED)
find_package(nlohmann_json 3.11 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(fmt REQUIRED)
find_package(CURL REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)

# fmt as the compiled library (libfmt.so.9), not header-only: header-only fmt compiles fmt's own
# implementation (format-inl.h) into every file that formats, about 2 of a typical file's 7 CPU
# seconds, over 400 files. The GPU host (Ubuntu 24.04) has the same libfmt.so.9 (fmt 9.1), and
# bench/stage_binaries.sh carries it beside the binaries all the same.
add_library(ptxbench_fmt INTERFACE)
target_link_libraries(ptxbench_fmt INTERFACE fmt::fmt)
