"""Answer margins: how sure a model was of its yes/no answer, from token log-probabilities.

A server that gives log-probabilities (OpenAI-compatible `logprobs`/`top_logprobs`, llama.cpp,
the local model, Ollama 0.12.11+) lists the most likely tokens at each position of the reply.
At the first position whose alternatives hold a yes-like or no-like token ("Yes", " yes",
"YES", "true" ...), P(yes | yes or no) = sum of the yes-like probabilities / sum of both.
An answer is *low-margin* when that probability is within LOW_MARGIN of a coin toss (0.5):
the model hardly preferred the answer it gave. An error between two low-margin answers is
*weak* (the report counts them apart): likely a fluke, not a contradiction the model holds.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

# p_yes within this distance of 0.5 (0.3 < p_yes < 0.7): the answer given had at most 70%
# of the yes/no probability. Defined here once; docs/oracles-and-metrics.md says it too.
LOW_MARGIN = 0.2
# Positions of a reply searched for a yes/no token (past markup such as "**" or a space).
MARGIN_POSITIONS = 4

_YES_WORDS = frozenset(("yes", "true"))
_NO_WORDS = frozenset(("no", "false"))
_STRIP = " \t\n\r\"'`*_#>.,:;!?()[]{}▁Ġ"

# One position of a reply: (token text, log-probability) of its most likely tokens.
Alternatives = Sequence[tuple[str, float]]


def token_word(token: str) -> str:
    """A token as a yes/no word: stripped of spaces, markup and the tokenizers' space marks."""
    return token.strip(_STRIP).casefold()


def p_yes_of(alternatives: Alternatives) -> float | None:
    """P(yes | yes or no) at one position, or None when no yes/no token is among them."""
    yes = no = 0.0
    for token, logprob in alternatives:
        if not math.isfinite(logprob):
            continue
        word = token_word(token)
        if word in _YES_WORDS:
            yes += math.exp(logprob)
        elif word in _NO_WORDS:
            no += math.exp(logprob)
    if yes + no <= 0.0:
        return None
    return round(yes / (yes + no), 4)


def first_margin(positions: Iterable[Alternatives]) -> float | None:
    """P(yes | yes or no) at the first of the reply's first MARGIN_POSITIONS positions
    that has a yes/no token among its alternatives (None: none has)."""
    for index, alternatives in enumerate(positions):
        if index >= MARGIN_POSITIONS:
            break
        found = p_yes_of(alternatives)
        if found is not None:
            return found
    return None


def is_low_margin(p_yes: float | None) -> bool:
    """Whether an answer's margin is low (see LOW_MARGIN); False when it has none."""
    return p_yes is not None and abs(p_yes - 0.5) < LOW_MARGIN
