"""Tests of the LoRA SFT recipe on a tiny random model of the student's architecture, with a real
Hugging Face tokenizer, transformers and PEFT. They need torch, transformers, peft and tokenizers
(the GPU host has them) and skip, saying so, where those are missing. No network:

    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 python3 -m unittest discover -s train/tests -t . -v

PTXBENCH_TINY_ARCH picks the tiny architecture (auto, qwen3_5, qwen3, llama; default auto =
qwen3_5 where transformers has it). Runs on the GPU when one is visible, else on the CPU.
"""

import importlib.util
import json
import os
import shutil
import tempfile
import unittest

from train import data, merge_lora, sft_lora, tiny_model

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "fixit_tiny.jsonl")
LIBRARIES = ("torch", "transformers", "peft", "tokenizers")
MISSING = [name for name in LIBRARIES if importlib.util.find_spec(name) is None]
ARCH = os.environ.get("PTXBENCH_TINY_ARCH", "auto")
EOT = tiny_model.EOT_TOKEN
QWEN_LIKE_TEMPLATE = tiny_model.CHAT_TEMPLATE.replace("'<|im_start|>assistant\\n'", "'<|im_start|>assistant\\n<think>\\n'")
COUNTING_TEMPLATE = "{{ messages|length }}" + tiny_model.CHAT_TEMPLATE


def decode(tokenizer, ids):
    return tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)


