#!/usr/bin/env bash
# Installs PTXBench's build dependencies (Debian 12 / Ubuntu 22.04+ packages) and builds it into
# ./build. The CUDA toolkit is optional: with nvcc (on PATH, in $CUDA_HOME or /usr/local/cuda) the
# kernel build stage and the GPU harness are built too; without it the CPU-only parts are.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config git
  nlohmann-json3-dev libcli11-dev libfmt-dev
  libcurl4-openssl-dev libssl-dev libpcre2-dev libcpp-httplib-dev
  libseccomp-dev  # the candidate sandbox (src/sandbox)
  libgtest-dev libgmock-dev
  libsqlite3-dev libpq-dev  # the evaluation service's job queue (src/queue): SQLite and PostgreSQL clients
  postgresql-15             # the queue's PostgreSQL tests start a private server; they skip visibly without it
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

# Token counts for `ptxbench prompt`: the cl100k_base BPE ranks shipped in the npm package tiktoken
# (MIT). Fetched once into the build folder (not git); without npm, prompt sizes fall back to chars/4.
tiktoken_version=1.0.22
ranks_sha256=49a4e05dea02c8fafbd50cc4725c4aab8f39386c0afedef118e0dfebc2fe523a
ranks=build/third_party/tiktoken/cl100k_base.json
if [ ! -f "$ranks" ]; then
  if command -v npm >/dev/null 2>&1; then
    tmp=$(mktemp -d)
    if (cd "$tmp" && npm pack --silent "tiktoken@$tiktoken_version" >/dev/null) &&
       tar -xzf "$tmp/tiktoken-$tiktoken_version.tgz" -C "$tmp" package/encoders/cl100k_base.json &&
       echo "$ranks_sha256  $tmp/package/encoders/cl100k_base.json" | sha256sum -c --quiet -; then
      mkdir -p "$(dirname "$ranks")" && mv "$tmp/package/encoders/cl100k_base.json" "$ranks"
      echo "setup: cl100k_base ranks from tiktoken@$tiktoken_version in $ranks"
    else
      echo "setup: could not fetch tiktoken@$tiktoken_version; prompt sizes will be chars/4 estimates" >&2
    fi
    rm -rf "$tmp"
  else
    echo "setup: npm not found; prompt sizes will be chars/4 estimates (see docs/prompts.md)" >&2
  fi
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo ${PTXBENCH_CMAKE_ARGS:-}
# The product first (everything under src/: ptxbench and, with CUDA, the harness and the runner), so
# that it works while the tests build; then the tests, so that scripts/test.sh only runs them.
cmake --build build -j "$(nproc)" --target src/all
echo "setup: built build/bin/ptxbench; now the tests"
cmake --build build -j "$(nproc)"
echo "setup: built the tests (scripts/test.sh runs them)"
