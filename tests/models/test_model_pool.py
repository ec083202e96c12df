"""One model on several endpoints: calls spread by free capacity, caps kept, a dead one rested."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from kontest_tui.domain.records import Conversation, Query
from kontest_tui.errors import ModelSpecError
from kontest_tui.models import pool as pool_module
from kontest_tui.models.pool import ModelPool
from kontest_tui.models.specs import open_model, parse_model_spec
from kontest_tui.run.executor import Executor, ExecutorConfig
from tests.models.model_test_servers import running_sim_server


@pytest.fixture(scope="module")
def second_sim_url() -> Iterator[str]:
    with running_sim_server() as url:
        yield url


def questions(count: int) -> list[Conversation]:
    return [
        Conversation(
            f"R{i}/t1",
            f"R{i}",
            "atomic",
            "Q1",
            (Query(f"R{i}", "t1", f"Does Realm{i} have a Fort{i}?"),),
        )
        for i in range(count)
    ]


def test_pool_spec_parses_caps_and_rejects_bad_ones() -> None:
    spec = parse_model_spec("ollama:m@127.0.0.1:9001*2, http://127.0.0.1:9002")
    assert spec.spec == "ollama:m@http://127.0.0.1:9001*2,http://127.0.0.1:9002"
    for bad in ("ollama:m@http://a:1*0,http://b:2", "ollama:m@,http://b:2", "openai:m@a:1*x,b:2"):
        with pytest.raises(ModelSpecError):
            parse_model_spec(bad)


async def test_calls_spread_over_endpoints_within_their_caps(sim_url, second_sim_url) -> None:  # noqa: ANN001
    pool = open_model(f"ollama:default@{sim_url}*2,{second_sim_url}*3", stream=False)
    single = open_model(f"ollama:default@{sim_url}", stream=False)
    assert isinstance(pool, ModelPool)
    conversations = questions(40)
    try:
        spread = Executor(
            pool, config=ExecutorConfig(concurrency=8, use_cache=False, share_answers=False)
        )
        await spread.run(conversations)
        alone = Executor(
            single, config=ExecutorConfig(concurrency=4, use_cache=False, share_answers=False)
        )
        await alone.run(conversations)
    finally:
        await pool.aclose()
        await single.aclose()
    first, second = pool.endpoints
    assert first.calls + second.calls == 40
    assert first.calls > 0 and second.calls > 0
    assert first.max_in_flight <= 2 and second.max_in_flight <= 3
    assert second.max_in_flight == 3  # the free capacity was used
    # the same model on every endpoint: the same answers as one endpoint alone
    assert {k: r.raw for k, r in spread.responses.items()} == {
        k: r.raw for k, r in alone.responses.items()
    }


async def test_a_dead_endpoint_rests_and_the_run_goes_on(
    sim_url: str, refused_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A rest longer than the run, so a busy machine (a run over 1 s) cannot end it.
    monkeypatch.setattr(pool_module, "REST_FIRST", 600.0)
    pool = open_model(f"ollama:default@{refused_url},{sim_url}", stream=False)
    assert isinstance(pool, ModelPool)
    config = ExecutorConfig(
        concurrency=2, use_cache=False, share_answers=False, backoff_base=0.001, backoff_max=0.01
    )
    try:
        assert "1 of 2 endpoints ready" in await pool.check()
        executor = Executor(pool, config=config)
        result = await executor.run(questions(20))
    finally:
        await pool.aclose()
    dead, alive = pool.endpoints
    assert not result.progress.errors  # every turn answered (the retries went elsewhere)
    assert all(r.error is None for r in executor.responses.values())
    assert dead.failures >= 1 and dead.calls <= 2  # rested after failing, not asked again
    assert alive.calls >= 20


@pytest.fixture(scope="module")
def slow_sim_url() -> Iterator[str]:
    """A sim server answering in about 50 ms (profile slow) where the other answers at once."""
    with running_sim_server("--profile", "slow") as url:
        yield url


def executor_config(concurrency: int = 8) -> ExecutorConfig:
    return ExecutorConfig(
        concurrency=concurrency,
        use_cache=False,
        share_answers=False,
        backoff_base=0.001,
        backoff_max=0.01,
    )


async def test_calls_go_to_the_endpoint_with_fewest_in_flight(slow_sim_url, sim_url) -> None:  # noqa: ANN001
    """No caps: a slow endpoint holds its calls longer, so it gets fewer of them (before:
    the calls were shared out by count, half to the slow one)."""
    pool = open_model(f"ollama:sim@{slow_sim_url},{sim_url}", stream=False)
    assert isinstance(pool, ModelPool)
    try:
        await Executor(pool, config=executor_config()).run(questions(80))
    finally:
        await pool.aclose()
    slow, fast = pool.endpoints
    assert slow.calls + fast.calls == 80
    # Shared out by count it would be 40 / 40; by calls in flight the fast one gets more
    # than twice as many even when a busy machine slows both.
    assert slow.calls * 2 < fast.calls


async def test_a_replica_answering_401_is_left_for_the_healthy_one(leaky_url, sim_url) -> None:  # noqa: ANN001
    """A replica without the key (401 on every call) while another is healthy: each call it
    fails is asked again at once on the other, no turn fails and the run does not stop."""
    pool = open_model(f"openai:default@{leaky_url}/deny/v1,{sim_url}/v1", stream=False)
    assert isinstance(pool, ModelPool)
    try:
        executor = Executor(pool, config=executor_config(4))
        result = await executor.run(questions(30))
    finally:
        await pool.aclose()
    denying, healthy = pool.endpoints
    assert not result.progress.errors and result.progress.failed == 0
    assert all(r.error is None for r in executor.responses.values())
    assert denying.failures >= 1 and healthy.calls >= 30
    assert sum(r.attempts for r in executor.responses.values()) == 30  # no executor retry


async def test_calls_that_hang_are_moved_off_their_endpoint(proxy_url, sim_url) -> None:  # noqa: ANN001
    """An endpoint that sends "Ye" then hangs: its calls are moved to the healthy one after
    the hang bound, answered whole there, and the hanging endpoint rests."""
    pool = open_model(f"ollama:sim@{proxy_url}/as/stall,{sim_url}")
    assert isinstance(pool, ModelPool)
    pool.hang_min, pool.hang_factor = 0.3, 1.0
    try:
        executor = Executor(pool, config=executor_config(4))
        async with asyncio.timeout(60):  # bounded: the test stops by itself
            result = await executor.run(questions(24))
    finally:
        await pool.aclose()
    hanging, healthy = pool.endpoints
    assert result.progress.failed == 0 and result.progress.stopped == {}
    assert all(r.error is None and r.raw != "Ye" for r in executor.responses.values())
    assert hanging.moved >= 1 and hanging.moved == hanging.calls
    assert healthy.calls >= 24
