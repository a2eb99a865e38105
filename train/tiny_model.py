"""A tiny, randomly initialised model of the student's architecture, with a tiny tokenizer, built
from a config on the spot: nothing is downloaded, so the recipe can be tested offline.

The student upstream trains is Qwen3.6-27B (upstream-ptxbench.md §9), whose checkpoint uses the
Qwen3.5 architecture (`model_type` qwen3_5; text model `Qwen3_5ForCausalLM`): 64 decoder layers in
a repeating pattern of three Gated DeltaNet (linear attention) layers and one gated full-attention
layer, partial rotary embeddings (a quarter of each head) with interleaved M-RoPE sections. The
tiny model keeps that pattern and those mechanisms and shrinks every width:

    arch qwen3_5  4 layers (3 linear + 1 full), hidden 64   -- the student's architecture
    arch qwen3    2 layers, hidden 64                       -- fallback when transformers lacks Qwen3.5
    arch llama    2 layers, hidden 64                       -- a third, plain decoder for comparison
    arch auto     qwen3_5 when this transformers has it, else qwen3 (the choice is recorded)

The tokenizer is byte-level BPE trained on the given texts (the SFT fixture) with ChatML special
tokens; `<think>` and `</think>` are added tokens. Its chat template is plain ChatML (contents
verbatim) or, with `--chat-template qwen3`, Qwen3's reasoning handling (written here, not copied):
an assistant message before the last user message keeps only what follows its last `</think>`,
one after it that holds a `</think>` is written `<think>\n{reasoning}\n</think>\n\n{answer}`, the
generation prompt is `<|im_start|>assistant\n` (with `enable_thinking=False` an empty think block
follows). That is exactly what `ptxbench sft export --chat-template qwen3` measures and normalises
with (src/prompts/chat_template.h); Qwen3's own template also writes an empty think block into a
last assistant message that has none, which SFT rows never are.

    python3 -m train.tiny_model --arch qwen3 --chat-template qwen3 --out /tmp/tiny --corpus rows.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import sys

ARCHS = ("auto", "qwen3_5", "qwen3", "llama")
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
ADDED_TOKENS = ["<think>", "</think>"]
EOT_TOKEN = "<|im_end|>"
PAD_TOKEN = "<|endoftext|>"
# ChatML, contents verbatim (no reasoning reformatting), generation prompt "<|im_start|>assistant\n".
CHAT_TEMPLATE = ("{% for message in messages %}"
                 "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
                 "{% endfor %}"
                 "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
# Qwen3's reasoning handling for conversations without tools (see the module docstring).
QWEN3_CHAT_TEMPLATE = (
    "{%- set ns = namespace(last_user=-1) -%}"
    "{%- for message in messages -%}{%- if message['role'] == 'user' -%}{%- set ns.last_user = loop.index0 -%}"
    "{%- endif -%}{%- endfor -%}"
    "{%- for message in messages -%}"
    "{%- set content = message['content'] if message['content'] is string else '' -%}"
    "{%- if message['role'] == 'assistant' and '</think>' in content -%}"
    "{%- set parts = content.split('</think>') -%}"
    "{%- set answer = parts[-1].lstrip('\\n') -%}"
    "{%- set reasoning = (parts[:-1] | join('</think>')).rstrip('\\n').split('<think>')[-1].strip('\\n') -%}"
    "{%- if loop.index0 > ns.last_user -%}"
    "{%- set content = '<think>\\n' + reasoning + '\\n</think>\\n\\n' + answer -%}"
    "{%- else -%}{%- set content = answer -%}{%- endif -%}"
    "{%- endif -%}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + content + '<|im_end|>' + '\\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}"
    "{%- if enable_thinking is defined and enable_thinking is false -%}{{- '<think>\\n\\n</think>\\n\\n' -}}{%- endif -%}"
    "{%- endif -%}")
CHAT_TEMPLATES = {"chatml": CHAT_TEMPLATE, "qwen3": QWEN3_CHAT_TEMPLATE}
VOCAB_SIZE = 1024
# Positions the model is built for: the recipe's 65,536-token rows, and a served prompt beside them.
MAX_POSITIONS = 131072
# Real checkpoints initialise with std 0.02. At width 64 that leaves the output layer a logit range
# of about ±1.3 after the final norm, so no adapter can move the loss far from log(vocab) and a
# 20-step smoke run could not show learning; 0.1 gives it room (a simulation here: ~4% vs ~17%).
INITIALIZER_RANGE = 0.1
# Always in the tokenizer's training text, so every byte class the fixtures use is seen.
BASE_CORPUS = ("__global__ void kernel(const float* x, float* y, int n) { int i = blockIdx.x * blockDim.x + "
               "threadIdx.x; if (i < n) y[i] = 2.0f * x[i]; }\n```cpp\n#include <ptxbench/abi.h>\n```\n"
               "The compiler reports an error; the fix is minimal.\n0123456789 ()[]{}<>;:,.!?=+-*/%&|^~'\"#\n")


class TinyModelError(Exception):
    """The tiny model or tokenizer cannot be built with the installed libraries (one line)."""


def corpus_from_jsonl(path):
    texts = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                for message in json.loads(line).get("messages", []):
                    texts.append(str(message.get("content", "")))
    return texts


def build_tokenizer(out_dir, texts, chat_template="chatml", vocab_size=VOCAB_SIZE):
    """Trains a byte-level BPE on texts and saves a Hugging Face tokenizer with a chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    try:
        from transformers import PreTrainedTokenizerFast
    except ImportError:  # transformers releases that renamed the class
        from transformers import TokenizersBackend as PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2, show_progress=False,
                                  special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([BASE_CORPUS] + list(texts), trainer=trainer)
    tok.add_tokens(ADDED_TOKENS)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=EOT_TOKEN, pad_token=PAD_TOKEN,
                                   clean_up_tokenization_spaces=False)
    fast.chat_template = CHAT_TEMPLATES[chat_template]
    fast.save_pretrained(out_dir)
    return fast


