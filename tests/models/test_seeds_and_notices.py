"""Per-call seeds (domain.seeds.draw_seed), margins stored by a run over real HTTP, and the
warning for a base model asked in chat mode: through `kontest run` against local servers."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from kontest_tui.domain.records import Answer, Conversation, Query, Response
from kontest_tui.domain.seeds import SEED_BITS, draw_seed
from kontest_tui.run.notices import ECHO_AFTER, EchoWatch
from kontest_tui.store import Store
from tests.models.model_test_servers import ProxyHandler
from tests.support.cli import kontest


def test_draw_seed_is_the_same_in_every_process_and_differs_per_conversation_and_draw() -> None:
    here = draw_seed(7, "ie>ie.ulster/t1", 0)
    code = (
        "from kontest_tui.domain.seeds import draw_seed; print(draw_seed(7, 'ie>ie.ulster/t1', 0))"
    )
    for hash_seed in ("1", "2"):  # Python's hash() would change with it; BLAKE2 does not
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        assert int(out.stdout) == here
    others = {draw_seed(7, "ie>ie.ulster/t2"), draw_seed(7, "ie>ie.ulster/t1", 1)}
    others.add(draw_seed(8, "ie>ie.ulster/t1"))
    assert here not in others and len(others) == 3
    assert all(0 <= seed < 2**SEED_BITS for seed in (here, *others))


def test_each_conversation_is_sent_its_own_seed(
    proxy_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--model-seed 7`: every request carries draw_seed(7, its conversation), not 7 (which
    made one constant seed of every call); a rerun sends the same seeds."""
    sent: list[list[object]] = []
    for name in ("a.db", "b.db"):
        ProxyHandler.payloads.clear()
        db = tmp_path / name
        run = ["run", "--kg", "places", "--limit", "2", "--db", db, "-q", "--no-cache"]
        code, _, err = kontest(
            capsys, *run, "--model", f"openai:good@{proxy_url}/v1", "--model-seed", "7"
        )
        assert code == 0, err
        sent.append(sorted(p["seed"] for p in ProxyHandler.payloads))
        with Store(db) as store:
            ids = {c.id for c in store.relations.load_conversations(store.sessions.ids()[0])}
    assert sent[0] == sent[1]  # reproduced by a rerun
    seeds = sent[0]
    assert 7 not in seeds and set(seeds) == {draw_seed(7, cid) for cid in ids}
    assert len(set(seeds)) == len(ids) > 1  # one per conversation (its turns share it)


def test_a_run_over_http_stores_the_margins_of_yes_no_answers(
    sim_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "m.db"
    spec = f"openai-completions:default@{sim_url}/v1"
    run = ["run", "--kg", "places", "--limit", "3", "--kind", "kontest,factcheck", "--db", db]
    code, out, err = kontest(capsys, *run, "--model", spec, "-q")
    assert code == 0, err
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(
            "SELECT c.test_kind, json_extract(c.meta, '$.question_type'), r.answer, r.p_yes"
            " FROM responses r JOIN conversations c ON c.pk = r.conversation_key"
        ).fetchall()
    finally:
        conn.close()
    yes_no = [
        row for row in rows if row[1] in (None, "yes_no", "two_hop") and row[2] in ("yes", "no")
    ]
    named = [row for row in rows if row[1] in ("wh", "multiple_choice", "two_hop_choice")]
    assert yes_no and all(row[3] is not None for row in yes_no)
    assert all((row[3] > 0.5) == (row[2] == "yes") for row in yes_no if row[0] == "kontest")
    assert named and all(row[3] is None for row in named)  # a letter or a name has no P(yes)
    assert "Margins: kontest" in out
    code, out, _ = kontest(capsys, "report", "--db", db, "--format", "json")
    margins = json.loads(out)["margins"]
    assert margins["per_kind"]["kontest"]["share"] == 1.0 and "note" not in margins


def test_a_base_model_in_chat_mode_gets_one_warning_naming_the_fix(
    proxy_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "p.db"
    spec = f"openai:parrot@{proxy_url}/v1"
    code, out, err = kontest(
        capsys, "run", "--kg", "places", "--limit", "2", "--model", spec, "--db", db, "-q"
    )
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("kontest: warning:")]
    assert len(warnings) == 1
    assert f"openai-completions:parrot@{proxy_url}/v1" in warnings[0]
    assert "base model asked in chat mode" in out  # the report's note
    code, out, _ = kontest(capsys, "report", "--db", db, "--format", "json")
    report = json.loads(out)
    # every reply continues the template and was cut by the length limit: cut, not graded
    assert report["echoes"] == report["cut"] > 0 and report["executions"] == 0
    assert report["valid"] == 0 and report["errors"]["total"] == 0


def test_the_echo_watch_counts_only_replies_that_continue_the_prompt() -> None:
    conversation = Conversation(
        "r/t1", "r", "atomic", "Q1", (Query("r", "t1", "Is Ireland a republic?"),)
    )
    told: list[str] = []
    watch = EchoWatch("ollama:base", told.append)
    replies = [
        ("Yes", Answer.YES),
        ("Is Ireland a republic?<|im_end|>\n<|im_start|>user", Answer.CUT),
        ("Maybe, it depends", Answer.INVALID),  # unreadable, but no echo
        ("is ireland a", Answer.CUT),  # the question's start
        ("<start_of_turn>model\nYes", Answer.INVALID),
        ("Is Ireland a republic? Yes", Answer.INVALID),
    ]
    for raw, answer in replies:
        watch.see(conversation, Response("r/t1", 0, raw, answer))
    assert watch.count == ECHO_AFTER == 3 and len(told) == 1
    assert "openai-completions:MODEL@URL" in told[0]
