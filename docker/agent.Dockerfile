# The base image of exported Harbor tasks (docs/coding-agents.md): the agent's container. It holds
# ptxbench (built without CUDA: no nvcc, no GPU; `ptxbench eval/check --remote` send kernels to a
# PTXBench service, which builds and runs them) with suite/, packs/ and include/ under /opt/ptxbench,
# and python3 for the exported verifier (tests/test.sh). Build it from the repository root, tagged
# with the version the export names (`ptxbench --version`):
#   docker build -f docker/agent.Dockerfile -t ptxbench-agent:0.1.0 .
FROM debian:12 AS build
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential cmake ninja-build pkg-config git \
       nlohmann-json3-dev libcli11-dev libfmt-dev libspdlog-dev libcurl4-openssl-dev libssl-dev libpcre2-dev \
       libcpp-httplib-dev libseccomp-dev libgtest-dev libgmock-dev libsqlite3-dev libpq-dev \
    && rm -rf /var/lib/apt/lists/*
COPY . /src
RUN cmake -S /src -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release \
    && cmake --build /build --target ptxbench \
    && strip /build/bin/ptxbench

FROM debian:12-slim
ARG DEBIAN_FRONTEND=noninteractive
# ptxbench's shared libraries (the rest is header-only or static), python3 for the verifier, and
# what Harbor's installed agents expect of a shell environment.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libcurl4 libssl3 libpcre2-8-0 libsqlite3-0 libpq5 \
       libcpp-httplib0.11 python3 ca-certificates curl git procps \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/bin/ptxbench /usr/local/bin/ptxbench
COPY suite /opt/ptxbench/suite
COPY packs /opt/ptxbench/packs
COPY include /opt/ptxbench/include
ENV PTXBENCH_ROOT=/opt/ptxbench
RUN ptxbench --version && ptxbench tasks > /dev/null
WORKDIR /workspace
CMD ["sleep", "infinity"]
