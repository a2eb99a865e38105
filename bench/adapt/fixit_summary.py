#!/usr/bin/env python3
"""One-line summaries for bench/adapt/fixit_gpu.sh (standard library only).

    fixit_summary.py labels RUN_DIR          the turn labels of each trajectory
    fixit_summary.py recipe REPORT           a recipe's counts beside the paper's
    fixit_summary.py why REPORT              why they differ
    fixit_summary.py train MANIFEST          the training run: settings, step losses, dataset loss
    fixit_summary.py loss_fell MANIFEST      exit 0 when the dataset loss fell, 1 otherwise
    fixit_summary.py tiny TINY_MODEL_JSON    the tiny model's class, size, vocabulary, template
"""

import glob
import json
import sys


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def labels(run_dir):
    out = []
    for path in sorted(glob.glob(run_dir + "/trajectories/*.json")):
        msgs = load(path)["messages"]
        out.append(str([m["extra"]["ptxbench"]["label"] for m in msgs[3::2] if "ptxbench" in m.get("extra", {})]))
    return " ".join(out) or "(no trajectory)"


def recipe(report):
    r = load(report)
    cells = [f"{s['stage']} {s['ours']} (paper {s['paper'] if s['paper'] is not None else '-'})" for s in r["comparison"]]
    return ", ".join(cells)


def why(report):
    return "; ".join(load(report)["why_different"]) or "(every known count matches)"


def train(manifest):
    m = load(manifest)
    hp, data = m["hyperparameters"], m["data"]
    losses = " ".join(f"{s['loss']:.4f}" for s in m["steps"])
    return (f"{m['model']['class']}, {len(m['steps'])} steps, LoRA rank {hp['lora_rank']}, {hp['epochs']} epochs, "
            f"batch {hp['batch_size']}, lr {hp['learning_rate']}, max {hp['max_tokens']} tokens; rows {data['rows_kept']} "
            f"of {data['rows_read']} (rendered tokens {data['rendered_tokens']}, labelled {data['labelled_tokens']}); "
            f"step losses {losses}; dataset loss before {m.get('dataset_loss_before')} after {m.get('dataset_loss_after')}")


def loss_fell(manifest):
    m = load(manifest)
    before, after = m.get("dataset_loss_before"), m.get("dataset_loss_after")
    return before is not None and after is not None and after < before


def tiny(info):
    t = load(info)
    return f"{t['model_class']} ({t['parameters']} parameters, vocabulary {t['vocab_size']}, chat template {t['chat_template']})"


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    kind, path = argv[1], argv[2]
    try:
        if kind == "loss_fell":
            return 0 if loss_fell(path) else 1
        print({"labels": labels, "recipe": recipe, "why": why, "train": train, "tiny": tiny}[kind](path))
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"(unavailable: {type(e).__name__}: {e})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
