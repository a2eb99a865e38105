"""Reading the exported SFT JSONL and turning rows into token ids with a loss mask.

Rows are `{id, messages, metadata}` exactly as `ptxbench sft export` writes them:
  * Fixit: five messages — system, user (the task), assistant (the wrong kernel turn, verbatim),
    user (the feedback it got), assistant (`<think>…</think>` and the fixed kernel in a fence);
  * KernelGen: three messages — system, user, assistant.
Only the last assistant message is supervised.

The mask is found with the tokenizer's own chat template, never by searching for role strings:
the conversation without its last message is rendered with the generation prompt
(`add_generation_prompt=True`), which is exactly what an inference server sends the model before
it writes that message; the full conversation must start with that text and with those tokens,
and everything after them is the model's answer. Labels cover the answer's tokens up to and
including the first end-of-turn token (so the model learns to stop); the role header (part of
the generation prompt) and anything the template adds after the end-of-turn token (e.g. a
newline) are not labelled. A template that renders the prompt differently inside the full
conversation is an error, never a guess.

This module needs no torch: a tokenizer is anything with `apply_chat_template(messages,
tokenize=False, add_generation_prompt=...)`, `encode(text, add_special_tokens=False)`,
`convert_tokens_to_ids(token)` and `eos_token` (a Hugging Face tokenizer has all four).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

IGNORE_INDEX = -100  # the label value PyTorch's cross entropy ignores

FIXIT_ROLES = ["system", "user", "assistant", "user", "assistant"]
KERNELGEN_ROLES = ["system", "user", "assistant"]
ROW_KEYS = {"id", "messages", "metadata"}
MESSAGE_KEYS = {"role", "content"}
OPTIONAL_MESSAGE_KEYS = {"step_loss_mask"}  # upstream's per-message mask; if present: 0,…,0,1


class DataError(Exception):
    """A bad input row or file; the message is one line naming the file, line and row id."""


class MaskError(Exception):
    """The chat template does not allow a clean prompt/answer split for a row."""


@dataclass
class Row:
    id: str
    kind: str  # "fixit" or "kernelgen"
    messages: list  # [{"role", "content"}] as the template wants them
    metadata: dict
    line: int


@dataclass
class Example:
    id: str
    kind: str
    input_ids: list  # the rendered conversation up to and including the end-of-turn token
    labels: list  # IGNORE_INDEX except on the last assistant message's tokens
    prompt_tokens: int  # tokens before the labelled span
    labelled_tokens: int
    rendered_tokens: int  # the whole rendering, what the length limit is applied to


@dataclass
class TokenizedSet:
    examples: list
    dropped_over_limit: list = field(default_factory=list)  # [(id, rendered_tokens)]


def file_sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def load_rows(path):
    """Reads and validates every row. Raises DataError with the first problem (and how many more)."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise DataError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise DataError(f"{path}:{line}: not UTF-8") from None
    rows, problems, seen = [], [], {}
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline
    for number, line in enumerate(lines, 1):
        try:
            row = parse_row(line, number)
        except DataError as e:
            problems.append(f"{path}:{number}: {e}")
            continue
        if row.id in seen:
            problems.append(f"{path}:{number}: row {row.id!r}: duplicate id (first on line {seen[row.id]})")
            continue
        seen[row.id] = number
        rows.append(row)
    if problems:
        more = f" (and {len(problems) - 1} more bad rows)" if len(problems) > 1 else ""
        raise DataError(problems[0] + more)
    if not rows:
        raise DataError(f"{path}: no rows")
    return rows


def parse_row(line, number):
    if not line.strip():
        raise DataError("empty line")
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        raise DataError(f"invalid JSON at column {e.colno}: {e.msg}") from None
    if not isinstance(obj, dict):
        raise DataError(f"expected a JSON object, got {type(obj).__name__}")
    row_id = obj.get("id")
    if not isinstance(row_id, str) or not row_id:
        raise DataError("`id` must be a non-empty string")
    where = f"row {row_id!r}"
    unknown = sorted(set(obj) - ROW_KEYS)
    missing = sorted(ROW_KEYS - set(obj))
    if unknown:
        raise DataError(f"{where}: unknown field {unknown[0]!r} (expected id, messages, metadata)")
    if missing:
        raise DataError(f"{where}: missing field {missing[0]!r}")
    if not isinstance(obj["metadata"], dict):
        raise DataError(f"{where}: `metadata` must be an object")
    messages = obj["messages"]
    if not isinstance(messages, list):
        raise DataError(f"{where}: `messages` must be a list")
    clean = []
    for i, message in enumerate(messages):
        clean.append(check_message(message, f"{where}: messages[{i}]"))
    roles = [m["role"] for m in clean]
    if roles == FIXIT_ROLES:
        kind = "fixit"
    elif roles == KERNELGEN_ROLES:
        kind = "kernelgen"
    else:
        raise DataError(f"{where}: roles {roles} are neither Fixit {FIXIT_ROLES} nor KernelGen {KERNELGEN_ROLES}")
    masks = [m.get("step_loss_mask") for m in messages]
    if any(mask is not None for mask in masks) and masks != [0] * (len(masks) - 1) + [1]:
        raise DataError(f"{where}: step_loss_mask {masks} must be 0 on every message but the last (1)")
    check_final_answer(clean[-1]["content"], where)
    return Row(id=row_id, kind=kind, messages=clean, metadata=obj["metadata"], line=number)


