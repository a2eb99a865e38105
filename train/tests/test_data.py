"""Tests of train/data.py with a stand-in tokenizer: standard library only, so they run in CI.

    python3 -m unittest discover -s train/tests -t .

The stand-in renders ChatML like Qwen's template and tokenizes one character per token, special
tokens whole; test_sft.py repeats the mask checks with a real Hugging Face tokenizer on the GPU host.
"""

import json
import os
import tempfile
import unittest

from train import data

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "fixit_tiny.jsonl")


class FakeTokenizer:
    """ChatML with one token per character and whole special tokens."""

    SPECIALS = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>"]

    def __init__(self, generation_prompt="<|im_start|>assistant\n", count_messages=False):
        self.generation_prompt = generation_prompt
        self.count_messages = count_messages  # a template whose output depends on the message count
        self.eos_token = "<|im_end|>"

    def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=False):
        assert tokenize is False
        text = f"[{len(messages)}]" if self.count_messages else ""
        for m in messages:
            text += f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n"
        return text + (self.generation_prompt if add_generation_prompt else "")

    def encode(self, text, add_special_tokens=False):
        ids, i = [], 0
        while i < len(text):
            for n, special in enumerate(self.SPECIALS):
                if text.startswith(special, i):
                    ids.append(n)
                    i += len(special)
                    break
            else:
                ids.append(1000 + ord(text[i]))
                i += 1
        return ids

    def decode(self, ids):
        return "".join(self.SPECIALS[i] if i < 1000 else chr(i - 1000) for i in ids)

    def convert_tokens_to_ids(self, token):
        return self.SPECIALS.index(token) if token in self.SPECIALS else None


