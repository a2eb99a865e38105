"""train/serve_openai.py: the HTTP side with a scripted engine (standard library only, runs
everywhere), and the real engine on a tiny random Qwen3 model with its Qwen3 chat template (needs
torch, transformers, peft and tokenizers; skips, saying so, without them)."""

import importlib.util
import io
import json
import os
import shutil
import tempfile
import threading
import unittest
import urllib.error
import urllib.request

from train import serve_openai, tiny_model

LIBRARIES = ("torch", "transformers", "peft", "tokenizers")
MISSING = [name for name in LIBRARIES if importlib.util.find_spec(name) is None]


class ScriptedEngine:
    def __init__(self):
        self.calls = []

    def complete(self, messages, settings):
        self.calls.append((messages, settings))
        if messages[-1]["content"] == "fail":
            raise RuntimeError("the model broke\nsecond line")
        return "```cpp\n__global__ void k() {}\n```", "stop", 17, 9


class Server:
    def __init__(self, engine, max_new_tokens=64):
        self.server = serve_openai.start_server(engine, "tiny-sft", port=0, max_new_tokens=max_new_tokens,
                                                log=io.StringIO())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def post(self, body, path="/v1/chat/completions"):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()


class ServeWithAScriptedEngine(unittest.TestCase):
    def setUp(self):
        self.engine = ScriptedEngine()
        self.s = Server(self.engine)

    def tearDown(self):
        self.s.close()

    def test_a_chat_completion_as_openai_writes_it(self):
        status, text = self.s.post({"model": "tiny-sft", "messages": [{"role": "system", "content": "S"},
                                                                      {"role": "user", "content": "U"}],
                                    "max_tokens": 1000, "temperature": 1.0, "top_p": 0.95, "seed": 7})
        self.assertEqual(status, 200)
        body = json.loads(text)
        self.assertEqual(body["object"], "chat.completion")
        self.assertEqual(body["model"], "tiny-sft")
        self.assertEqual(body["choices"][0]["message"], {"role": "assistant", "content": "```cpp\n__global__ void k() {}\n```"})
        self.assertEqual(body["choices"][0]["finish_reason"], "stop")
        self.assertEqual(body["usage"], {"prompt_tokens": 17, "completion_tokens": 9, "total_tokens": 26})
        messages, settings = self.engine.calls[0]
        self.assertEqual(messages, [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}])
        self.assertEqual(settings, {"max_new_tokens": 64, "temperature": 1.0, "top_p": 0.95, "seed": 7})  # capped

    def test_a_streamed_completion_ends_with_done(self):
        status, text = self.s.post({"messages": [{"role": "user", "content": "U"}], "stream": True})
        self.assertEqual(status, 200)
        events = [line[len("data: "):] for line in text.splitlines() if line.startswith("data: ")]
        self.assertEqual(events[-1], "[DONE]")
        chunks = [json.loads(e) for e in events[:-1]]
        self.assertEqual("".join(c["choices"][0]["delta"].get("content", "") for c in chunks),
                         "```cpp\n__global__ void k() {}\n```")
        self.assertEqual(chunks[-1]["choices"][0]["finish_reason"], "stop")
        self.assertEqual(chunks[-1]["usage"]["total_tokens"], 26)

    def test_bad_requests_are_refused_with_one_line(self):
        for body, needle in ((b"{not json", "not JSON"), ({"messages": []}, "non-empty list"),
                             ({"messages": [{"role": "tool", "content": "x"}]}, "role must be"),
                             ({"messages": [{"role": "user", "content": 3}]}, "content must be a string"),
                             ({"messages": [{"role": "user", "content": "U"}], "max_tokens": 0}, "positive integer"),
                             ({"messages": [{"role": "user", "content": "U"}], "temperature": "hot"}, "non-negative")):
            status, text = self.s.post(body)
            self.assertEqual(status, 400, body)
            self.assertIn(needle, json.loads(text)["error"]["message"])
        self.assertEqual(self.s.post({"messages": [{"role": "user", "content": "U"}]}, path="/v1/completions")[0], 404)
        self.assertEqual(self.engine.calls, [])

    def test_a_model_failure_is_a_500_and_the_server_goes_on(self):
        status, text = self.s.post({"messages": [{"role": "user", "content": "fail"}]})
        self.assertEqual(status, 500)
        self.assertEqual(json.loads(text)["error"]["message"], "RuntimeError: the model broke")
        self.assertEqual(self.s.post({"messages": [{"role": "user", "content": "U"}]})[0], 200)

    def test_models_and_health(self):
        with urllib.request.urlopen(self.s.url + "/v1/models", timeout=10) as r:
            self.assertEqual(json.loads(r.read())["data"][0]["id"], "tiny-sft")
        with urllib.request.urlopen(self.s.url + "/health", timeout=10) as r:
            self.assertEqual(json.loads(r.read()), {"status": "ok"})


@unittest.skipIf(MISSING, f"needs {', '.join(LIBRARIES)} (missing: {', '.join(MISSING)}); the GPU host has them")
class ServeATinyQwen3Model(unittest.TestCase):
    def test_the_tiny_model_answers_through_its_qwen3_template(self):
        tmp = tempfile.mkdtemp(prefix="serve_openai_test_")
        try:
            folder = os.path.join(tmp, "tiny")
            tiny_model.build("qwen3", folder, ["```cpp\n__global__ void k() {}\n```"], seed=0, chat_template="qwen3")
            engine = serve_openai.TransformersEngine(folder, device="cpu")
            s = Server(engine, max_new_tokens=8)
            try:
                status, text = s.post({"messages": [{"role": "user", "content": "Write a kernel."}], "temperature": 0})
            finally:
                s.close()
            self.assertEqual(status, 200, text)
            body = json.loads(text)
            self.assertLessEqual(body["usage"]["completion_tokens"], 8)
            self.assertGreater(body["usage"]["prompt_tokens"], 0)
            self.assertIsInstance(body["choices"][0]["message"]["content"], str)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
