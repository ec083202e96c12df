"""Helpers for tests reading the engine's records: a conversation's extras as the type the test
expects (checked, so a test reading a field of the wrong kind fails on the line that reads it)."""

from __future__ import annotations

from typing import TypeVar

from kontest_tui.domain.records import Conversation

ExtrasT = TypeVar("ExtrasT")


def extras_of(conversation: Conversation, kind: type[ExtrasT]) -> ExtrasT:
    """`conversation.extras`, asserted to be a `kind` (FactcheckExtras, LogicExtras, ...)."""
    extras = conversation.extras
    assert isinstance(extras, kind), f"{conversation.id}: extras {extras!r} are not {kind.__name__}"
    return extras
