#!/usr/bin/env bash
# Installs PTXBench's build dependencies (Debian 12 / Ubuntu 22.04+ packages) and builds it into
# ./build. The CUDA toolkit is optional: with nvcc (on PATH, in $CUDA_HOME or /usr/local/cuda) the
# kernel build stage and the GPU harness are built too; without it the CPU-only parts are.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config git
  nlohmann-json3-dev libcli11-dev libfmt-dev libspdlog-dev
  libcurl4-openssl-dev libssl-dev libpcre2-dev libcpp-httplib-dev
  libgtest-dev libgmock-dev
  chromium  # headless browser for the report test (ctest -L browser); it skips without it
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo ${PTXBENCH_CMAKE_ARGS:-}
cmake --build build -j "$(nproc)"
echo "setup: built build/bin/ptxbench"
