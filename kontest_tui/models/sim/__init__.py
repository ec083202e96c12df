"""The simulated model (`sim[:PROFILE]`): a deterministic, profile-driven imperfect LLM.

Its parts import one way: profile (the profile and the seeded draws) <- entities (labels of
the session's KG) <- probes (FactChecker and logic-rule questions) <- model (KONTEST
questions, faults, the ChatModel) <- server (`kontest sim serve` over HTTP, on http.py). This module
names what the rest of the engine uses.
"""

from kontest_tui.models.sim.model import (
    SimReply,
    SimulatedModel,
    decide_answer,
    decide_fault,
    decide_reply,
    parse_question,
    split_tokens,
)
from kontest_tui.models.sim.profile import (
    DEFAULT_PROFILE,
    MEGABYTE,
    SimProfile,
    list_profiles,
    load_profile,
    profile_from_dict,
)

__all__ = [
    "DEFAULT_PROFILE",
    "MEGABYTE",
    "SimProfile",
    "SimReply",
    "SimulatedModel",
    "decide_answer",
    "decide_fault",
    "decide_reply",
    "list_profiles",
    "load_profile",
    "parse_question",
    "profile_from_dict",
    "split_tokens",
]
