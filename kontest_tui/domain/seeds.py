"""The seed of one model call: derived from the session's seed, the conversation and a draw.

`draw_seed(session_seed, conversation_id, draw)` is a pure function (BLAKE2, never Python's
`hash()`, which changes between processes), so a rerun of a session sends every call the same
seed, while two conversations, or two draws of one conversation (a repeated sample of the same
question), get different seeds: at temperature > 0 they are two samples where the model is
uncertain, and each is reproduced by a rerun. Draw 0 is the run's own call; later draws are
repeated samples (confirmation).
"""

from __future__ import annotations

import hashlib

# Seeds are sent as non-negative 31-bit integers: llama.cpp, Ollama, vLLM and OpenAI all take them.
SEED_BITS = 31


def draw_seed(session_seed: int, conversation_id: str, draw: int = 0) -> int:
    """The seed of draw `draw` of `conversation_id` in a session seeded `session_seed`."""
    text = f"{session_seed}\x1f{conversation_id}\x1f{draw}"
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> (64 - SEED_BITS)
