"""The servers met in use, played by `kontest sim serve`'s switches over real HTTP on 127.0.0.1:
a model name the server does not serve, thinking models that answer in their reasoning, the
same rejection for every chat, NDJSON to a request for one object, replicas of different
speed, a model that takes only its default temperature."""

from __future__ import annotations

import pytest

from kontest_tui.cli import run_cli


def kontest(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    capsys.readouterr()
    code = run_cli([str(arg) for arg in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_a_model_name_the_server_does_not_serve_fails_the_check(
    kind: str,
    sim_url: str,
    tmp_path,
    capsys,  # noqa: ANN001
) -> None:
    """A typo in the model name: the sim server answered 200 for any name, so the OpenAI
    check passed and the run asked a model that does not exist. Now a 404 as real servers
    answer it; the check says so in one line and nothing is stored."""
    url = sim_url if kind == "ollama" else f"{sim_url}/v1"
    db = tmp_path / "s.db"
    code, _, err = kontest(
        capsys, "run", "--kg", "places", "--limit", "2", "--model", f"{kind}:TYPO@{url}", "--db", db
    )
    assert code != 0 and "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("kontest: error:")]
    assert len(lines) == 1 and "unknown model 'TYPO'" in lines[0], err
    # `sim` (the server's profile) is served
    code, _, err = kontest(
        capsys,
        "run",
        "--kg",
        "places",
        "--limit",
        "1",
        "--model",
        f"{kind}:sim@{url}",
        "--db",
        tmp_path / "ok.db",
        "-q",
    )
    assert code == 0, err
