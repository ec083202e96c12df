"""The explorer's groups of oracles (metamorphic, the other test kinds'). What a reader sees
of an oracle or a conversation is worded by the engine (report.words: `oracle_name`,
`conversation_name`); figures come from the engine and the store."""

from __future__ import annotations

METAMORPHIC_ORACLES = ("atomic", "sequential_intra", "sequential_inter")
KIND_ORACLES = ("variant", "factcheck", "logic", "annotation")  # the other test kinds' oracles
