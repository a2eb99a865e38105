"""LoRA SFT on the exported Fixit / KernelGen JSONL with transformers + PEFT: upstream's recipe
(upstream-ptxbench.md §9) on one machine, offline.

    python3 -m train.sft_lora --data fixit.jsonl --model /models/Qwen3.6-27B --out runs/sft-s5
    python3 -m train.sft_lora --data train/tests/fixtures/fixit_tiny.jsonl --model tiny:auto \
        --out /tmp/sft-smoke --steps 20 --learning-rate 5e-3 --eval-loss

Defaults are upstream's: LoRA rank 32 on every linear layer of the decoder, 5 epochs, batch size 2,
learning rate 4.65e-4 decaying linearly to 0 with no warm-up, Adam (β1 0.9, β2 0.95, ε 1e-8, no
weight decay), loss only on the last assistant message, rows over 65,536 tokens dropped (never
truncated), shuffle seed 0. docs/training.md lists where this differs from upstream and why.

Writes OUT/adapter/ (a PEFT adapter: adapter_config.json + adapter_model.safetensors) and
OUT/run_manifest.json (every hyperparameter, the data's sha256 and counts, library versions, the
seed, and the loss of every step). Refuses an OUT that exists and is not empty.

Exit status: 0 done; 2 bad arguments or data (one line says which row and why); 3 the run could
not be done (missing libraries, no GPU where one was asked for, a non-finite loss, out of memory).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import itertools
import json
import math
import os
import platform
import random
import sys
import time
import traceback

if __package__ in (None, ""):  # run as a file: python3 train/sft_lora.py
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from train import data as sft_data  # noqa: E402
from train import tiny_model  # noqa: E402

# Every linear projection of a Qwen3.5 decoder layer: full attention (q/k/v/o), Gated DeltaNet
# (in_proj_qkv/z/b/a, out_proj) and the MLP; Llama/Qwen3 layers use the first and last groups.
DEFAULT_TARGET_MODULES = ["q_proj", "k_proj", "v_proj", "o_proj",
                          "in_proj_qkv", "in_proj_z", "in_proj_b", "in_proj_a", "out_proj",
                          "gate_proj", "up_proj", "down_proj"]
MANIFEST_NAME = "run_manifest.json"
ADAPTER_DIR = "adapter"
MASK_POLICY = ("labels on the last assistant message only: its content tokens and its end-of-turn token; "
               "not its role header (part of the generation prompt) and not what the template adds after "
               "the end-of-turn token; found by rendering the conversation without that message with "
               "add_generation_prompt=True and checking it is a text and token prefix of the full rendering")
LOSS_POLICY = ("per step: the sum of token cross-entropies over the labelled tokens of the batch's rows, "
               "divided by the number of labelled tokens in the batch; logits are computed only at "
               "labelled positions, in chunks, in fp32")


class TrainError(Exception):
    """The run cannot go on (one line)."""


class UsageError(Exception):
    """Bad arguments (one line)."""


def parse_args(argv):
    p = argparse.ArgumentParser(prog="sft_lora", description="LoRA SFT on exported Fixit/KernelGen JSONL.",
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--data", required=True, help="the SFT JSONL from `ptxbench sft export`")
    p.add_argument("--model", required=True,
                   help="a local model folder (config.json + weights), or tiny:ARCH for a tiny random "
                        f"model built from a config ({', '.join(tiny_model.ARCHS)})")
    p.add_argument("--out", required=True, help="output folder (must not exist or be empty)")
    p.add_argument("--tokenizer", help="tokenizer folder (default: the model folder)")
    p.add_argument("--max-tokens", type=int, default=65536, help="drop rows whose rendering is longer")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--steps", type=int, help="run exactly this many optimizer steps (smoke runs); "
                                             "the linear schedule then decays over these steps")
    p.add_argument("--batch-size", type=int, default=2)
    p.add_argument("--learning-rate", type=float, default=4.65e-4)
    p.add_argument("--adam-beta1", type=float, default=0.9)
    p.add_argument("--adam-beta2", type=float, default=0.95)
    p.add_argument("--adam-eps", type=float, default=1e-8)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--lora-rank", type=int, default=32)
    p.add_argument("--lora-alpha", type=float, default=32.0)
    p.add_argument("--lora-dropout", type=float, default=0.0)
    p.add_argument("--target-modules", default=",".join(DEFAULT_TARGET_MODULES),
                   help="comma-separated linear module names; those the model lacks are skipped")
    p.add_argument("--seed", type=int, default=0, help="shuffle, LoRA initialisation and tiny-model seed")
    p.add_argument("--eot-token", help="the chat template's end-of-turn token (default: the tokenizer's eos_token)")
    p.add_argument("--chat-template", help="a Jinja chat template file to use instead of the tokenizer's")
    p.add_argument("--device", default="auto", help="auto, cuda, cuda:N or cpu")
    p.add_argument("--device-map", help="passed to from_pretrained (e.g. auto) to spread a large model over GPUs")
    p.add_argument("--dtype", choices=["auto", "bf16", "fp16", "fp32"], default="auto",
                   help="auto: bf16 on a GPU that has it, fp32 for tiny models and on CPU")
    p.add_argument("--attn-implementation", help="e.g. sdpa, eager, flash_attention_2 (default: the library's)")
    p.add_argument("--no-gradient-checkpointing", dest="gradient_checkpointing", action="store_false")
    p.add_argument("--lm-head-chunk", type=int, default=4096, help="labelled positions per output-layer chunk")
    p.add_argument("--eval-loss", action="store_true",
                   help="also record the mean loss over the whole dataset before and after training")
    args = p.parse_args(argv)
    for name in ("max_tokens", "epochs", "batch_size", "lora_rank", "lm_head_chunk"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name.replace('_', '-')} must be at least 1")
    if args.steps is not None and args.steps < 1:
        raise UsageError("--steps must be at least 1")
    if not args.learning_rate > 0 or not 0 <= args.adam_beta1 < 1 or not 0 <= args.adam_beta2 < 1 or not args.adam_eps > 0:
        raise UsageError("learning rate and eps must be > 0, betas in [0, 1)")
    if not 0 <= args.lora_dropout < 1:
        raise UsageError("--lora-dropout must be in [0, 1)")
    args.target_modules = [m.strip() for m in args.target_modules.split(",") if m.strip()]
    if not args.target_modules:
        raise UsageError("--target-modules is empty")
    return args


def import_libraries():
    """Returns (torch, transformers, peft) or raises TrainError naming what is missing."""
    missing = []
    modules = {}
    for name in ("torch", "transformers", "peft"):
        try:
            modules[name] = __import__(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise TrainError(f"needs torch, transformers and peft (missing: {', '.join(missing)}); "
                         "run it where they are installed, e.g. the GPU host")
    return modules["torch"], modules["transformers"], modules["peft"]


# ---- model --------------------------------------------------------------------------------

def dtype_keyword(transformers):
    """from_pretrained's dtype argument: `dtype` since transformers 4.56, `torch_dtype` before."""
    try:
        major, minor = (int(x) for x in transformers.__version__.split(".")[:2])
    except ValueError:
        return "dtype"
    return "dtype" if (major, minor) >= (4, 56) else "torch_dtype"


