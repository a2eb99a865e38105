"""A small OpenAI-compatible chat server for a model trained here: the base model with a LoRA adapter
from train/sft_lora.py (applied with PEFT at load time), or a merged checkpoint from
train/merge_lora.py. Enough of the API for `ptxbench run --model openai:NAME --base-url URL`: POST
/v1/chat/completions (plain JSON, or server-sent events when the request asks to stream), GET
/v1/models and GET /health. One request at a time; for a real model use vLLM or SGLang
(docs/training.md). Nothing is downloaded.

    python3 -m train.serve_openai --model runs/tiny/model --adapter runs/sft/adapter --port 8011 \\
        --served-name tiny-sft --max-new-tokens 256

The chat template is the tokenizer's (the model's folder, or --tokenizer). A request's max_tokens
(or max_completion_tokens) is honoured up to --max-new-tokens; temperature 0 (or absent with
--greedy) decodes greedily, otherwise it samples with the request's temperature and top_p and, when
given, its seed. With --port 0 a free port is chosen; --ready-file receives "PORT\\n" once the
server listens, so a script can wait for it.

Exit status: 0 stopped by a signal; 2 bad arguments; 3 missing libraries or a model that does not load.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MAX_BODY_BYTES = 64 << 20


class RequestError(Exception):
    """A request the server refuses (HTTP 400), one line."""


def parse_chat_request(body: bytes, max_new_tokens: int):
    """Checks a chat completion request; returns (messages, generation settings, stream?)."""
    try:
        request = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise RequestError(f"the body is not JSON: {e}") from None
    if not isinstance(request, dict):
        raise RequestError("the body is not a JSON object")
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError("messages must be a non-empty list")
    clean = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ("system", "user", "assistant"):
            raise RequestError(f"messages[{i}]: role must be system, user or assistant")
        content = m.get("content")
        if isinstance(content, list):  # content parts: keep the text ones
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
        if not isinstance(content, str):
            raise RequestError(f"messages[{i}]: content must be a string")
        clean.append({"role": m["role"], "content": content})
    limit = request.get("max_completion_tokens", request.get("max_tokens"))
    if limit is None:
        limit = max_new_tokens
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise RequestError("max_tokens must be a positive integer")
    settings = {"max_new_tokens": min(limit, max_new_tokens)}
    for key in ("temperature", "top_p"):
        value = request.get(key)
        if value is not None and (not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0):
            raise RequestError(f"{key} must be a non-negative number")
        settings[key] = value
    seed = request.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise RequestError("seed must be an integer")
    settings["seed"] = seed
    return clean, settings, bool(request.get("stream", False))


def completion_body(served_name, text, finish_reason, prompt_tokens, completion_tokens, created=None):
    return {"id": f"chatcmpl-{int((created or time.time()) * 1000)}", "object": "chat.completion",
            "created": int(created or time.time()), "model": served_name,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}


def stream_events(served_name, text, finish_reason, prompt_tokens, completion_tokens):
    """The same completion as server-sent events: one content chunk, one closing chunk with usage."""
    created = int(time.time())
    base = {"id": f"chatcmpl-{created}", "object": "chat.completion.chunk", "created": created, "model": served_name}
    yield {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}]}
    yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish_reason}],
           "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                     "total_tokens": prompt_tokens + completion_tokens}}


class TransformersEngine:
    """The model (with its adapter) on one device; complete() is called under the server's lock."""

    def __init__(self, model_dir, adapter_dir=None, tokenizer_dir=None, device="auto", greedy=False):
        from train import sft_lora

        self.torch, transformers, peft = sft_lora.import_libraries()
        torch = self.torch
        self.device = sft_lora.resolve_device(device, torch)
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(tokenizer_dir or model_dir)
        if not getattr(self.tokenizer, "chat_template", None):
            raise sft_lora.UsageError(f"the tokenizer in {tokenizer_dir or model_dir} has no chat template")
        model = transformers.AutoModelForCausalLM.from_pretrained(model_dir)
        if adapter_dir:
            model = peft.PeftModel.from_pretrained(model, adapter_dir)
        self.model = model.to(self.device).eval()
        self.greedy = greedy
        self.description = {"model": os.path.abspath(model_dir),
                            "adapter": os.path.abspath(adapter_dir) if adapter_dir else None,
                            "device": self.device, "class": type(model).__name__}

    def complete(self, messages, settings):
        torch = self.torch
        text = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        ids = self.tokenizer(text, return_tensors="pt", add_special_tokens=False)["input_ids"].to(self.device)
        temperature = settings.get("temperature")
        sample = not (temperature == 0 or (temperature is None and self.greedy))
        kwargs = {"max_new_tokens": settings["max_new_tokens"], "do_sample": sample,
                  "pad_token_id": self.tokenizer.pad_token_id, "eos_token_id": self.tokenizer.eos_token_id}
        if sample:
            kwargs["temperature"] = temperature if temperature is not None else 1.0
            if settings.get("top_p") is not None:
                kwargs["top_p"] = settings["top_p"]
        if settings.get("seed") is not None:
            torch.manual_seed(settings["seed"])
        with torch.no_grad():
            out = self.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), **kwargs)
        new = out[0, ids.shape[1]:].tolist()
        stopped = bool(new) and new[-1] == self.tokenizer.eos_token_id
        reply = self.tokenizer.decode(new, skip_special_tokens=True)
        return reply, ("stop" if stopped else "length"), int(ids.shape[1]), len(new)


