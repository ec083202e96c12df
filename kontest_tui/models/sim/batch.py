"""The simulated model as a batch engine: `kontest sim batch IN OUT`.

Reads an OpenAI Batch API input file (one `{"custom_id", "method", "url", "body"}` line per
chat, as `kontest run --batch-out` writes them: /v1/chat/completions lines, or /v1/completions
lines with the few-shot prompt of a completions-mode session) and writes the output file a batch engine
would (`{"id", "custom_id", "response": {"status_code": 200, "request_id", "body":
<chat.completion>}, "error": null}`), answering each chat with `decide_reply` (the profile
named by `body.model` when it is a built-in one, else the given profile; the model is the
given seed, `body.seed` only draws the sample at temperature > 0), so a batch session gets
the answers of an in-process `sim` run. No faults:
batch engines retry on their own. Lines are read and written one at a time.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from kontest_tui.errors import InvalidInputError, KontestError
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.models.completion_prompt import parse_completion_prompt
from kontest_tui.models.sim.entities import EntityFinder
from kontest_tui.models.sim.model import TemplatePatterns, as_received, decide_reply, split_tokens
from kontest_tui.models.sim.profile import DEFAULT_PROFILE, SimProfile, list_profiles, load_profile
from kontest_tui.validate_input import read_jsonl


def iter_batch_requests(path: Path) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(custom_id, body) of each line of a batch input file; InvalidInputError on a bad line."""
    return read_jsonl(
        path,
        _request_line,
        what="batch file",
        line_is="a batch request line (a JSON object with custom_id and body.messages)",
    )


def _request_line(data: Any) -> tuple[str, Mapping[str, Any]]:
    """A chat line (`body.messages`) or a completions line (`body.prompt`, the few-shot
    transcript of completions mode, read back into its chat)."""
    custom_id, body = data["custom_id"], data["body"]
    if not isinstance(custom_id, str) or not isinstance(body, dict):
        raise TypeError
    if "messages" not in body and isinstance(body.get("prompt"), str):
        chat = parse_completion_prompt(body["prompt"])
        messages = [{"role": m.role, "content": m.content} for m in chat]
        body = {**body, "messages": messages, "completions": True}
    messages = body["messages"]
    if not isinstance(messages, list):
        raise TypeError
    if not all(isinstance(message, dict) for message in messages):
        raise TypeError
    return custom_id, body


def _result_line(
    number: int, custom_id: str, model: str, text: str, tokens: int, completions: bool = False
) -> dict[str, Any]:
    if completions:  # a /v1/completions body: the text follows the prompt's "Answer:"
        choice: dict[str, Any] = {"index": 0, "text": f" {text}", "finish_reason": "stop"}
        kind = "text_completion"
    else:
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": "stop",
        }
        kind = "chat.completion"
    return {
        "id": f"batch_req_{number}",
        "custom_id": custom_id,
        "response": {
            "status_code": 200,
            "request_id": f"req_{number}",
            "body": {
                "id": f"chatcmpl-{number}",
                "object": kind,
                "model": model,
                "choices": [choice],
                "usage": {"completion_tokens": tokens},
            },
        },
        "error": None,
    }


def answer_batch(
    source: Path,
    target: Path,
    *,
    profile: str = DEFAULT_PROFILE,
    seed: int = 0,
    kg: KnowledgeGraph | None = None,
) -> int:
    """Answer every request of `source` into `target`; return how many lines."""
    known = set(list_profiles())
    profiles: dict[str, SimProfile] = {}
    patterns = TemplatePatterns().current()
    entities = EntityFinder(kg) if kg is not None else None
    count = 0
    try:
        out = target.open("w", encoding="utf-8")
    except OSError as error:
        raise InvalidInputError(f"cannot write {target}: {error.strerror or error}") from None
    with out:
        for custom_id, body in iter_batch_requests(source):
            name = str(body.get("model") or profile)
            chosen = name if name in known else profile
            if chosen not in profiles:
                try:
                    profiles[chosen] = load_profile(chosen)
                except KontestError as error:
                    raise InvalidInputError(str(error)) from None
            # the model is `seed`'s; a line's own seed draws the sample at temperature > 0
            line_seed = body.get("seed")
            sample_seed = (
                line_seed
                if isinstance(line_seed, int) and not isinstance(line_seed, bool)
                else None
            )
            heat = body.get("temperature", 0.0)
            questions = [
                str(message.get("content", ""))
                for message in body["messages"]
                if message.get("role") == "user"
            ]
            text = decide_reply(
                profiles[chosen],
                seed,
                questions,
                entities,
                patterns,
                temperature=float(heat) if isinstance(heat, int | float) else 0.0,
                sample_seed=sample_seed,
            ).text
            limit = body.get("max_tokens", body.get("max_completion_tokens"))
            pieces = split_tokens(text, limit if isinstance(limit, int) else None)
            count += 1
            line = _result_line(
                count,
                custom_id,
                name,
                as_received("".join(pieces)),
                len(pieces),
                completions=bool(body.get("completions")),
            )
            out.write(json.dumps(line) + "\n")
    return count
