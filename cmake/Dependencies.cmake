# Every dependency comes from a Debian bookworm -dev package (scripts/setup.sh installs them).
find_package(Threads REQUIRED)
find_package(nlohmann_json 3.11 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(CURL REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)

# Binaries are carried to the GPU host (Ubuntu 24.04), whose shared fmt/spdlog versions differ from
# bookworm's. Use fmt and spdlog header-only so no libfmt/libspdlog soname is needed at run time.
add_library(ptxbench_fmt INTERFACE)
target_link_libraries(ptxbench_fmt INTERFACE fmt::fmt-header-only)

get_target_property(_spdlog_inc spdlog::spdlog_header_only INTERFACE_INCLUDE_DIRECTORIES)
add_library(ptxbench_log INTERFACE)
target_include_directories(ptxbench_log SYSTEM INTERFACE ${_spdlog_inc})
target_compile_definitions(ptxbench_log INTERFACE SPDLOG_HEADER_ONLY SPDLOG_FMT_EXTERNAL_HO)
target_link_libraries(ptxbench_log INTERFACE ptxbench_fmt Threads::Threads)
