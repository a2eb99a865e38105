"""Reading `ptxbench eval --out` files in the bench helpers: one verdict or a list, plain or gzipped
(committed results are gzipped past 40 kB, so a path names FILE or FILE.gz alike). Imported by
lib/merge_verdicts.py, eval/summarize_input_sets_ab.py and eval/verdicts_unchanged.py."""
import gzip
import json
import os


def read_verdict_list(path):
    """The verdicts in PATH (or PATH.gz when PATH is absent) as a list; OSError when neither exists or
    cannot be read, ValueError when it is not JSON."""
    for p in (path,) if path.endswith(".gz") else (path, path + ".gz"):
        if os.path.exists(p):
            with (gzip.open(p, "rt") if p.endswith(".gz") else open(p)) as f:
                doc = json.load(f)
            return doc if isinstance(doc, list) else [doc]
    raise OSError(f"no {os.path.basename(path)}" + ("" if path.endswith(".gz") else "[.gz]"))