def resolve_device(requested, torch):
    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested.startswith("cuda") and not torch.cuda.is_available():
        raise TrainError(f"--device {requested}: no CUDA device is visible")
    return requested


def resolve_dtype(requested, device, tiny, torch):
    if requested == "auto":
        if tiny or not device.startswith("cuda"):
            return torch.float32
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float32
    return {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[requested]


def load_model(path, dtype, device, args, transformers):
    kwargs = {dtype_keyword(transformers): dtype}
    if args.device_map:
        kwargs["device_map"] = args.device_map
    if args.attn_implementation:
        kwargs["attn_implementation"] = args.attn_implementation
    # Qwen3.6 checkpoints are Qwen3_5ForConditionalGeneration; AutoModelForCausalLM maps them to
    # the text model (Qwen3_5ForCausalLM) and leaves the vision tower out.
    model = transformers.AutoModelForCausalLM.from_pretrained(path, **kwargs)
    if not args.device_map:
        model.to(device)
    model.config.use_cache = False
    return model


def linear_module_names(model, torch):
    """(names of the decoder's linear layers, name of the output layer or None)."""
    head = model.get_output_embeddings()
    names, head_name = set(), None
    for name, module in model.named_modules():
        if isinstance(module, torch.nn.Linear):
            if module is head:
                head_name = name.rsplit(".", 1)[-1]
            else:
                names.add(name.rsplit(".", 1)[-1])
    return names, head_name


def choose_targets(model, requested, torch):
    """The requested names the model has. The output layer is a target only when named (as
    Tinker's train_unembed would): adapter servers often cannot apply LoRA to it."""
    present, head_name = linear_module_names(model, torch)
    allowed = present | ({head_name} if head_name else set())
    chosen = [m for m in requested if m in allowed]
    if not chosen:
        raise TrainError(f"none of the target modules {requested} is a linear layer of this model "
                         f"(it has: {', '.join(sorted(allowed))})")
    return chosen, sorted(present - set(chosen))


def add_lora(model, args, targets, peft):
    config = peft.LoraConfig(r=args.lora_rank, lora_alpha=args.lora_alpha, lora_dropout=args.lora_dropout,
                             target_modules=targets, bias="none", task_type="CAUSAL_LM")
    return peft.get_peft_model(model, config)


def model_parts(model):
    """(decoder, output layer) of a causal LM, LoRA-wrapped or not."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    decoder = base.get_decoder() if hasattr(base, "get_decoder") else None
    if decoder is None:
        decoder = getattr(base, "model", None)
    head = base.get_output_embeddings()
    if decoder is None or head is None:
        raise TrainError(f"cannot find the decoder and the output layer of {type(base).__name__}")
    return decoder, head


def input_device(model):
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    return base.get_input_embeddings().weight.device


# ---- loss ---------------------------------------------------------------------------------

def _chunk_cross_entropy(head, states, targets):
    import torch.nn.functional as F
    return F.cross_entropy(head(states).float(), targets, reduction="sum")


def labelled_loss_sum(model, example, chunk, torch):
    """Sum of cross-entropies over the example's labelled tokens. The decoder runs once over the
    whole sequence; the output layer runs only at the positions that predict a labelled token, in
    chunks that are recomputed in the backward pass, so a 65k-token row never holds full logits."""
    from torch.utils.checkpoint import checkpoint

    decoder, head = model_parts(model)
    ids = torch.tensor([example.input_ids], device=input_device(model))
    hidden = decoder(input_ids=ids, use_cache=False).last_hidden_state[0]
    labels = torch.tensor(example.labels, device=hidden.device)
    positions = torch.nonzero(labels != sft_data.IGNORE_INDEX).squeeze(1)
    targets = labels.index_select(0, positions)
    states = hidden.index_select(0, positions - 1)  # the state at t predicts token t + 1
    total = torch.zeros((), device=hidden.device, dtype=torch.float32)
    for start in range(0, states.shape[0], chunk):
        part, want = states[start:start + chunk], targets[start:start + chunk]
        if torch.is_grad_enabled():
            total = total + checkpoint(_chunk_cross_entropy, head, part, want, use_reentrant=False)
        else:
            total = total + _chunk_cross_entropy(head, part, want)
    return total


def check_loss_path(model, example, torch):
    """The loss uses decoder + output layer; that must equal the model's own logits (true for
    Qwen and Llama; a model that post-processes logits would be trained on the wrong thing)."""
    decoder, head = model_parts(model)
    ids = torch.tensor([example.input_ids[:64]], device=input_device(model))
    was_training = model.training
    model.eval()
    with torch.no_grad():
        full = model(input_ids=ids, use_cache=False).logits[0].float()
        mine = head(decoder(input_ids=ids, use_cache=False).last_hidden_state[0]).float().to(full.device)
    model.train(was_training)
    worst = (full - mine).abs().max().item()
    if not worst <= 1e-3 * max(1.0, full.abs().max().item()):
        raise TrainError(f"the model's logits differ from output_layer(decoder(x)) by {worst:g}: "
                         "this architecture post-processes logits and the loss here does not apply")


def dataset_loss(model, examples, chunk, torch):
    """Mean loss per labelled token over examples, without gradients."""
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for example in examples:
            total += labelled_loss_sum(model, example, chunk, torch).item()
            count += example.labelled_tokens
    model.train(was_training)
    return total / count


# ---- training loop ------------------------------------------------------------------------

def planned_steps(n_examples, batch_size, epochs, steps):
    per_epoch = n_examples // batch_size
    return steps if steps is not None else epochs * per_epoch


def batches(n_examples, batch_size, seed):
    """Endless (epoch, indices) batches: each epoch a fresh seeded shuffle, the remainder that does
    not fill a batch left out (as upstream's trainer does)."""
    per_epoch = n_examples // batch_size
    for epoch in itertools.count():
        order = list(range(n_examples))
        random.Random(seed * 1_000_003 + epoch).shuffle(order)
        for b in range(per_epoch):
            yield epoch, order[b * batch_size:(b + 1) * batch_size]


def train(model, examples, hp, torch, log=print, records=None):
    """Runs the optimizer steps; returns one record per step (appended to `records` as they
    finish, so a caller keeps the steps done before a failure)."""
    if len(examples) < hp.batch_size:
        raise TrainError(f"{len(examples)} rows left after filtering; a batch needs {hp.batch_size}")
    total_steps = planned_steps(len(examples), hp.batch_size, hp.epochs, hp.steps)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=hp.learning_rate, betas=(hp.adam_beta1, hp.adam_beta2),
                                 eps=hp.adam_eps, weight_decay=hp.weight_decay)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: max(0.0, 1.0 - s / total_steps))
    model.train()
    records = [] if records is None else records
    for step, (epoch, indices) in enumerate(itertools.islice(batches(len(examples), hp.batch_size, hp.seed),
                                                             total_steps)):
        started = time.monotonic()
        lr = schedule.get_last_lr()[0]
        optimizer.zero_grad(set_to_none=True)
        batch = [examples[i] for i in indices]
        labelled = sum(e.labelled_tokens for e in batch)
        loss_value = 0.0
        for example in batch:
            loss = labelled_loss_sum(model, example, hp.lm_head_chunk, torch) / labelled
            loss.backward()
            loss_value += loss.item()
        if not math.isfinite(loss_value):
            raise TrainError(f"the loss is {loss_value} at step {step + 1}")
        grad_norm = float(torch.nn.utils.clip_grad_norm_(params, float("inf")))  # measured, not clipped
        optimizer.step()
        schedule.step()
        record = {"step": step + 1, "epoch": epoch + 1, "loss": round(loss_value, 6), "lr": lr,
                  "grad_norm": round(grad_norm, 6), "rows": [e.id for e in batch],
                  "tokens": sum(len(e.input_ids) for e in batch), "labelled_tokens": labelled,
                  "seconds": round(time.monotonic() - started, 3)}
        records.append(record)
        log(f"step {record['step']:>5}/{total_steps}  epoch {record['epoch']}  loss {loss_value:.4f}  "
            f"lr {lr:.3e}  grad_norm {grad_norm:.3f}  tokens {record['tokens']}  {record['seconds']:.2f}s")
    return records


