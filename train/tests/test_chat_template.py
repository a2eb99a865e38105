"""The tiny model's Qwen3 chat template (train/tiny_model.py) renders a conversation exactly as
`ptxbench sft export --chat-template qwen3` measures it (src/prompts/chat_template.cc; the same
conversation and expected text as tests/prompts/hf_tokenizer_test.cc), so the exporter's token count
and the trainer's agree. Needs only jinja2 (the template engine transformers uses); skips without it.
"""

import importlib.util
import unittest

from train import tiny_model

HAVE_JINJA = importlib.util.find_spec("jinja2") is not None
CONVERSATION = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"},
                {"role": "assistant", "content": "<think>old</think>\n\nwrong kernel"},
                {"role": "user", "content": "feedback"},
                {"role": "assistant", "content": "<think>\n\nnew reasoning\n</think>\nfixed"}]
EXPECTED = ("<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\nwrong kernel<|im_end|>\n"
            "<|im_start|>user\nfeedback<|im_end|>\n<|im_start|>assistant\n<think>\nnew reasoning\n</think>\n\nfixed<|im_end|>\n")


@unittest.skipUnless(HAVE_JINJA, "needs jinja2 (installed with transformers)")
class Qwen3Template(unittest.TestCase):
    def render(self, messages, **kw):
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
        return env.from_string(tiny_model.QWEN3_CHAT_TEMPLATE).render(messages=messages, **kw)

    def test_renders_as_the_exporter_measures(self):
        self.assertEqual(self.render(CONVERSATION, add_generation_prompt=False), EXPECTED)

    def test_the_prompt_without_the_answer_is_a_prefix(self):
        # train/data.py labels the last assistant message by this prefix property.
        prompt = self.render(CONVERSATION[:-1], add_generation_prompt=True)
        self.assertTrue(EXPECTED.startswith(prompt))
        self.assertTrue(prompt.endswith("<|im_start|>assistant\n"))

    def test_thinking_off_adds_an_empty_block(self):
        self.assertTrue(self.render(CONVERSATION[:2], add_generation_prompt=True, enable_thinking=False)
                        .endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n"))

    def test_an_answer_without_reasoning_stays_as_it_is(self):
        self.assertEqual(self.render([{"role": "user", "content": "U"}, {"role": "assistant", "content": "plain"}]),
                         "<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\nplain<|im_end|>\n")


if __name__ == "__main__":
    unittest.main()
