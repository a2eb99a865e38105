# Locate nvcc the way a user expects: an explicit CMAKE_CUDA_COMPILER, then PATH, then $CUDA_HOME,
# then /usr/local/cuda. With nvcc found we enable the CUDA language (for the GPU harness and runner)
# and record the toolkit root; without it the CPU-only parts still build and the GPU parts are skipped.
set(PTXBENCH_HAVE_CUDA OFF)
if(NOT CMAKE_CUDA_COMPILER)
  find_program(PTXBENCH_NVCC nvcc
    HINTS ENV CUDA_HOME
    PATH_SUFFIXES bin
    PATHS /usr/local/cuda/bin)
  if(PTXBENCH_NVCC)
    set(CMAKE_CUDA_COMPILER ${PTXBENCH_NVCC})
  endif()
endif()

if(CMAKE_CUDA_COMPILER)
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 20)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  # The harness kernels (input generation, comparison, L2 flush) are generic: native code for Hopper
  # and Blackwell plus PTX so a newer GPU can JIT them.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "52")
    set(CMAKE_CUDA_ARCHITECTURES "90-real;100-real;90-virtual")
  endif()
  find_package(CUDAToolkit REQUIRED)
  set(PTXBENCH_HAVE_CUDA ON)
  get_filename_component(PTXBENCH_CUDA_ROOT "${CUDAToolkit_BIN_DIR}/.." ABSOLUTE)
  message(STATUS "ptxbench: CUDA toolkit at ${PTXBENCH_CUDA_ROOT} (nvcc ${CMAKE_CUDA_COMPILER_VERSION})")
else()
  message(STATUS "ptxbench: nvcc not found; building the CPU-only parts")
endif()
