"""Batch mode: a session asked through OpenAI Batch API files and `kontest sim batch`."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from kontest_tui.domain.records import Conversation, Query
from kontest_tui.domain.seeds import draw_seed
from kontest_tui.models.base import ChatOptions
from kontest_tui.run.batch import pending_turns, request_line
from kontest_tui.store import Store
from tests.run.run_toys import make_conversations, make_relations
from tests.support.cli import kontest


def only(folder: Path, pattern: str) -> Path:
    found = sorted(folder.glob(pattern))
    assert len(found) == 1, found
    return found[0]


def test_batch_phases_give_the_report_of_a_direct_run(tmp_path, capsys) -> None:  # noqa: ANN001
    db = tmp_path / "b.db"
    code, _, err = kontest(
        capsys, "run", "--kg", "places", "--limit", "10", "--db", db, "--batch-out", tmp_path
    )
    assert code == 0, err
    first = only(tmp_path, "*-turn1.jsonl")
    session = first.name.removesuffix("-turn1.jsonl")
    lines = [json.loads(line) for line in first.read_text().splitlines()]
    assert {line["url"] for line in lines} == {"/v1/chat/completions"}
    assert len({line["custom_id"] for line in lines}) == len(lines)  # one line per distinct chat
    assert all(line["body"]["messages"][0]["role"] == "system" for line in lines)
    with Store(db) as store:
        assert store.sessions.get(session)["status"] == "paused"
    assert kontest(capsys, "sim", "batch", first, tmp_path / "out1.jsonl")[0] == 0
    code, _, err = kontest(
        capsys, "run", "--resume", session, "--batch-in", tmp_path / "out1.jsonl", "--db", db
    )
    assert code == 0, err
    assert "stored 40 answers" in err  # 10 relations x (Q1, Q2, A1, B1)
    second = only(tmp_path, "*-turn2.jsonl")
    turns = [json.loads(line)["body"]["messages"] for line in second.read_text().splitlines()]
    assert all(
        [m["role"] for m in chat] == ["system", "user", "assistant", "user"] for chat in turns
    )
    assert kontest(capsys, "sim", "batch", second, tmp_path / "out2.jsonl")[0] == 0
    code, batch_report, err = kontest(
        capsys, "run", "--resume", session, "--batch-in", tmp_path / "out2.jsonl", "--db", db
    )
    assert code == 0, err
    code, direct_report, _ = kontest(
        capsys, "run", "--kg", "places", "--limit", "10", "--db", tmp_path / "d.db", "-q"
    )
    assert code == 0

    def body(text: str) -> list[str]:
        # the cache line may differ: a batch phase asks each distinct chat once, while the
        # direct run shares a repeated second turn only when both are in flight at once
        # (here two relations ending at a "Garnich" ask one identical chat)
        # (batch files carry no log-probabilities: a batch session has no margins)
        return [
            line
            for line in text.splitlines()
            if not line.startswith(("Session", "Answers from cache", "Margins"))
        ]

    assert body(batch_report) == body(direct_report)
    with Store(db) as batch, Store(tmp_path / "d.db") as direct:
        assert batch.sessions.get(session)["status"] == "done"
        assert len(batch.verdicts.load(session)) == len(
            direct.verdicts.load(direct.sessions.ids()[0])
        )

        def answers(store: Store, session_id: str) -> dict:
            return {key: r.raw for key, r in store.responses.load(session_id).items()}

        assert answers(batch, session) == answers(direct, direct.sessions.ids()[0])


def test_failed_batch_lines_are_failed_turns_and_stray_lines_ignored(tmp_path, capsys) -> None:  # noqa: ANN001
    db = tmp_path / "b.db"
    assert (
        kontest(
            capsys, "run", "--kg", "places", "--limit", "2", "--db", db, "--batch-out", tmp_path
        )[0]
        == 0
    )
    first = only(tmp_path, "*-turn1.jsonl")
    session = first.name.removesuffix("-turn1.jsonl")
    assert kontest(capsys, "sim", "batch", first, tmp_path / "out.jsonl")[0] == 0
    results = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    results[0] = {
        "custom_id": results[0]["custom_id"],
        "response": None,
        "error": {"code": "server_error", "message": "engine failed"},
    }
    results.append({"custom_id": "not-ours", "response": {"status_code": 200, "body": {}}})
    (tmp_path / "out.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results))
    code, _, err = kontest(
        capsys, "run", "--resume", session, "--batch-in", tmp_path / "out.jsonl", "--db", db
    )
    assert code == 0, err
    assert "failed turns" in err and "1 lines for no pending turn ignored" in err
    with Store(db) as store:
        failed = [r for r in store.responses.rows(session) if r["error"]]
    assert failed and all("engine failed" in str(r["error"]) for r in failed)


def test_bad_batch_input_is_one_error_line(tmp_path, capsys) -> None:  # noqa: ANN001
    db = tmp_path / "b.db"
    (tmp_path / "r.jsonl").write_text("")
    code, _, err = kontest(
        capsys, "run", "--kg", "places", "--batch-in", tmp_path / "r.jsonl", "--db", db
    )
    assert (
        code == 2
        and err == "kontest: error: --batch-in needs --resume SESSION (the session it answers)\n"
    )
    assert (
        kontest(
            capsys, "run", "--kg", "places", "--limit", "2", "--db", db, "--batch-out", tmp_path
        )[0]
        == 0
    )
    first = only(tmp_path, "*-turn1.jsonl")
    session = first.name.removesuffix("-turn1.jsonl")
    good = json.dumps({"custom_id": "x", "response": None, "error": None})
    for bad in ["{not json", "[1, 2]", '{"custom_id": 3}', good + "\n{", "\udcff"]:
        (tmp_path / "bad.jsonl").write_text(bad, encoding="utf-8", errors="surrogateescape")
        code, out, err = kontest(
            capsys, "run", "--resume", session, "--batch-in", tmp_path / "bad.jsonl", "--db", db
        )
        assert code == 2 and err.startswith("kontest: error: ") and err.count("\n") == 1, err
        for request_file in (tmp_path / "bad.jsonl", tmp_path / "missing.jsonl"):
            code, _, err = kontest(capsys, "sim", "batch", request_file, tmp_path / "o.jsonl")
            assert code == 2 and err.startswith("kontest: error: ") and err.count("\n") == 1, err
    code, _, err = kontest(
        capsys, "run", "--resume", session, "--batch-in", tmp_path / "missing.jsonl", "--db", db
    )
    assert code == 2 and "cannot read batch results" in err
    with Store(db) as store:  # nothing stored from the bad files
        assert list(store.responses.rows(session)) == []
        assert store.sessions.get(session)["status"] == "paused"


def test_result_lines_of_the_engines(tmp_path: Path) -> None:
    from kontest_tui.run.batch import BatchResult, read_results

    completion = {
        "choices": [{"message": {"role": "assistant", "content": "Yes."}}],
        "usage": {"completion_tokens": 2},
    }
    lines = [
        {"custom_id": "a", "response": {"status_code": 200, "body": completion}, "error": None},
        {"custom_id": "b", "response": completion},  # the completion without an envelope
        {"custom_id": "c", "response": {"status_code": 400, "body": None}, "error": "bad model"},
        {"custom_id": "d", "response": {"status_code": 500, "body": None}, "error": None},
        {"custom_id": "e", "response": {"status_code": 200, "body": {"choices": []}}},
    ]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + "\n")
    assert read_results(path) == {
        "a": BatchResult("Yes.", 2, None),
        "b": BatchResult("Yes.", 2, None),
        "c": BatchResult(None, 0, "batch error: HTTP 400: bad model"),
        "d": BatchResult(None, 0, "batch error: HTTP 500"),
        "e": BatchResult(None, 0, "batch error: no message in the response body"),
    }


def test_next_phase_without_the_store_is_the_store_s(tmp_path: Path) -> None:
    from kontest_tui.kg.io import load_graph
    from kontest_tui.run.api import SessionSpec, create_session
    from kontest_tui.run.batch import (
        BatchResult,
        _pending,
        ingest_results,
        next_turns,
        read_results,
    )

    with Store(tmp_path / "b.db") as store:
        session = create_session(store, SessionSpec(load_graph("places"), limit=6))
        conversations = store.relations.load_conversations(session)
        pending = _pending(store, session, conversations)
        keys = sorted({turn.key for turn in pending})
        completion = {"choices": [{"message": {"content": "Yes \udcff"}}]}  # a lone surrogate
        lines = [
            {"custom_id": key, "response": {"status_code": 200, "body": completion}}
            for key in keys[1:]
        ]  # keys[0]: no line, stays pending
        lines[0]["response"] = {"status_code": 500}  # keys[1]: a failed turn
        (tmp_path / "r.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
        results = read_results(tmp_path / "r.jsonl")
        assert results[keys[2]] == BatchResult("Yes \ufffd", 0, None)  # as the store keeps it
        ingest_results(store, session, pending, results, "sim")
        following = [
            (t.conversation.id, t.turn, t.messages, t.key)
            for t in next_turns(pending, results, "sim")
        ]
        stored = [
            (t.conversation.id, t.turn, t.messages, t.key)
            for t in _pending(store, session, conversations)
        ]
        assert following == stored and {turn for _, turn, _, _ in stored} == {0, 1}


def test_error_texts_of_openai_and_vllm_are_kept_and_scrubbed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenAI's request errors (`error: {code, message}`, a non-200 body `{"error": {...}}`)
    and vLLM's ErrorResponse (`{"object": "error", "message", "type", "code"}`, or nested
    under "error") keep their text; a key echoed in one is masked, a line with the key in a
    Basic credential (base64 of user:key) and percent-encoded too."""
    from kontest_tui.run.batch import read_results

    key = "sk-batchsecret0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    lines = [
        {
            "custom_id": "openai",
            "response": None,
            "error": {"code": "batch_expired", "message": "expired"},
        },
        {
            "custom_id": "openai-body",
            "response": {
                "status_code": 401,
                "body": {
                    "error": {
                        "message": f"Incorrect API key provided: {key}",
                        "type": "invalid_request_error",
                        "code": "invalid_api_key",
                    }
                },
            },
            "error": None,
        },
        {
            "custom_id": "vllm",
            "response": {"status_code": 400, "request_id": "vllm-batch-1"},
            "error": {
                "object": "error",
                "message": "max_tokens is too large",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            },
        },
        {
            "custom_id": "vllm-new",
            "response": {"status_code": 404},
            "error": {
                "error": {
                    "message": "The model `x` does not exist.",
                    "type": "NotFoundError",
                    "code": 404,
                }
            },
        },
        {"custom_id": "echo", "response": None, "error": f"bad key {key.replace('-', '%2D')}"},
    ]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    errors = {key_: result.error for key_, result in read_results(path).items()}
    assert errors["openai"] == "batch error: batch_expired: expired"
    assert (
        errors["openai-body"] is not None and "Incorrect API key provided" in errors["openai-body"]
    )
    assert errors["openai-body"].startswith("batch error: HTTP 401: invalid_api_key: ")
    assert errors["vllm"] == "batch error: HTTP 400: 400: max_tokens is too large"
    assert errors["vllm-new"] == "batch error: HTTP 404: 404: The model `x` does not exist."
    assert all(key not in text and "batchsecret" not in text for text in errors.values() if text)
    assert "None" not in "".join(text or "" for text in errors.values())