# ---- outputs ------------------------------------------------------------------------------

def write_json_atomic(path, value):
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=2)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def file_hashes(folder):
    return {name: sft_data.file_sha256(os.path.join(folder, name))
            for name in sorted(os.listdir(folder)) if os.path.isfile(os.path.join(folder, name))}


def library_versions():
    versions = {"python": platform.python_version()}
    for name in ("torch", "transformers", "peft", "tokenizers", "safetensors", "accelerate"):
        try:
            versions[name] = __import__(name).__version__
        except ImportError:
            versions[name] = None
    return versions


def device_description(device, torch):
    if device.startswith("cuda") and torch.cuda.is_available():
        index = torch.device(device).index or 0
        return {"device": device, "name": torch.cuda.get_device_name(index), "cuda": torch.version.cuda}
    return {"device": device, "name": platform.processor() or "cpu", "cuda": None}


def check_output_folder(out):
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise UsageError(f"--out {out} exists and is not an empty folder; choose a new one")


def check_model_source(args):
    """Checks --model and --tokenizer before anything is written; returns the tiny arch or None."""
    if args.model.startswith("tiny:"):
        arch = args.model.split(":", 1)[1] or "auto"
        if arch not in tiny_model.ARCHS:
            raise UsageError(f"--model tiny:{arch}: unknown architecture (expected {', '.join(tiny_model.ARCHS)})")
    else:
        arch = None
        if not os.path.isfile(os.path.join(args.model, "config.json")):
            raise UsageError(f"--model {args.model}: not a local model folder with config.json "
                             "(nothing is downloaded; or use tiny:ARCH)")
    if args.tokenizer and not os.path.isdir(args.tokenizer):
        raise UsageError(f"--tokenizer {args.tokenizer}: not a folder")
    if args.chat_template and not os.path.isfile(args.chat_template):
        raise UsageError(f"--chat-template {args.chat_template}: not a file")
    return arch


