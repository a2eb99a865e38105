#!/usr/bin/env python3
"""Prints the library folders of PyTorch's NVIDIA wheels (site-packages/nvidia/*/lib), cuDNN's first,
joined with ':' for LD_LIBRARY_PATH, so a native binary loads the same libcudnn (and the NVRTC and
cuBLAS its engines load at run time) as PyTorch does. Prints nothing when there are none."""
import importlib.util
import os

spec = importlib.util.find_spec("nvidia")
roots = list(spec.submodule_search_locations) if spec and spec.submodule_search_locations else []
dirs = []
for root in roots:
    for name in sorted(os.listdir(root)):
        lib = os.path.join(root, name, "lib")
        if os.path.isdir(lib):
            dirs.append(lib)
dirs.sort(key=lambda d: 0 if os.sep + "cudnn" + os.sep in d else 1)
print(":".join(dirs))
