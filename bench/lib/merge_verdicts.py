#!/usr/bin/env python3
"""Concatenates `ptxbench eval --out` verdict files (a list, or one verdict) into one list, for the
scripts that evaluate per task and compare the whole (service/scaling.sh's solo pass, speed.sh's
P3-verdicts, triton/triton_gpu.sh's direct run). A file that is missing or unreadable is named and
skipped: the comparison that reads the result then finds its verdicts missing.

  merge_verdicts.py OUT.json IN.json...     prints "<n> verdicts from <m> files"
"""
import json
import sys


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    merged, read = [], 0
    for path in argv[1:]:
        try:
            with open(path) as f:
                d = json.load(f)
        except (OSError, ValueError) as e:
            print(f"merge_verdicts: {path}: no verdicts ({e.__class__.__name__})", file=sys.stderr)
            continue
        read += 1
        merged += d if isinstance(d, list) else [d]
    with open(argv[0], "w") as f:
        json.dump(merged, f, indent=1)
    print(f"{len(merged)} verdicts from {read} files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