def resolve_arch(arch):
    """Returns (arch actually built, a note when it is a fallback)."""
    if arch != "auto":
        return arch, None
    import transformers
    if hasattr(transformers, "Qwen3_5ForCausalLM") and hasattr(transformers, "Qwen3_5TextConfig"):
        return "qwen3_5", None
    return "qwen3", (f"transformers {transformers.__version__} has no Qwen3.5 (Qwen3_5ForCausalLM); "
                     "built the dense Qwen3 architecture instead")


# As many key/value heads as query heads: grouped-query attention in fp32 (the tiny model's dtype)
# has no fused SDPA kernel on CUDA (flash needs 16-bit, memory-efficient has no GQA), so PyTorch
# falls back to the math kernel, which holds the full L x L scores: a 37k-token exported row asked
# for 35 GiB on an H100. The head count is a size choice; the layer pattern stays the student's.
TINY_HEADS = 4


def qwen3_5_config(vocab_size, eos_id, pad_id):
    import transformers
    common = dict(vocab_size=vocab_size, hidden_size=64, intermediate_size=128, num_hidden_layers=4,
                  num_attention_heads=TINY_HEADS, num_key_value_heads=TINY_HEADS, head_dim=32,
                  linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=16,
                  linear_value_head_dim=16, linear_conv_kernel_dim=4,
                  layer_types=["linear_attention", "linear_attention", "linear_attention", "full_attention"],
                  max_position_embeddings=MAX_POSITIONS, tie_word_embeddings=False,
                  initializer_range=INITIALIZER_RANGE,
                  eos_token_id=eos_id, pad_token_id=pad_id, bos_token_id=None)
    # Rotary dims = head_dim * 0.25 = 8, i.e. 4 frequencies, split over the M-RoPE sections.
    rope = {"rope_type": "default", "rope_theta": 10000000.0, "partial_rotary_factor": 0.25,
            "mrope_section": [2, 1, 1], "mrope_interleaved": True}
    try:
        return transformers.Qwen3_5TextConfig(rope_parameters=rope, **common)
    except (TypeError, ValueError) as first:
        # Releases before rope_parameters took the same values as separate fields.
        try:
            return transformers.Qwen3_5TextConfig(
                rope_theta=rope["rope_theta"], partial_rotary_factor=0.25,
                rope_scaling={"rope_type": "default", "mrope_section": [2, 1, 1], "mrope_interleaved": True},
                **common)
        except (TypeError, ValueError) as second:
            raise TinyModelError(f"cannot make a Qwen3_5TextConfig: {first}; {second}") from None


