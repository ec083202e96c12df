"""Timestamps: the fast `iso_at` of stored answers writes what `now_iso` / datetime would."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from kontest_tui.store.schema import iso_at


def expected(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds")


@given(st.floats(min_value=0, max_value=4_102_444_800, allow_nan=False))  # to year 2100
def test_iso_at_equals_datetime(epoch: float) -> None:
    assert iso_at(epoch) == expected(epoch)


def test_iso_at_at_second_and_rounding_edges() -> None:
    for epoch in (
        0.0,
        1_700_000_000.0,
        1_700_000_000.9999996,
        1_700_000_000.0004999,
        1_700_000_000.9995,
        1_700_000_001.0,
        1_699_999_999.999,
    ):
        assert iso_at(epoch) == expected(epoch), epoch
    # the cached seconds part moves on with the clock, also backwards
    assert iso_at(1_700_000_005.25) == "2023-11-14T22:13:25.250+00:00"
    assert iso_at(1_700_000_004.5) == "2023-11-14T22:13:24.500+00:00"