def make_handler(engine, served_name, max_new_tokens, log=sys.stderr):
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # one line per request on the log, not the default format
            log.write(f"serve_openai: {self.address_string()} {fmt % args}\n")
            log.flush()

        def send_json(self, status, value):
            data = json.dumps(value).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def error(self, status, message):
            self.close_connection = True  # a body may be left unread
            self.send_json(status, {"error": {"message": message, "type": "invalid_request_error", "code": status}})

        def do_GET(self):
            if self.path in ("/health", "/v1/health"):
                self.send_json(200, {"status": "ok"})
            elif self.path == "/v1/models":
                self.send_json(200, {"object": "list", "data": [{"id": served_name, "object": "model", "owned_by": "ptxbench"}]})
            else:
                self.error(404, f"no route {self.path}")

        def do_POST(self):
            if self.path != "/v1/chat/completions":
                self.error(404, f"no route {self.path}")
                return
            try:
                length = int(self.headers.get("Content-Length", ""))
            except ValueError:
                self.error(411, "Content-Length is required")
                return
            if length < 0 or length > MAX_BODY_BYTES:
                self.error(413, f"the body is over {MAX_BODY_BYTES} bytes")
                return
            body = self.rfile.read(length)
            try:
                messages, settings, stream = parse_chat_request(body, max_new_tokens)
            except RequestError as e:
                self.error(400, str(e))
                return
            try:
                with lock:
                    text, finish, prompt_tokens, completion_tokens = engine.complete(messages, settings)
            except Exception as e:  # the model failed: a 500 with one line, the server keeps serving
                self.send_json(500, {"error": {"message": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
                                               "type": "server_error", "code": 500}})
                return
            if not stream:
                self.send_json(200, completion_body(served_name, text, finish, prompt_tokens, completion_tokens))
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for event in stream_events(served_name, text, finish, prompt_tokens, completion_tokens):
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

    return Handler


def start_server(engine, served_name, host="127.0.0.1", port=0, max_new_tokens=256, log=sys.stderr):
    """Returns a listening server (call serve_forever(); server_address[1] is the port)."""
    return ThreadingHTTPServer((host, port), make_handler(engine, served_name, max_new_tokens, log))


def main(argv=None):
    p = argparse.ArgumentParser(prog="serve_openai", description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="the base model folder (or a merged checkpoint)")
    p.add_argument("--adapter", help="a LoRA adapter folder (sft_lora's OUT/adapter) applied at load time")
    p.add_argument("--tokenizer", help="tokenizer folder with the chat template (default: --model)")
    p.add_argument("--served-name", default="ptxbench-sft", help="the model name the API reports and accepts")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8011, help="0: a free port (see --ready-file)")
    p.add_argument("--max-new-tokens", type=int, default=256, help="the most tokens one reply may have")
    p.add_argument("--greedy", action="store_true", help="decode greedily when a request gives no temperature")
    p.add_argument("--device", default="auto", help="auto, cuda, cuda:N or cpu")
    p.add_argument("--ready-file", help="write the port here once the server listens")
    args = p.parse_args(argv)
    from train import sft_lora

    if args.max_new_tokens < 1 or not 0 <= args.port < 65536:
        print("serve_openai: --max-new-tokens must be at least 1 and --port in 0..65535", file=sys.stderr)
        return 2
    for folder, wanted in ((args.model, "config.json"), (args.adapter, "adapter_config.json")):
        if folder and not os.path.isfile(os.path.join(folder, wanted)):
            print(f"serve_openai: {folder}: no {wanted}", file=sys.stderr)
            return 2
    try:
        engine = TransformersEngine(args.model, args.adapter, args.tokenizer, args.device, args.greedy)
    except sft_lora.UsageError as e:
        print(f"serve_openai: {e}", file=sys.stderr)
        return 2
    except sft_lora.TrainError as e:
        print(f"serve_openai: {e}", file=sys.stderr)
        return 3
    except Exception as e:  # a model that does not load: one line
        print(f"serve_openai: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", file=sys.stderr)
        return 3
    server = start_server(engine, args.served_name, args.host, args.port, args.max_new_tokens)
    port = server.server_address[1]
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown, daemon=True).start())
    print(f"serve_openai: {args.served_name} on http://{args.host}:{port}/v1 ({json.dumps(engine.description)})",
          file=sys.stderr, flush=True)
    if args.ready_file:
        tmp = f"{args.ready_file}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(f"{port}\n")
        os.replace(tmp, args.ready_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