def write_rows(rows):
    handle, path = tempfile.mkstemp(suffix=".jsonl")
    with os.fdopen(handle, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(row if isinstance(row, str) else json.dumps(row))
            f.write("\n")
    return path


def fixture_rows():
    with open(FIXTURE, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


class Loading(unittest.TestCase):
    def test_fixture_loads_with_both_kinds(self):
        rows = data.load_rows(FIXTURE)
        self.assertEqual(len(rows), 8)
        self.assertEqual({r.kind for r in rows}, {"fixit", "kernelgen"})
        for row in rows:
            expected = data.FIXIT_ROLES if row.kind == "fixit" else data.KERNELGEN_ROLES
            self.assertEqual([m["role"] for m in row.messages], expected)

    def assert_rejected(self, row, *words):
        path = write_rows([fixture_rows()[0], row])
        self.addCleanup(os.remove, path)
        with self.assertRaises(data.DataError) as caught:
            data.load_rows(path)
        message = str(caught.exception)
        self.assertNotIn("\n", message)
        self.assertIn(f"{path}:2:", message)
        for word in words:
            self.assertIn(word, message)

    def test_bad_rows_give_one_line_naming_file_line_and_row(self):
        good = fixture_rows()[1]
        self.assert_rejected("{not json", "invalid JSON")
        self.assert_rejected("[1, 2]", "expected a JSON object")
        self.assert_rejected({**good, "extra": 1}, "unknown field 'extra'")
        self.assert_rejected({k: v for k, v in good.items() if k != "metadata"}, "missing field 'metadata'")
        self.assert_rejected({**good, "id": ""}, "`id`")
        self.assert_rejected({**good, "id": fixture_rows()[0]["id"]}, "duplicate id")
        self.assert_rejected({**good, "messages": good["messages"][:4]}, "neither Fixit", good["id"])
        self.assert_rejected({**good, "messages": good["messages"][:2] + [{"role": "tool", "content": "x"}]}, "role")
        no_fence = [dict(m) for m in good["messages"]]
        no_fence[-1]["content"] = "<think>\nreasons\n</think>\n\nno kernel here"
        self.assert_rejected({**good, "messages": no_fence}, "code fence")
        open_think = [dict(m) for m in good["messages"]]
        open_think[-1]["content"] = "<think>\nnever closed\n```cpp\nx\n```"
        self.assert_rejected({**good, "messages": open_think}, "<think>")
        masks = [dict(m, step_loss_mask=1) for m in good["messages"]]
        self.assert_rejected({**good, "messages": masks}, "step_loss_mask")

    def test_upstream_step_loss_mask_is_accepted_when_only_the_last_is_1(self):
        good = fixture_rows()[1]
        messages = [dict(m, step_loss_mask=0) for m in good["messages"]]
        messages[-1]["step_loss_mask"] = 1
        path = write_rows([{**good, "messages": messages}])
        self.addCleanup(os.remove, path)
        self.assertEqual(len(data.load_rows(path)), 1)

    def test_missing_and_empty_files(self):
        with self.assertRaises(data.DataError):
            data.load_rows("/nonexistent/rows.jsonl")
        path = write_rows([])
        self.addCleanup(os.remove, path)
        with self.assertRaisesRegex(data.DataError, "no rows"):
            data.load_rows(path)


class Masking(unittest.TestCase):
    def setUp(self):
        self.rows = data.load_rows(FIXTURE)

    def test_exactly_the_last_assistant_message_is_labelled(self):
        tok = FakeTokenizer()
        for row in self.rows:
            with self.subTest(row=row.id):
                example, _ = data.tokenize_row(tok, row, "<|im_end|>", 10 ** 6)
                labelled = [t for t in example.labels if t != data.IGNORE_INDEX]
                self.assertEqual(tok.decode(labelled), row.messages[-1]["content"] + "<|im_end|>")
                # everything before is the prompt exactly as a server would send it
                prompt = tok.apply_chat_template(row.messages[:-1], add_generation_prompt=True)
                self.assertEqual(tok.decode(example.input_ids[:example.prompt_tokens]), prompt)
                self.assertTrue(all(t == data.IGNORE_INDEX for t in example.labels[:example.prompt_tokens]))
                self.assertEqual(example.labelled_tokens, len(labelled))
                self.assertEqual(len(example.input_ids), len(example.labels))
                # the template's newline after <|im_end|> is neither input nor label
                self.assertEqual(example.rendered_tokens, len(example.input_ids) + 1)

    def test_a_generation_prompt_that_opens_think_is_not_labelled(self):
        tok = FakeTokenizer(generation_prompt="<|im_start|>assistant\n<think>\n")
        row = self.rows[0]
        example, _ = data.tokenize_row(tok, row, "<|im_end|>", 10 ** 6)
        labelled = tok.decode([t for t in example.labels if t != data.IGNORE_INDEX])
        self.assertEqual(labelled, row.messages[-1]["content"][len("<think>\n"):] + "<|im_end|>")

    def test_a_template_that_renders_the_prompt_differently_is_an_error(self):
        with self.assertRaisesRegex(data.MaskError, "renders the prompt differently"):
            data.tokenize_row(FakeTokenizer(count_messages=True), self.rows[0], "<|im_end|>", 10 ** 6)

    def test_end_of_turn_token_inside_a_message_is_an_error(self):
        row = self.rows[0]
        row.messages[1]["content"] += " <|im_end|>"
        with self.assertRaisesRegex(data.MaskError, "end-of-turn"):
            data.tokenize_row(FakeTokenizer(), row, "<|im_end|>", 10 ** 6)

    def test_unknown_end_of_turn_token_is_an_error(self):
        with self.assertRaisesRegex(data.MaskError, "not in the tokenizer"):
            data.tokenize_row(FakeTokenizer(), self.rows[0], "<eot>", 10 ** 6)

    def test_rows_over_the_limit_are_dropped_whole_and_counted(self):
        tok = FakeTokenizer()
        lengths = {row.id: data.tokenize_row(tok, row, "<|im_end|>", 10 ** 6)[1] for row in self.rows}
        limit = sorted(lengths.values())[len(lengths) // 2]
        result = data.tokenize_rows(tok, self.rows, "<|im_end|>", limit)
        over = {i for i, n in lengths.items() if n > limit}
        self.assertTrue(over and len(over) < len(self.rows))
        self.assertEqual({i for i, _ in result.dropped_over_limit}, over)
        self.assertEqual({e.id for e in result.examples}, set(lengths) - over)
        for example in result.examples:  # kept rows are whole, never cut to fit
            self.assertLessEqual(example.rendered_tokens, limit)
            self.assertEqual(example.rendered_tokens, lengths[example.id])
        self.assertEqual(data.length_stats([3, 1, 2])["median"], 2)


if __name__ == "__main__":
    unittest.main()