def test_duplicate_custom_ids_are_refused(tmp_path: Path) -> None:
    from kontest_tui.errors import InvalidInputError
    from kontest_tui.run.batch import read_results

    completion = {"choices": [{"message": {"content": "Yes"}}]}
    line = {"custom_id": "a", "response": {"status_code": 200, "body": completion}}
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(line) + "\n" + json.dumps(line) + "\n")
    with pytest.raises(InvalidInputError, match="result 2 repeats custom_id a"):
        read_results(path)


def test_a_completions_session_writes_completions_lines_and_gets_the_direct_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A completions-mode session's batch lines are /v1/completions with the few-shot prompt,
    its stop and max tokens; answered by `sim batch`, they give the answers of a direct
    completions run against `sim serve` (before: chat lines, 0 valid)."""
    from kontest_tui.models.completion_prompt import load_completion_prompt
    from tests.models.model_test_servers import running_sim_server

    with running_sim_server() as url:
        spec = f"openai-completions:default@{url}/v1"
        db = tmp_path / "b.db"
        code, _, err = kontest(
            capsys,
            "run",
            "--kg",
            "places",
            "--limit",
            "3",
            "--model",
            spec,
            "--db",
            db,
            "--batch-out",
            tmp_path,
        )
        assert code == 0, err
        first = only(tmp_path, "*-turn1.jsonl")
        session = first.name.removesuffix("-turn1.jsonl")
        lines = [json.loads(line) for line in first.read_text().splitlines()]
        prompt = load_completion_prompt()
        assert {line["url"] for line in lines} == {"/v1/completions"}
        assert all(line["body"]["prompt"].endswith("\nAnswer:") for line in lines)
        assert all(line["body"]["stop"] == list(prompt.stop) for line in lines)
        assert all(line["body"]["max_tokens"] == prompt.max_tokens for line in lines)
        for phase in (1, 2):
            request = only(tmp_path, f"*-turn{phase}.jsonl")
            out = tmp_path / f"out{phase}.jsonl"
            assert kontest(capsys, "sim", "batch", request, out)[0] == 0
            code, _, err = kontest(
                capsys, "run", "--resume", session, "--batch-in", out, "--db", db
            )
            assert code == 0, err
        code, _, err = kontest(
            capsys,
            "run",
            "--kg",
            "places",
            "--limit",
            "3",
            "--model",
            spec,
            "--db",
            tmp_path / "d.db",
            "-q",
        )
        assert code == 0, err
    with Store(db) as batch, Store(tmp_path / "d.db") as direct:
        batch_answers = {k: r.answer for k, r in batch.responses.load(session).items()}
        direct_id = direct.sessions.ids()[0]
        direct_answers = {k: r.answer for k, r in direct.responses.load(direct_id).items()}
    assert batch_answers == direct_answers
    assert sum(answer.value != "invalid" for answer in batch_answers.values()) > 0


def test_models_without_a_batch_engine_are_refused_in_one_line_storing_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "b.db"
    code, _, err = kontest(
        capsys,
        "run",
        "--kg",
        "places",
        "--limit",
        "2",
        "--model",
        "ollama:llama3",
        "--db",
        db,
        "--batch-out",
        tmp_path,
    )
    assert code == 2 and err.count("\n") == 1
    assert "ollama: models have no batch engine" in err
    assert not db.exists() and not list(tmp_path.glob("*.jsonl"))


def test_asking_failed_turns_again_writes_a_new_phase_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "b.db"
    assert (
        kontest(
            capsys, "run", "--kg", "places", "--limit", "2", "--db", db, "--batch-out", tmp_path
        )[0]
        == 0
    )
    first = only(tmp_path, "*-turn1.jsonl")
    session = first.name.removesuffix("-turn1.jsonl")
    kept = first.read_text()
    failed = [
        {"custom_id": json.loads(line)["custom_id"], "response": {"status_code": 500}}
        for line in kept.splitlines()
    ]
    (tmp_path / "out.jsonl").write_text("".join(json.dumps(r) + "\n" for r in failed))
    assert (
        kontest(
            capsys, "run", "--resume", session, "--batch-in", tmp_path / "out.jsonl", "--db", db
        )[0]
        == 1
    )
    code, _, err = kontest(capsys, "run", "--resume", session, "--batch-out", tmp_path, "--db", db)
    assert code == 0, err
    assert first.read_text() == kept  # the first phase's file as it was
    again = only(tmp_path, "*-turn1-2.jsonl")
    assert len(again.read_text().splitlines()) == len(kept.splitlines())


@pytest.mark.parametrize("kind", ["openai-completions", "openai"])
def test_completions_lines_say_which_batch_engines_run_them(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Completions-mode lines are right for OpenAI's Batch API, but vLLM's run-batch takes
    chat lines (and embeddings, score, rerank) only: writing them says so; chat lines not."""
    code, _, err = kontest(
        capsys,
        "run",
        "--kg",
        "places",
        "--limit",
        "2",
        "--model",
        f"{kind}:m@http://127.0.0.1:9/v1",
        "--db",
        tmp_path / "b.db",
        "--batch-out",
        tmp_path,
    )
    assert code == 0, err
    notes = [line for line in err.splitlines() if line.startswith("kontest: note:")]
    if kind == "openai":
        assert notes == []
    else:
        assert len(notes) == 1 and "/v1/completions lines" in notes[0]
        assert (
            "vLLM's run-batch does not" in notes[0] and "OpenAI's Batch API runs them" in notes[0]
        )