@unittest.skipIf(MISSING, f"needs {', '.join(LIBRARIES)} (missing: {', '.join(MISSING)}); the GPU host has them")
class TinyModelSFT(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import torch
        import transformers

        cls.torch, cls.transformers = torch, transformers
        cls.tmp = tempfile.mkdtemp(prefix="sft_test_")
        cls.rows = data.load_rows(FIXTURE)
        cls.model_dir = os.path.join(cls.tmp, "tiny")
        texts = [m["content"] for row in cls.rows for m in row.messages]
        cls.info = tiny_model.build(ARCH, cls.model_dir, texts, seed=0)
        print(f"\ntiny model: {json.dumps(cls.info)}")
        cls.tokenizer = transformers.AutoTokenizer.from_pretrained(cls.model_dir)
        cls.device = "cuda" if torch.cuda.is_available() else "cpu"

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def tokenizer_with(self, template):
        tokenizer = self.transformers.AutoTokenizer.from_pretrained(self.model_dir)
        tokenizer.chat_template = template
        return tokenizer

    def args(self, *extra):
        out = tempfile.mkdtemp(prefix="sft_run_", dir=self.tmp)
        os.rmdir(out)
        return sft_lora.parse_args(["--data", FIXTURE, "--model", self.model_dir, "--out", out, *extra])

    # ---- tokenizer and mask ---------------------------------------------------------------
    def test_the_tiny_tokenizer_round_trips_text(self):
        for row in self.rows:
            for message in row.messages:
                ids = self.tokenizer.encode(message["content"], add_special_tokens=False)
                self.assertEqual(decode(self.tokenizer, ids), message["content"])

    def test_exactly_the_last_assistant_message_carries_labels(self):
        for row in self.rows:
            with self.subTest(row=row.id):
                example, _ = data.tokenize_row(self.tokenizer, row, EOT, 10 ** 6)
                labelled = [t for t in example.labels if t != data.IGNORE_INDEX]
                self.assertEqual(decode(self.tokenizer, labelled), row.messages[-1]["content"] + EOT)
                self.assertEqual(labelled, example.input_ids[example.prompt_tokens:])
                self.assertTrue(all(t == data.IGNORE_INDEX for t in example.labels[:example.prompt_tokens]))
                prompt = self.tokenizer.apply_chat_template(row.messages[:-1], tokenize=False,
                                                            add_generation_prompt=True)
                self.assertEqual(decode(self.tokenizer, example.input_ids[:example.prompt_tokens]), prompt)

    def test_a_generation_prompt_that_opens_think_stays_unlabelled(self):
        self.assertNotEqual(QWEN_LIKE_TEMPLATE, tiny_model.CHAT_TEMPLATE)
        tokenizer = self.tokenizer_with(QWEN_LIKE_TEMPLATE)
        row = self.rows[0]
        example, _ = data.tokenize_row(tokenizer, row, EOT, 10 ** 6)
        labelled = decode(tokenizer, [t for t in example.labels if t != data.IGNORE_INDEX])
        self.assertEqual(labelled, row.messages[-1]["content"][len("<think>\n"):] + EOT)

    def test_a_template_that_renders_the_prompt_differently_fails_loudly(self):
        with self.assertRaisesRegex(data.MaskError, "differently"):
            data.tokenize_row(self.tokenizer_with(COUNTING_TEMPLATE), self.rows[0], EOT, 10 ** 6)

    def test_rows_over_the_limit_are_dropped_and_counted(self):
        lengths = {row.id: data.tokenize_row(self.tokenizer, row, EOT, 10 ** 6)[1] for row in self.rows}
        limit = sorted(lengths.values())[len(lengths) // 2]
        result = data.tokenize_rows(self.tokenizer, self.rows, EOT, limit)
        over = {i for i, n in lengths.items() if n > limit}
        self.assertTrue(over)
        self.assertEqual({i for i, _ in result.dropped_over_limit}, over)
        for example in result.examples:
            self.assertEqual(example.rendered_tokens, lengths[example.id])  # whole, never truncated
            self.assertLessEqual(example.rendered_tokens, limit)

    # ---- training ---------------------------------------------------------------------------
    def test_loss_falls_over_20_steps_and_the_adapter_reloads_with_the_same_logits(self):
        import peft
        torch = self.torch
        args = self.args("--steps", "20", "--learning-rate", "5e-3")
        examples = data.tokenize_rows(self.tokenizer, self.rows, EOT, args.max_tokens).examples
        torch.manual_seed(0)
        model = sft_lora.load_model(self.model_dir, torch.float32, self.device, args, self.transformers)
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        targets, _ = sft_lora.choose_targets(model, args.target_modules, torch)
        model = sft_lora.add_lora(model, args, targets, peft)
        sft_lora.check_loss_path(model, examples[0], torch)

        before = sft_lora.dataset_loss(model, examples, args.lm_head_chunk, torch)
        records = sft_lora.train(model, examples, args, torch, log=print)
        after = sft_lora.dataset_loss(model, examples, args.lm_head_chunk, torch)
        print(f"dataset loss before {before:.4f} after {after:.4f}; per step "
              + " ".join(f"{r['loss']:.3f}" for r in records))
        self.assertEqual(len(records), 20)
        self.assertLess(after, before * 0.95)
        self.assertLess(sum(r["loss"] for r in records[-5:]), sum(r["loss"] for r in records[:5]))
        self.assertAlmostEqual(records[0]["lr"], 5e-3)
        self.assertAlmostEqual(records[-1]["lr"], 5e-3 / 20)

        ids = torch.tensor([examples[0].input_ids[:256]], device=self.device)
        model.eval()
        with torch.no_grad():
            trained = model(input_ids=ids).logits.float()
        adapter = os.path.join(self.tmp, "adapter_reload")
        model.save_pretrained(adapter)
        with open(os.path.join(adapter, "adapter_config.json")) as f:
            config = json.load(f)
        self.assertEqual(config["r"], 32)
        self.assertEqual(sorted(config["target_modules"]), sorted(targets))

        base = sft_lora.load_model(self.model_dir, torch.float32, self.device, args, self.transformers)
        base.eval()
        with torch.no_grad():
            untouched = base(input_ids=ids).logits.float()
        reloaded = peft.PeftModel.from_pretrained(base, adapter)
        reloaded.eval()
        with torch.no_grad():
            again = reloaded(input_ids=ids).logits.float()
        diff = (again - trained).abs().max().item()
        moved = (untouched - trained).abs().max().item()
        print(f"reloaded vs trained max |Δlogit| {diff:.2e}; base vs trained {moved:.2e}")
        self.assertLessEqual(diff, 1e-4)
        self.assertGreater(moved, 1e-2)  # the adapter changed the model, so equality means something

        merged_dir = os.path.join(self.tmp, "merged")
        self.assertEqual(merge_lora.main(["--model", self.model_dir, "--adapter", adapter, "--out", merged_dir,
                                          "--dtype", "fp32"]), 0)
        merged = sft_lora.load_model(merged_dir, torch.float32, self.device, args, self.transformers)
        merged.eval()
        with torch.no_grad():
            merged_logits = merged(input_ids=ids).logits.float()
        merged_diff = (merged_logits - trained).abs().max().item()
        print(f"merged vs trained max |Δlogit| {merged_diff:.2e}")
        self.assertLessEqual(merged_diff, 1e-3)

    # ---- the command line -------------------------------------------------------------------
    def test_command_line_run_writes_adapter_and_manifest(self):
        out = os.path.join(self.tmp, "cli_run")
        code = sft_lora.main(["--data", FIXTURE, "--model", f"tiny:{ARCH}", "--out", out, "--steps", "4",
                              "--eval-loss"])
        self.assertEqual(code, 0)
        with open(os.path.join(out, sft_lora.MANIFEST_NAME)) as f:
            manifest = json.load(f)
        self.assertEqual(manifest["status"], "completed")
        self.assertEqual([s["step"] for s in manifest["steps"]], [1, 2, 3, 4])
        hp = manifest["hyperparameters"]
        expected = {"lora_rank": 32, "lora_alpha": 32.0, "batch_size": 2, "epochs": 5, "learning_rate": 4.65e-4,
                    "adam_beta1": 0.9, "adam_beta2": 0.95, "adam_eps": 1e-8, "max_tokens": 65536, "seed": 0,
                    "steps": 4}
        self.assertEqual({k: hp[k] for k in expected}, expected)
        self.assertEqual(manifest["data"]["rows_read"], 8)
        self.assertEqual(manifest["data"]["rows_kept"], 8)
        self.assertEqual(manifest["data"]["sha256"], data.file_sha256(FIXTURE))
        self.assertIn("adapter_model.safetensors", manifest["adapter"]["files"])
        self.assertIsNotNone(manifest["environment"]["peft"])
        self.assertIn("dataset_loss_after", manifest)

    def test_command_line_drops_rows_over_max_tokens(self):
        lengths = sorted(data.tokenize_row(self.tokenizer, row, EOT, 10 ** 6)[1] for row in self.rows)
        limit = lengths[-3]  # the two longest rows go (lengths are distinct enough in the fixture)
        expected = sum(n > limit for n in lengths)
        out = os.path.join(self.tmp, "cli_limit")
        code = sft_lora.main(["--data", FIXTURE, "--model", self.model_dir, "--out", out, "--steps", "1",
                              "--max-tokens", str(limit)])
        self.assertEqual(code, 0)
        with open(os.path.join(out, sft_lora.MANIFEST_NAME)) as f:
            manifest = json.load(f)
        self.assertEqual(manifest["data"]["rows_dropped_over_max_tokens"], expected)
        self.assertEqual(manifest["data"]["rows_kept"], 8 - expected)

    def test_command_line_refuses_a_used_folder_and_bad_data_writing_nothing(self):
        used = os.path.join(self.tmp, "used")
        os.makedirs(used)
        open(os.path.join(used, "keep"), "w").close()
        self.assertEqual(sft_lora.main(["--data", FIXTURE, "--model", self.model_dir, "--out", used]), 2)
        bad = os.path.join(self.tmp, "bad.jsonl")
        with open(bad, "w") as f:
            f.write('{"id": "x", "messages": [], "metadata": {}}\n')
        fresh = os.path.join(self.tmp, "never_written")
        self.assertEqual(sft_lora.main(["--data", bad, "--model", self.model_dir, "--out", fresh]), 2)
        self.assertFalse(os.path.exists(fresh))
        self.assertEqual(sft_lora.main(["--data", FIXTURE, "--model", "/nonexistent", "--out", fresh]), 2)
        self.assertEqual(sft_lora.main(["--data", FIXTURE, "--model", "tiny:gpt9", "--out", fresh]), 2)
        self.assertFalse(os.path.exists(fresh))


if __name__ == "__main__":
    unittest.main()