def check_message(message, where):
    if not isinstance(message, dict):
        raise DataError(f"{where}: expected an object")
    unknown = sorted(set(message) - MESSAGE_KEYS - OPTIONAL_MESSAGE_KEYS)
    if unknown:
        raise DataError(f"{where}: unknown field {unknown[0]!r} (expected role, content)")
    role, content = message.get("role"), message.get("content")
    if role not in ("system", "user", "assistant"):
        raise DataError(f"{where}: role must be system, user or assistant, got {role!r}")
    if not isinstance(content, str):
        raise DataError(f"{where}: content must be a string")
    if role != "system" and not content.strip():
        raise DataError(f"{where}: empty {role} content")
    mask = message.get("step_loss_mask")
    if mask is not None and mask not in (0, 1):
        raise DataError(f"{where}: step_loss_mask must be 0 or 1")
    return {"role": role, "content": content}


def check_final_answer(content, where):
    """The supervised message: a closed <think> block if one is opened, and a closed code fence."""
    if "<think>" in content and "</think>" not in content.split("<think>", 1)[1]:
        raise DataError(f"{where}: the last message opens <think> but never closes it")
    answer = content.split("</think>", 1)[1] if "</think>" in content else content
    fences = [line for line in answer.splitlines() if line.lstrip().startswith("```")]
    if len(fences) < 2:
        raise DataError(f"{where}: the last message has no closed code fence (the kernel)")


def render(tokenizer, messages, add_generation_prompt):
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=add_generation_prompt)
    if not isinstance(text, str):
        raise MaskError("the tokenizer's apply_chat_template(tokenize=False) did not return text")
    return text


def encode(tokenizer, text):
    return list(tokenizer.encode(text, add_special_tokens=False))


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def tokenize_row(tokenizer, row, eot_token, max_tokens):
    """Returns (Example or None when over max_tokens, rendered token count). Raises MaskError."""
    where = f"row {row.id!r}"
    for message in row.messages:
        if eot_token in message["content"]:
            raise MaskError(f"{where}: a {message['role']} message contains the end-of-turn token {eot_token!r}")
    eot_id = tokenizer.convert_tokens_to_ids(eot_token)
    if not isinstance(eot_id, int) or eot_id < 0:
        raise MaskError(f"end-of-turn token {eot_token!r} is not in the tokenizer's vocabulary")
    full_text = render(tokenizer, row.messages, add_generation_prompt=False)
    prompt_text = render(tokenizer, row.messages[:-1], add_generation_prompt=True)
    if not full_text.startswith(prompt_text):
        at = first_difference(full_text, prompt_text)
        raise MaskError(f"{where}: the chat template renders the prompt differently inside the full conversation "
                        f"(first difference at character {at}: {full_text[at:at + 30]!r} vs {prompt_text[at:at + 30]!r})")
    full_ids = encode(tokenizer, full_text)
    prompt_ids = encode(tokenizer, prompt_text)
    if full_ids[:len(prompt_ids)] != prompt_ids:
        at = first_difference(full_ids, prompt_ids)
        raise MaskError(f"{where}: the prompt's tokens are not a prefix of the conversation's tokens "
                        f"(they differ at token {at} of {len(prompt_ids)})")
    if len(full_ids) > max_tokens:
        return None, len(full_ids)
    answer = full_ids[len(prompt_ids):]
    if eot_id not in answer:
        raise MaskError(f"{where}: the last message's rendering has no end-of-turn token {eot_token!r} "
                        "(pass the template's end-of-turn token with --eot-token)")
    end = len(prompt_ids) + answer.index(eot_id) + 1
    if end - len(prompt_ids) < 2:
        raise MaskError(f"{where}: the last message renders to no tokens before its end-of-turn token")
    input_ids = full_ids[:end]  # tokens after end-of-turn are never labelled and cannot affect the loss
    labels = [IGNORE_INDEX] * len(prompt_ids) + input_ids[len(prompt_ids):]
    example = Example(id=row.id, kind=row.kind, input_ids=input_ids, labels=labels,
                      prompt_tokens=len(prompt_ids), labelled_tokens=end - len(prompt_ids),
                      rendered_tokens=len(full_ids))
    return example, len(full_ids)


def tokenize_rows(tokenizer, rows, eot_token, max_tokens):
    """Tokenizes every row; rows whose whole rendering is over max_tokens are dropped (never
    truncated) and listed. Raises MaskError for the first row the template cannot split."""
    result = TokenizedSet(examples=[])
    for row in rows:
        example, rendered = tokenize_row(tokenizer, row, eot_token, max_tokens)
        if example is None:
            result.dropped_over_limit.append((row.id, rendered))
        else:
            result.examples.append(example)
    return result


def length_stats(values):
    if not values:
        return {"count": 0}
    ordered = sorted(values)
    return {"count": len(ordered), "min": ordered[0], "max": ordered[-1], "total": sum(ordered),
            "mean": round(sum(ordered) / len(ordered), 1), "median": ordered[len(ordered) // 2]}
