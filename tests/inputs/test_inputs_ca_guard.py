"""`kontest ca` refuses covering arrays it cannot build in reasonable time,
at once and with one line; arrays an orthogonal array gives at once are still built."""

from __future__ import annotations

import itertools
import json
import math

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.generate.covering import MAX_TUPLES, check_size, count_tuples


def ipm(tmp_path, parameters: int, values: int) -> str:
    path = tmp_path / "ipm.json"
    data = {
        "parameters": [
            {"name": f"p{i}", "values": [f"v{j}" for j in range(values)]} for i in range(parameters)
        ]
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    ("parameters", "values", "strength", "tuples"),
    [
        (50, 50, 2, "3,062,500"),
        (10, 10, 4, "2,100,000"),
        (2000, 2, 3, "10,650,672,000"),
    ],
)
def test_ca_refuses_models_too_large(
    tmp_path, capsys, parameters, values, strength, tuples
) -> None:
    code = run_cli(["ca", "--ipm", ipm(tmp_path, parameters, values), "-t", str(strength)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("kontest: error: "), err
    assert tuples in err and "reasonable time" in err


def test_ca_orthogonal_array_still_built(tmp_path, capsys) -> None:
    # 50 parameters of 49 values: 3 million pairs, but 7^2 gives an orthogonal array at once.
    assert run_cli(["ca", "--ipm", ipm(tmp_path, 50, 49)]) == 0
    assert len(json.loads(capsys.readouterr().out)["rows"]) == 49 * 49


def test_count_tuples_matches_enumeration() -> None:
    levels = [2, 3, 5, 1, 4]
    for t in range(1, 5):
        expected = sum(
            math.prod(levels[c] for c in combo)
            for combo in itertools.combinations(range(len(levels)), t)
        )
        assert count_tuples(levels, t) == expected


def test_check_size_boundary() -> None:
    check_size([2] * 10, 2)  # small models pass
    with pytest.raises(Exception, match="reasonable time"):
        check_size([10] * 10, 4)
    assert count_tuples([10] * 10, 4) > MAX_TUPLES
