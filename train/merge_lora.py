"""Merges a LoRA adapter from train/sft_lora.py into its base model and saves a plain checkpoint,
for servers that cannot apply this adapter at request time (upstream served merged weights too).

    python3 -m train.merge_lora --model /models/Qwen3.6-27B --adapter runs/sft-s5/adapter --out /models/qwen36-sft-s5

The merged folder holds the model (the text model; a Qwen3.6 vision tower is not carried over) and
the base model's tokenizer with its chat template. Refuses an OUT that exists and is not empty.
Exit status: 0 done; 2 bad arguments; 3 missing libraries or a failure while merging.
"""

from __future__ import annotations

import argparse
import os
import sys

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from train import sft_lora  # noqa: E402


def merge(model_folder, adapter_folder, out, dtype_name, transformers, peft, torch):
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[dtype_name]
    base = transformers.AutoModelForCausalLM.from_pretrained(model_folder, **{sft_lora.dtype_keyword(transformers): dtype})
    merged = peft.PeftModel.from_pretrained(base, adapter_folder).merge_and_unload()
    merged.save_pretrained(out)
    transformers.AutoTokenizer.from_pretrained(model_folder).save_pretrained(out)
    return merged


def main(argv=None):
    p = argparse.ArgumentParser(prog="merge_lora", description="Merge a LoRA adapter into its base model.")
    p.add_argument("--model", required=True, help="the base model folder the adapter was trained on")
    p.add_argument("--adapter", required=True, help="the adapter folder (OUT/adapter of sft_lora)")
    p.add_argument("--out", required=True, help="output folder (must not exist or be empty)")
    p.add_argument("--dtype", choices=["bf16", "fp16", "fp32"], default="bf16")
    args = p.parse_args(argv)
    try:
        sft_lora.check_output_folder(args.out)
        for folder, wanted in ((args.model, "config.json"), (args.adapter, "adapter_config.json")):
            if not os.path.isfile(os.path.join(folder, wanted)):
                raise sft_lora.UsageError(f"{folder}: no {wanted}")
        torch, transformers, peft = sft_lora.import_libraries()
    except sft_lora.UsageError as e:
        print(f"merge_lora: {e}", file=sys.stderr)
        return 2
    except sft_lora.TrainError as e:
        print(f"merge_lora: {e}", file=sys.stderr)
        return 3
    try:
        merge(args.model, args.adapter, args.out, args.dtype, transformers, peft, torch)
    except Exception as e:  # a library error: one line
        print(f"merge_lora: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", file=sys.stderr)
        return 3
    print(f"merged model written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
