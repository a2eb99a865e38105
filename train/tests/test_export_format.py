"""train/'s reader on a file `ptxbench sft export` wrote (issue 14: the recipe reads the export as is).

The C++ pipeline test (tests/adapt/fixit_pipeline_test.cc) runs the real exporter and then this test
with PTXBENCH_SFT_EXPORT set to the file it wrote (and PTXBENCH_SFT_EXPORT_ROWS to the rows it
expects); without the variable the test skips, saying so.

    PTXBENCH_SFT_EXPORT=OUT/sft.jsonl python3 -m unittest train.tests.test_export_format
"""

import json
import os
import unittest

from train import data
from train.tests.test_data import FakeTokenizer

EXPORT = os.environ.get("PTXBENCH_SFT_EXPORT")


@unittest.skipUnless(EXPORT, "PTXBENCH_SFT_EXPORT is not set (the C++ pipeline test sets it)")
class ExportedRows(unittest.TestCase):
    def test_every_exported_row_loads_and_only_its_last_message_is_labelled(self):
        rows = data.load_rows(EXPORT)
        expected = os.environ.get("PTXBENCH_SFT_EXPORT_ROWS")
        if expected:
            self.assertEqual(len(rows), int(expected))
        with open(EXPORT, encoding="utf-8") as f:
            raw = [json.loads(line) for line in f if line.strip()]
        tok = FakeTokenizer()
        for row, original in zip(rows, raw):
            with self.subTest(row=row.id):
                self.assertEqual(row.id, original["id"])
                self.assertEqual(row.kind, original["metadata"]["format"])
                # the reader keeps every message's text exactly as exported
                self.assertEqual([m["content"] for m in row.messages], [m["content"] for m in original["messages"]])
                example, _ = data.tokenize_row(tok, row, "<|im_end|>", 10 ** 7)
                labelled = [t for t in example.labels if t != data.IGNORE_INDEX]
                self.assertEqual(tok.decode(labelled), row.messages[-1]["content"] + "<|im_end|>")
                prompt = tok.apply_chat_template(row.messages[:-1], add_generation_prompt=True)
                self.assertEqual(tok.decode(example.input_ids[:example.prompt_tokens]), prompt)


if __name__ == "__main__":
    unittest.main()
