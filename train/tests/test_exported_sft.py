"""The LoRA recipe on rows `ptxbench sft export` wrote from a real Fixit run (issue 14's GPU check; run
it on the rows bench/adapt/fixit_gpu.sh exports, bench/results/<target>/fixit/train_rows.jsonl). Skips, saying so, unless PTXBENCH_SFT_DATA names the exported JSONL
and torch, transformers, peft and tokenizers are installed. No network: the model is a tiny
randomly initialised one of the student's architecture built from a config, its tokenizer trained
on the exported texts.

    PTXBENCH_SFT_DATA=SFT/sft.jsonl python3 -m unittest -v train.tests.test_exported_sft

Checks: every row loads as exported; with the real Hugging Face tokenizer exactly the last assistant
message (and its end-of-turn token) carries labels; 20 steps make the dataset loss fall; the adapter
saves and reloads with the same logits.
"""

import importlib.util
import os
import shutil
import tempfile
import unittest

from train import data, sft_lora, tiny_model

EXPORT = os.environ.get("PTXBENCH_SFT_DATA")
LIBRARIES = ("torch", "transformers", "peft", "tokenizers")
MISSING = [name for name in LIBRARIES if importlib.util.find_spec(name) is None]
ARCH = os.environ.get("PTXBENCH_TINY_ARCH", "auto")
EOT = tiny_model.EOT_TOKEN


@unittest.skipUnless(EXPORT, "PTXBENCH_SFT_DATA is not set (point it at an exported sft.jsonl)")
@unittest.skipIf(MISSING, f"needs {', '.join(LIBRARIES)} (missing: {', '.join(MISSING)}); the GPU host has them")
class ExportedFixitRows(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import torch
        import transformers

        cls.torch, cls.transformers = torch, transformers
        cls.tmp = tempfile.mkdtemp(prefix="sft_export_test_")
        cls.rows = data.load_rows(EXPORT)
        cls.model_dir = os.path.join(cls.tmp, "tiny")
        texts = [m["content"] for row in cls.rows for m in row.messages]
        cls.info = tiny_model.build(ARCH, cls.model_dir, texts, seed=0)
        print(f"\n{len(cls.rows)} exported rows ({', '.join(sorted({r.kind for r in cls.rows}))}); tiny model: {cls.info}")
        cls.tokenizer = transformers.AutoTokenizer.from_pretrained(cls.model_dir)
        cls.device = "cuda" if torch.cuda.is_available() else "cpu"

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_rows_are_sft_rows_and_only_the_last_assistant_message_carries_labels(self):
        self.assertTrue(self.rows)
        self.assertIn("fixit", {row.kind for row in self.rows})
        for row in self.rows:
            with self.subTest(row=row.id):
                # A recipe's training set is its Fixit rows plus S0's KernelGen rows where it names S0.
                self.assertIn(row.kind, ("fixit", "kernelgen"))
                example, rendered = data.tokenize_row(self.tokenizer, row, EOT, 10 ** 7)
                labelled = [t for t in example.labels if t != data.IGNORE_INDEX]
                text = self.tokenizer.decode(labelled, skip_special_tokens=False, clean_up_tokenization_spaces=False)
                self.assertEqual(text, row.messages[-1]["content"] + EOT)
                prompt = self.tokenizer.apply_chat_template(row.messages[:-1], tokenize=False, add_generation_prompt=True)
                self.assertEqual(example.input_ids[:example.prompt_tokens],
                                 self.tokenizer.encode(prompt, add_special_tokens=False))
                print(f"{row.id}: {rendered} tokens, {example.labelled_tokens} labelled")

    def test_20_steps_lower_the_loss_and_the_adapter_reloads(self):
        import peft
        torch = self.torch
        out = os.path.join(self.tmp, "run")
        args = sft_lora.parse_args(["--data", EXPORT, "--model", self.model_dir, "--out", out, "--steps", "20",
                                    "--learning-rate", "5e-3", "--max-tokens", str(10 ** 7)])
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
        self.assertLess(after, before)

        ids = torch.tensor([examples[0].input_ids[:256]], device=self.device)
        model.eval()
        with torch.no_grad():
            trained = model(input_ids=ids).logits.float()
        adapter = os.path.join(self.tmp, "adapter")
        model.save_pretrained(adapter)
        base = sft_lora.load_model(self.model_dir, torch.float32, self.device, args, self.transformers)
        reloaded = peft.PeftModel.from_pretrained(base, adapter)
        reloaded.eval()
        with torch.no_grad():
            again = reloaded(input_ids=ids).logits.float()
        diff = (again - trained).abs().max().item()
        print(f"reloaded vs trained max |dlogit| {diff:.2e}")
        self.assertLessEqual(diff, 1e-4)


if __name__ == "__main__":
    unittest.main()