def build_model(arch, vocab_size, eos_id, pad_id):
    import transformers
    if arch == "qwen3_5":
        return transformers.Qwen3_5ForCausalLM(qwen3_5_config(vocab_size, eos_id, pad_id))
    shape = dict(vocab_size=vocab_size, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                 num_attention_heads=TINY_HEADS, num_key_value_heads=TINY_HEADS, head_dim=16,
                 max_position_embeddings=MAX_POSITIONS,
                 tie_word_embeddings=False, initializer_range=INITIALIZER_RANGE,
                 eos_token_id=eos_id, pad_token_id=pad_id, bos_token_id=None)
    if arch == "qwen3":
        return transformers.Qwen3ForCausalLM(transformers.Qwen3Config(**shape))
    if arch == "llama":
        return transformers.LlamaForCausalLM(transformers.LlamaConfig(**shape))
    raise TinyModelError(f"unknown architecture {arch!r} (expected one of {', '.join(ARCHS)})")


def build(arch, out_dir, texts, seed=0, chat_template="chatml", vocab_size=VOCAB_SIZE):
    """Builds and saves tokenizer + model into out_dir (loadable with from_pretrained).
    Returns a description for the run manifest."""
    if chat_template not in CHAT_TEMPLATES:
        raise TinyModelError(f"unknown chat template {chat_template!r} (expected {', '.join(CHAT_TEMPLATES)})")
    import torch

    requested = arch
    arch, note = resolve_arch(arch)
    os.makedirs(out_dir, exist_ok=True)
    if not 300 <= vocab_size <= 262144:
        raise TinyModelError(f"vocabulary size {vocab_size}: expected 300 to 262144")
    tokenizer = build_tokenizer(out_dir, texts, chat_template, vocab_size)
    torch.manual_seed(seed)
    vocab_size = len(tokenizer)
    model = build_model(arch, vocab_size, tokenizer.convert_tokens_to_ids(EOT_TOKEN),
                        tokenizer.convert_tokens_to_ids(PAD_TOKEN))
    model.save_pretrained(out_dir)
    info = {"requested_arch": requested, "arch": arch, "model_class": type(model).__name__,
            "model_type": model.config.model_type, "vocab_size": vocab_size, "seed": seed,
            "parameters": sum(p.numel() for p in model.parameters()), "chat_template": chat_template,
            "max_position_embeddings": MAX_POSITIONS,
            "layer_types": list(getattr(model.config, "layer_types", None) or [])}
    if note:
        info["note"] = note
    with open(os.path.join(out_dir, "tiny_model.json"), "w", encoding="utf-8") as f:
        json.dump(info, f, indent=2)
    return info


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arch", choices=ARCHS, default="auto")
    parser.add_argument("--out", required=True, help="folder for config, weights and tokenizer")
    parser.add_argument("--corpus", help="an SFT JSONL whose message texts train the tokenizer")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--chat-template", choices=sorted(CHAT_TEMPLATES), default="chatml")
    parser.add_argument("--vocab-size", type=int, default=VOCAB_SIZE,
                        help="BPE vocabulary: larger packs the long knowledge-pack prompts into fewer tokens")
    args = parser.parse_args(argv)
    try:
        import tokenizers, torch, transformers  # noqa: F401
    except ImportError as e:
        print(f"tiny_model: needs torch, transformers and tokenizers (missing: {e.name}); "
              "run it where they are installed (the GPU host)", file=sys.stderr)
        return 3
    try:
        texts = corpus_from_jsonl(args.corpus) if args.corpus else []
        info = build(args.arch, args.out, texts, args.seed, args.chat_template, args.vocab_size)
    except (OSError, ValueError, TinyModelError) as e:
        print(f"tiny_model: {str(e).splitlines()[0]}", file=sys.stderr)
        return 2
    print(json.dumps(info, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
