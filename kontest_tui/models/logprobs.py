"""Token log-probabilities as servers send them, read into positions of (token, logprob).

Three shapes, all read by `positions_in`:

- OpenAI chat (`logprobs: true, top_logprobs: N`), and llama.cpp's server on both its chat and
  completions routes: `{"content": [{"token", "logprob", "top_logprobs": [{"token",
  "logprob"}, ...]}, ...]}`;
- OpenAI's legacy completions (`logprobs: N`, vLLM too): `{"tokens": [...], "token_logprobs":
  [...], "top_logprobs": [{TOKEN: LOGPROB, ...}, ...]}`;
- Ollama 0.12.11+ (`"logprobs": true, "top_logprobs": N` on /api/chat): a top-level list of the
  chat shape's items.

Only the first few positions matter (domain.margins.MARGIN_POSITIONS): the rest are skipped.
"""

from __future__ import annotations

from collections.abc import Mapping

from kontest_tui.domain.margins import MARGIN_POSITIONS

TOP_LOGPROBS = 5  # alternatives asked per position (OpenAI's legacy completions allow 5)

Position = list[tuple[str, float]]


def _number(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _item(entry: object) -> tuple[str, float] | None:
    if not isinstance(entry, Mapping):
        return None
    token, logprob = entry.get("token"), _number(entry.get("logprob"))
    return (token, logprob) if isinstance(token, str) and logprob is not None else None


def _content_positions(items: list[object]) -> list[Position]:
    positions: list[Position] = []
    for entry in items[:MARGIN_POSITIONS]:
        if not isinstance(entry, Mapping):
            continue
        top = entry.get("top_logprobs")
        found = [pair for pair in map(_item, top) if pair] if isinstance(top, list) else []
        chosen = _item(entry)
        if chosen is not None and all(token != chosen[0] for token, _ in found):
            found.append(chosen)
        if found:
            positions.append(found)
    return positions


def _legacy_positions(data: Mapping[str, object]) -> list[Position]:
    positions: list[Position] = []
    tops = data.get("top_logprobs")
    tokens = data.get("tokens")
    chosen = data.get("token_logprobs")
    for index in range(MARGIN_POSITIONS):
        found: Position = []
        if isinstance(tops, list) and index < len(tops) and isinstance(tops[index], Mapping):
            for token, logprob in tops[index].items():
                number = _number(logprob)
                if number is not None:
                    found.append((str(token), number))
        if (
            isinstance(tokens, list)
            and isinstance(chosen, list)
            and index < min(len(tokens), len(chosen))
        ):
            token, number = tokens[index], _number(chosen[index])
            if isinstance(token, str) and number is not None and all(t != token for t, _ in found):
                found.append((token, number))
        if not found:
            break
        positions.append(found)
    return positions


def positions_in(logprobs: object) -> list[Position]:
    """The positions (each its alternatives as (token, logprob)) in a `logprobs` value of
    any of the three shapes; [] for none (null, another shape)."""
    if isinstance(logprobs, list):
        return _content_positions(logprobs)
    if isinstance(logprobs, Mapping):
        content = logprobs.get("content")
        if isinstance(content, list):
            return _content_positions(content)
        if "top_logprobs" in logprobs or "tokens" in logprobs:
            return _legacy_positions(logprobs)
    return []