@pytest.mark.parametrize(
    ("options", "lines"),
    [
        (ChatOptions(temperature=0.0, seed=7), 2),  # A's and B's first turns are Q1's, Q2's
        (ChatOptions(temperature=0.8, seed=7), 4),  # four seeds: four draws
        (ChatOptions(temperature=0.8), 4),  # unseeded samples: each its own draw
    ],
)
def test_a_batch_line_is_shared_by_conversations_only_when_they_ask_the_same_draw(
    options: ChatOptions, lines: int
) -> None:
    conversations = make_conversations(make_relations(1))
    pending = list(pending_turns(conversations, {}, options, "openai:m@http://127.0.0.1:9/v1"))
    assert len(pending) == 4 and len({turn.key for turn in pending}) == lines
    if options.seed is not None:
        sent = {request_line(turn, "m", "max_tokens")["body"]["seed"] for turn in pending}
        assert sent == {draw_seed(7, conversation.id) for conversation in conversations}


def test_a_conversation_s_own_system_prompt_keeps_the_session_s_other_options() -> None:
    """The prompt is added to the session's options, none of which is lost (`think` and
    the token limit are part of the request's key)."""
    question = Query("R", "fc", "Which is in Ireland? A) Ulster B) Bavaria")
    conversation = Conversation("R/fc", "R", "factcheck", "FC", (question,), system_prompt="Pick.")
    options = ChatOptions(temperature=0.0, max_tokens=9, think=True)
    (turn,) = pending_turns([conversation], {}, options, "openai:m@http://127.0.0.1:9/v1")
    assert turn.options == replace(options, system_prompt="Pick.")
