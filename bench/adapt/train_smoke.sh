#!/usr/bin/env bash
# The LoRA SFT recipe (train/) on a GPU host, offline: the train/ tests on a tiny randomly
# initialised model of the student's architecture (Qwen3.5 where the installed transformers has it),
# then a 20-step run of train/sft_lora.py on the fixture, its loss curve and the checks.
# Needs python3 with torch, transformers, peft and tokenizers; no build, no network. About a minute.
#
#   bench/adapt/train_smoke.sh          (repository root; any Hopper GPU, its target from its name)
#
# Writes bench/results/<target>/train_smoke/ ({env,tests,run}.txt, manifest.json (the run's manifest),
# summary.txt (loss curve and checks)), prints the summary, and with $OUT set puts
# $OUT/train_smoke.tar.gz of that folder.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TARBALL_DIR=${OUT:-}
source "$ROOT/bench/lib/env.sh"
PTXBENCH_TARGET=$(bench_gpu_target) || exit 2  # the GPU's own target (bench/lib/gpu_target.sh)
GPU_NAME=$(bench_gpu_model)
RES=$ROOT/bench/results/$PTXBENCH_TARGET/train_smoke
rm -rf "$RES" && mkdir -p "$RES"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORK=$(mktemp -d /tmp/train_smoke.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$ROOT" || exit 2

python3 - > "$RES/env.txt" 2>&1 <<'PY'
import importlib, platform, subprocess
print("date:", subprocess.run(["date", "-u"], capture_output=True, text=True).stdout.strip())
print("commit:", subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip() or "unknown")
print("python:", platform.python_version())
for name in ("torch", "transformers", "peft", "tokenizers", "safetensors", "accelerate"):
    try:
        print(f"{name}:", importlib.import_module(name).__version__)
    except ImportError:
        print(f"{name}: missing")
try:
    import torch, transformers
    print("cuda:", torch.version.cuda, "| gpu:", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none")
    print("Qwen3.5 in transformers:", hasattr(transformers, "Qwen3_5ForCausalLM"))
except Exception as e:
    print("torch check failed:", e)
PY
cat "$RES/env.txt"

echo "== train/ tests"
timeout 150 python3 -m unittest discover -s train/tests -t . -v > "$RES/tests.txt" 2>&1
tests_rc=$?
tail -5 "$RES/tests.txt"

echo "== 20-step run"
timeout 90 python3 -m train.sft_lora --data train/tests/fixtures/fixit_tiny.jsonl --model "tiny:${PTXBENCH_TINY_ARCH:-auto}" \
  --out "$WORK/run" --steps 20 --learning-rate 5e-3 --seed 0 --eval-loss > "$RES/run.txt" 2>&1
run_rc=$?
tail -3 "$RES/run.txt"
[ -f "$WORK/run/run_manifest.json" ] && cp "$WORK/run/run_manifest.json" "$RES/manifest.json"
[ -f "$WORK/run/error.txt" ] && cp "$WORK/run/error.txt" "$RES/error.txt"

TESTS_RC=$tests_rc RUN_RC=$run_rc MANIFEST="$RES/manifest.json" TESTS="$RES/tests.txt" \
python3 - > "$RES/summary.txt" 2>&1 <<'PY'
import json, os, re
tests = open(os.environ["TESTS"], encoding="utf-8", errors="replace").read()
ran = re.search(r"Ran (\d+) tests?", tests)
verdict = re.findall(r"^(OK.*|FAILED.*)$", tests, re.M)
print(f"tests: exit {os.environ['TESTS_RC']}, ran {ran.group(1) if ran else '?'}, {verdict[-1] if verdict else 'no verdict (timeout?)'}")
# The tests of exported rows skip here by design: they need `ptxbench sft export` output, and
# bench/adapt/fixit_gpu.sh runs them on the rows it exports. Any other skip is a failure.
skips = re.findall(r"\.\.\. skipped '(.*)'$", tests, re.M)
export_only = [s for s in skips if "PTXBENCH_SFT_EXPORT" in s or "PTXBENCH_SFT_DATA" in s]
other = len(skips) - len(export_only)
print(f"check no test skipped: {'FAILED (' + str(other) + ' skipped: ' + '; '.join(sorted(set(s for s in skips if s not in export_only))) + ')' if other else 'ok'}"
      f"{f' ({len(export_only)} tests of exported rows skipped: bench/adapt/fixit_gpu.sh runs them on its export)' if export_only else ''}")
print(f"run: exit {os.environ['RUN_RC']}")
try:
    m = json.load(open(os.environ["MANIFEST"]))
except (OSError, ValueError) as e:
    print(f"no manifest: {e}")
    raise SystemExit(0)
tiny = (m.get("model") or {}).get("tiny") or {}
print(f"model: {m['model'].get('class')} (arch {tiny.get('arch')}, {m['model'].get('parameters')} parameters, "
      f"{m['model'].get('trainable_parameters')} trainable){' - ' + tiny['note'] if tiny.get('note') else ''}")
hp = m.get("hyperparameters", {})
print(f"lora rank {hp.get('lora_rank')} alpha {hp.get('lora_alpha')} on {hp.get('target_modules')}; "
      f"untargeted linear: {hp.get('untargeted_linear_modules')}")
print(f"data: {m['data']['rows_read']} rows, {m['data']['rows_kept']} kept, {m['data']['rows_dropped_over_max_tokens']} dropped; "
      f"rendered tokens {m['data']['rendered_tokens']}")
print("step  loss      lr        grad_norm")
for s in m.get("steps", []):
    print(f"{s['step']:>4}  {s['loss']:.4f}  {s['lr']:.2e}  {s['grad_norm']:.3f}")
before, after = m.get("dataset_loss_before"), m.get("dataset_loss_after")
if before and after:
    print(f"dataset loss before {before:.4f} after {after:.4f} ({100 * (1 - after / before):.1f}% lower)")
steps = m.get("steps", [])
checks = {
    "status completed": m.get("status") == "completed",
    "20 steps": len(steps) == 20,
    "losses finite": all(s["loss"] == s["loss"] and abs(s["loss"]) < 1e9 for s in steps),
    "dataset loss fell": bool(before and after and after < before),
    "adapter saved": "adapter_model.safetensors" in (m.get("adapter") or {}).get("files", {}),
}
for name, ok in checks.items():
    print(f"check {name}: {'ok' if ok else 'FAILED'}")
PY
echo "gpu: $GPU_NAME (target $PTXBENCH_TARGET)" >> "$RES/summary.txt"
cat "$RES/summary.txt"
if [ -n "$TARBALL_DIR" ]; then
  mkdir -p "$TARBALL_DIR" && tar -czf "$TARBALL_DIR/train_smoke.tar.gz" -C "$(dirname "$RES")" "$(basename "$RES")"
fi
[ "$tests_rc" -eq 0 ] && [ "$run_rc" -eq 0 ]