def resolve_model_source(args, tiny_arch, texts, manifest):
    """Returns (model folder, tokenizer folder, tiny?) and records the source in the manifest."""
    if tiny_arch is not None:
        folder = os.path.join(args.out, "tiny_model")
        manifest["model"] = {"source": args.model, "path": folder,
                             "tiny": tiny_model.build(tiny_arch, folder, texts, args.seed)}
        return folder, args.tokenizer or folder, True
    manifest["model"] = {"source": args.model, "path": os.path.abspath(args.model), "tiny": None}
    return args.model, args.tokenizer or args.model, False


def run(args, log=print):
    """The whole recipe; returns the manifest. Raises UsageError / DataError / MaskError / TrainError.
    Bad arguments or data fail before anything is written; a failure after that leaves a manifest
    with status "failed", the error, and the steps done."""
    torch, transformers, peft = import_libraries()
    check_output_folder(args.out)
    tiny_arch = check_model_source(args)
    rows = sft_data.load_rows(args.data)
    os.makedirs(args.out, exist_ok=True)
    manifest = {"tool": "train/sft_lora.py", "format_version": 1, "status": "running",
                "started_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                "command": sys.argv, "seed": args.seed, "steps": []}
    try:
        return run_recipe(args, rows, tiny_arch, manifest, torch, transformers, peft, log)
    except BaseException as e:
        manifest["status"] = "failed"
        manifest["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        manifest["finished_at"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        write_json_atomic(os.path.join(args.out, MANIFEST_NAME), manifest)
        raise


def run_recipe(args, rows, tiny_arch, manifest, torch, transformers, peft, log):
    texts = [m["content"] for row in rows for m in row.messages]
    model_folder, tokenizer_folder, tiny = resolve_model_source(args, tiny_arch, texts, manifest)

    tokenizer = transformers.AutoTokenizer.from_pretrained(tokenizer_folder)
    if args.chat_template:
        with open(args.chat_template, encoding="utf-8") as f:
            tokenizer.chat_template = f.read()
    if not getattr(tokenizer, "chat_template", None):
        raise UsageError(f"tokenizer in {tokenizer_folder} has no chat template")
    eot = args.eot_token or tokenizer.eos_token
    if not eot:
        raise UsageError("the tokenizer has no eos_token; pass --eot-token")
    tokenized = sft_data.tokenize_rows(tokenizer, rows, eot, args.max_tokens)
    examples = tokenized.examples
    manifest["data"] = {
        "path": os.path.abspath(args.data), "sha256": sft_data.file_sha256(args.data),
        "rows_read": len(rows), "rows_kept": len(examples),
        "rows_dropped_over_max_tokens": len(tokenized.dropped_over_limit),
        "dropped": [{"id": i, "rendered_tokens": n} for i, n in tokenized.dropped_over_limit],
        "kinds_kept": {k: sum(e.kind == k for e in examples) for k in ("fixit", "kernelgen")},
        "rendered_tokens": sft_data.length_stats([e.rendered_tokens for e in examples]),
        "labelled_tokens": sft_data.length_stats([e.labelled_tokens for e in examples]),
    }
    manifest["tokenizer"] = {"path": os.path.abspath(tokenizer_folder), "eot_token": eot,
                             "chat_template_file": os.path.abspath(args.chat_template) if args.chat_template else None,
                             "chat_template_sha256": hashlib.sha256(tokenizer.chat_template.encode()).hexdigest()}
    manifest["mask"] = MASK_POLICY
    log(f"data: {len(rows)} rows, {len(examples)} kept, {len(tokenized.dropped_over_limit)} over "
        f"{args.max_tokens} tokens dropped")
    if len(examples) < args.batch_size:
        raise TrainError(f"{len(examples)} rows left after the length filter; a batch needs {args.batch_size}")

    random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = resolve_device(args.device, torch)
    dtype = resolve_dtype(args.dtype, device, tiny, torch)
    model = load_model(model_folder, dtype, device, args, transformers)
    if args.gradient_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    targets, untargeted = choose_targets(model, args.target_modules, torch)
    torch.manual_seed(args.seed)  # the LoRA initialisation
    model = add_lora(model, args, targets, peft)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    manifest["model"].update({"class": type(model.get_base_model()).__name__,
                              "model_type": model.get_base_model().config.model_type,
                              "parameters": sum(p.numel() for p in model.parameters()),
                              "trainable_parameters": trainable, "dtype": str(dtype).replace("torch.", "")})
    total_steps = planned_steps(len(examples), args.batch_size, args.epochs, args.steps)
    manifest["hyperparameters"] = {
        "lora_rank": args.lora_rank, "lora_alpha": args.lora_alpha, "lora_dropout": args.lora_dropout,
        "target_modules": targets, "untargeted_linear_modules": untargeted,
        "epochs": args.epochs, "steps_override": args.steps, "steps": total_steps,
        "batch_size": args.batch_size, "learning_rate": args.learning_rate,
        "lr_schedule": "linear from learning_rate to 0 over the steps, no warm-up",
        "optimizer": "Adam", "adam_beta1": args.adam_beta1, "adam_beta2": args.adam_beta2,
        "adam_eps": args.adam_eps, "weight_decay": args.weight_decay, "grad_clip": None,
        "max_tokens": args.max_tokens, "shuffle": "seeded per epoch; remainder rows of an epoch skipped",
        "seed": args.seed, "gradient_checkpointing": args.gradient_checkpointing,
        "lm_head_chunk": args.lm_head_chunk, "loss": LOSS_POLICY,
    }
    manifest["environment"] = {**library_versions(), **device_description(device, torch)}
    log(f"model: {manifest['model']['class']} ({manifest['model']['parameters']:,} parameters, "
        f"{trainable:,} trainable), {total_steps} steps on {device}")

    check_loss_path(model, examples[0], torch)
    if args.eval_loss:
        manifest["dataset_loss_before"] = dataset_loss(model, examples, args.lm_head_chunk, torch)
    train(model, examples, args, torch, log, records=manifest["steps"])
    if args.eval_loss:
        manifest["dataset_loss_after"] = dataset_loss(model, examples, args.lm_head_chunk, torch)
    adapter = os.path.join(args.out, ADAPTER_DIR)
    model.save_pretrained(adapter)
    manifest["adapter"] = {"path": os.path.abspath(adapter), "files": file_hashes(adapter)}
    manifest["status"] = "completed"
    manifest["finished_at"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    write_json_atomic(os.path.join(args.out, MANIFEST_NAME), manifest)
    return manifest


def main(argv=None, log=print):
    try:
        args = parse_args(argv)
    except UsageError as e:
        print(f"sft_lora: {e}", file=sys.stderr)
        return 2
    try:
        run(args, log)
        return 0
    except (UsageError, sft_data.DataError, sft_data.MaskError) as e:
        print(f"sft_lora: {e}", file=sys.stderr)
        return 2
    except TrainError as e:
        print(f"sft_lora: {e}", file=sys.stderr)
        return 3
    except Exception as e:  # out of memory, a library error: one line here, the trace in OUT/error.txt
        where = os.path.join(args.out, "error.txt")
        try:
            os.makedirs(args.out, exist_ok=True)
            with open(where, "w", encoding="utf-8") as f:
                traceback.print_exc(file=f)
        except OSError:
            where = "(not written)"
        first = str(e).splitlines()[0] if str(e) else ""
        print(f"sft_lora: {type(e).__name__}: {first} (traceback in {where})", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
