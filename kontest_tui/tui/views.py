"""The explorer's groups of oracles (metamorphic, the other test kinds'). What a reader sees
of an oracle or a conversation is worded by the engine (report.words: `oracle_name`,
`conversation_name`); figures come from the engine and the store; the other kinds' oracles
come from the kinds' registry (report.kinds.kind_oracles: a plugin kind's included)."""

from __future__ import annotations

from kontest_tui.report.kinds import kind_oracles

METAMORPHIC_ORACLES = ("atomic", "sequential_intra", "sequential_inter")

__all__ = ["METAMORPHIC_ORACLES", "kind_oracles"]
