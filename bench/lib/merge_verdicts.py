#!/usr/bin/env python3
"""Concatenates `ptxbench eval --out` verdict files (a list, or one verdict) into one list, for the
scripts that evaluate per task and compare the whole (service/scaling.sh's solo pass, speed.sh's
P3-verdicts, triton/triton_gpu.sh's direct run). A file that is missing or unreadable is named and
skipped: the comparison that reads the result then finds its verdicts missing. Gzipped inputs are read
too (lib/verdict_lists.py), so committed rounds can be merged again.

  merge_verdicts.py OUT.json IN.json...     prints "<n> verdicts from <m> files"
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from verdict_lists import read_verdict_list  # noqa: E402


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    merged, read = [], 0
    for path in argv[1:]:
        try:
            merged += read_verdict_list(path)
        except (OSError, ValueError) as e:
            print(f"merge_verdicts: {path}: no verdicts ({e.__class__.__name__})", file=sys.stderr)
            continue
        read += 1
    with open(argv[0], "w") as f:
        json.dump(merged, f, indent=1)
    print(f"{len(merged)} verdicts from {read} files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
