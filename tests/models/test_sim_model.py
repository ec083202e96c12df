"""The in-process simulated model: profiles, determinism, question recognition, faults, errors."""

from __future__ import annotations

import asyncio
import random

import pytest

from kontest_tui.domain.answers import parse_answer
from kontest_tui.domain.margins import LOW_MARGIN
from kontest_tui.domain.records import Answer
from kontest_tui.errors import ModelError, ModelSpecError
from kontest_tui.models.base import ChatModel, ChatOptions, ChatRequest, Message
from kontest_tui.models.sim import (
    MEGABYTE,
    SimulatedModel,
    decide_answer,
    decide_fault,
    list_profiles,
    load_profile,
    parse_question,
    split_tokens,
)


def request(*questions: str, seed: int | None = None, max_tokens: int | None = None) -> ChatRequest:
    messages = []
    for index, question in enumerate(questions):
        if index:
            messages.append(Message("assistant", "Yes."))
        messages.append(Message("user", question))
    return ChatRequest(tuple(messages), ChatOptions(seed=seed, max_tokens=max_tokens))


def test_builtin_profiles_load_and_differ() -> None:
    names = list_profiles()
    for name in ("default", "careful", "yes-sayer", "forgetful", "flaky", "slow", "hostile"):
        assert name in names
        assert load_profile(name).name == name
    assert load_profile("careful").knowledge > load_profile("default").knowledge
    assert load_profile("slow").first_byte_ms == 50.0
    # extends = "default": inherited styles, overridden faults
    assert load_profile("flaky").yes_styles == load_profile("default").yes_styles
    assert load_profile("flaky").faults.rate_limit > 0


def test_bad_profiles_raise_one_line(tmp_path) -> None:
    with pytest.raises(ModelSpecError, match="unknown simulated-model profile 'nope'"):
        load_profile("nope")
    bad = tmp_path / "bad.toml"
    bad.write_text('extends = "default"\nknowledge = "lots"\n')
    with pytest.raises(ModelSpecError, match="knowledge must be a number"):
        load_profile(str(bad))
    custom = tmp_path / "custom.toml"
    custom.write_text(
        'extends = "default"\nname = "custom"\nknowledge = 1.0\nyes_bias = 0.0\n'
        "unsure_rate = 0.0\nflip_rate = 0.0\n[template_error]\nt1 = 0.0\nt2 = 0.0\n"
    )
    profile = load_profile(str(custom))
    assert profile.name == "custom" and profile.knowledge == 1.0


def test_parse_question_recognises_sample_templates() -> None:
    parsed = parse_question("Is there a Kinawley located in Ulster?")
    assert parsed is not None
    assert (parsed.template_id, parsed.parent, parsed.child) == ("t3", "Ulster", "Kinawley")
    parsed = parse_question("Does  Ireland have a\nUlster?")
    assert parsed is not None and (parsed.template_id, parsed.parent, parsed.child) == (
        "t1",
        "Ireland",
        "Ulster",
    )
    parsed = parse_question('Is "Whiskey Glasses" a song by Morgan Wallen?')
    assert parsed is not None
    assert (parsed.template_id, parsed.relation_type) == ("t2", "artist->song")
    assert (parsed.parent, parsed.child) == ("Morgan Wallen", "Whiskey Glasses")
    assert parse_question("What is the capital of France?") is None


def test_pattern_words_are_in_every_question_the_pattern_matches(isolated_home) -> None:
    """The words a template pattern is first tested by (an ASCII question lacking one is not
    tried) are in each question it matches, realised variants included: a plural verb, the
    article before a slot dropped or changed, no "?" after a closing quote."""
    from kontest_tui import paths
    from kontest_tui.models.sim.model import _template_patterns

    folder = paths.config_dir() / "templates"
    folder.mkdir(parents=True)
    (folder / "articles.toml").write_text(  # realised, an article before each slot
        'domain = "articles"\ndefault_type = "contains"\nrealise = true\n'
        '[[templates]]\nid = "t1"\n[templates.texts]\n'
        'contains = "Does the {parent} hold a {child}?"\n'
        '[[templates]]\nid = "t2"\n[templates.texts]\n'
        'contains = "Is the {child} found in the album \\"{parent}\\"?"\n'
    )
    patterns = _template_patterns()
    assert sum("(?:(?:a|an|the)" in pattern.pattern for pattern, *_ in patterns) == 2
    variants = 0
    for pattern, _, _, _, words in patterns:
        assert words, pattern.pattern
        for parent, child in (("Ulster", "Kinawley"), ("The Moon", "an Apple")):
            for filled in _fillings(pattern.pattern, parent, child):
                if pattern.fullmatch(filled):
                    variants += 1
                    lowered = filled.lower()
                    assert all(word in lowered for word in words), (filled, words)
    assert variants > 2 * len(patterns)  # realised variants were made and matched


def _fillings(regex: str, parent: str, child: str) -> list[str]:
    """Texts a template regex (model._pattern_for) matches: each alternative of its opening
    verb, with and without its optional article and optional "?", placeholders filled."""
    import re

    texts = [regex]
    for optional in (r"(?:(?:a|an|the)\s+)?", r"\??"):
        texts = [t for text in texts for t in (text.replace(optional, ""), text)]
    opened: list[str] = []
    for text in texts:
        verbs = re.match(r"\(\?:(\w+)\|(\w+)\)", text)
        heads = [verbs.group(1), verbs.group(2)] if verbs else [""]
        rest = text[verbs.end() :] if verbs else text
        opened += [head + rest for head in heads]
    filled = []
    for text in opened:
        text = text.replace("(?P<parent>.+?)", parent).replace("(?P<child>.+?)", child)
        text = text.replace(r"\s+", " ").replace(r"\?", "?").replace("\\", "")
        filled += [text, text.upper(), text.lower()]
    return filled


def test_knowledge_is_per_relation_not_per_wording() -> None:
    # A perfect-recall profile with no template errors answers every paraphrase alike.
    profile = load_profile("default")
    import dataclasses

    plain = dataclasses.replace(
        profile, unsure_rate=0.0, template_error={}, flip_rate=0.0, knowledge=0.5, yes_bias=0.0
    )
    for index in range(40):
        parent, child = f"Land{index}", f"Town{index}"
        a = decide_answer(plain, 3, [f"Does {parent} have a {child}?"])
        b = decide_answer(plain, 3, [f"Is there a {child} in {parent}?"])
        assert (a in plain.yes_styles) == (b in plain.yes_styles)


def test_decisions_are_deterministic_and_seeded() -> None:
    profile = load_profile("default")
    questions = [f"Does Country{i} have a City{i}?" for i in range(200)]
    first = [decide_answer(profile, 0, [q]) for q in questions]
    assert first == [decide_answer(profile, 0, [q]) for q in questions]
    assert first != [decide_answer(profile, 1, [q]) for q in questions]
    yes = sum(answer in profile.yes_styles for answer in first)
    # knowledge 0.78 + yes-bias on the rest, minus template errors: clearly a mixed model
    assert 120 < yes < 195


async def test_order_and_concurrency_do_not_change_answers() -> None:
    chats: list[tuple[str, ...]] = [(f"Does A{i} have a B{i}?",) for i in range(30)]
    chats += [(f"Does A{i} have a B{i}?", f"Is there a B{i} in A{i}?") for i in range(30)]
    model = SimulatedModel("default", seed=5)
    in_order = [(await model.chat(request(*chat))).text for chat in chats]
    shuffled = list(enumerate(chats))
    random.Random(1).shuffle(shuffled)
    other = SimulatedModel("default", seed=5)
    results = await asyncio.gather(*(other.chat(request(*chat)) for _, chat in shuffled))
    by_index = {index: result.text for (index, _), result in zip(shuffled, results, strict=True)}
    assert [by_index[i] for i in range(len(chats))] == in_order


async def test_the_instance_seed_is_the_model_and_a_request_seed_only_samples() -> None:
    """The instance seed (--model-seed) picks the model; a request's own seed changes nothing
    at temperature 0 and, at temperature > 0, draws a sample where the model is unsure: the
    same seed repeats it, another seed may differ, and every answer of a sure fact holds."""
    questions = [f"Does X{i} have a Y{i}?" for i in range(50)]
    model = SimulatedModel("default", seed=0)
    other = SimulatedModel("default", seed=9)
    plain = [(await model.chat(request(q))).text for q in questions]
    assert [(await model.chat(request(q, seed=9))).text for q in questions] == plain
    assert [(await other.chat(request(q))).text for q in questions] != plain

    VALID = (Answer.YES, Answer.NO)

    def hot(q: str, seed: int) -> ChatRequest:
        return ChatRequest((Message("user", q),), ChatOptions(temperature=0.5, seed=seed))

    questions = [f"Does X{i} have a Y{i}?" for i in range(300)]
    first = [await model.chat(hot(q, 1)) for q in questions]
    again = [(await model.chat(hot(q, 1))).text for q in questions]
    second = [(await model.chat(hot(q, 2))).text for q in questions]
    assert [r.text for r in first] == again  # a rerun reproduces the draw
    said = [parse_answer(r.text) for r in first]
    differ = {i for i, r in enumerate(second) if parse_answer(r) in VALID and said[i] in VALID}
    differ = {i for i in differ if parse_answer(second[i]) != said[i]}
    unsure = {i for i, r in enumerate(first) if abs((r.p_yes or 0.5) - 0.5) < LOW_MARGIN}
    sure = set(range(len(questions))) - unsure
    assert differ & unsure  # two draws differ where the model is unsure
    assert len(differ & unsure) / len(unsure) > 3 * len(differ & sure) / len(sure)


async def test_tokens_stream_in_pieces() -> None:
    model = SimulatedModel("default")
    pieces: list[str] = []
    # find a multi-word answer
    for index in range(200):
        pieces.clear()
        result = await model.chat(request(f"Does P{index} have a Q{index}?"), pieces.append)
        if " " in result.text:
            break
    assert len(pieces) >= 3
    assert "".join(pieces) == result.text
    assert result.tokens == len(pieces)
    assert split_tokens("Yes, that's right.") == ["Yes", ",", " that's", " right", "."]
    assert split_tokens("Yes, that's right.", limit=2) == ["Yes", ","]


def test_sim_model_satisfies_protocol() -> None:
    assert isinstance(SimulatedModel(), ChatModel)
    assert SimulatedModel().spec == "sim"
    assert SimulatedModel("careful").spec == "sim:careful"


def _question_with_fault(profile_name: str, fault: str, prefix: str) -> str:
    profile = load_profile(profile_name)
    for index in range(5000):
        question = f"Does {prefix}{index} have a Town{index}?"
        if decide_fault(profile, 0, [question], 0) == fault:
            return question
    raise AssertionError(f"no question with fault {fault}")


@pytest.mark.parametrize("fault", ["rate_limit", "server_error", "dropped_stream"])
async def test_faults_are_retryable_and_end(fault: str) -> None:
    model = SimulatedModel("flaky")
    question = _question_with_fault("flaky", fault, f"inproc-{fault}-")
    tokens: list[str] = []
    with pytest.raises(ModelError) as caught:
        await model.chat(request(question), tokens.append)
    assert caught.value.retryable
    if fault == "rate_limit":
        assert caught.value.retry_after == pytest.approx(0.2)
    # max_repeats = 2: attempt 2 never faults, so a retrying caller always gets an answer
    answers = []
    for _ in range(3):
        try:
            answers.append((await model.chat(request(question))).text)
        except ModelError:
            continue
    assert answers, "faults must not repeat forever"
    assert answers[-1] == decide_answer(load_profile("flaky"), 0, [question])


async def test_hostile_answers_in_process() -> None:
    model = SimulatedModel("hostile")
    seen: set[str] = set()
    for index in range(60):
        text = (await model.chat(request(f"Does H{index} have a G{index}?"))).text
        if "\x1b[" in text:
            seen.add("ansi")
        if "[bold red]" in text:
            seen.add("markup")
        if len(text) > len(MEGABYTE):
            seen.add("megabyte")
        if "\ufffd" in text:
            seen.add("invalid")
            assert "\udcff" not in text  # what a client sees after decoding with replacement
    assert seen == {"ansi", "markup", "megabyte", "invalid"}


def test_user_template_files_are_recognised(isolated_home) -> None:
    from kontest_tui import paths

    assert parse_question("Would Atlantis ever contain Poseidonia?") is None
    folder = paths.config_dir() / "templates"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "myths.toml").write_text(
        'domain = "myths"\ndefault_type = "contains"\n'
        '[[templates]]\nid = "t1"\n[templates.texts]\n'
        'contains = "Would {parent} ever contain {child}?"\n'
        '[[templates]]\nid = "t2"\n[templates.texts]\n'
        'contains = "Is {child} a part of {parent}?"\n'
    )
    parsed = parse_question("Would Atlantis ever contain Poseidonia?")
    assert parsed is not None
    assert (parsed.template_id, parsed.parent, parsed.child) == ("t1", "Atlantis", "Poseidonia")


def test_broken_user_template_file_does_not_hide_the_others(isolated_home) -> None:
    from kontest_tui import paths

    folder = paths.config_dir() / "templates"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "broken.toml").write_text("this is [not toml")
    parsed = parse_question("Is there a Kinawley in Ulster?")
    assert parsed is not None and parsed.template_id == "t2"


def test_json_boolean_postfix_gets_true_or_false() -> None:
    import dataclasses

    profile = dataclasses.replace(load_profile("default"), unsure_rate=0.0)
    for index in range(30):
        question = f"Does Realm{index} have a Fort{index}?"
        plain = decide_answer(profile, 0, [question])
        json_answer = decide_answer(profile, 0, [f"{question} Return a JSON Boolean."])
        assert json_answer == ("true" if plain in profile.yes_styles else "false")


def test_only_a_profile_without_latency_never_waits() -> None:
    # The executor calls a model that never waits without a timeout around it.
    assert SimulatedModel("default").never_waits
    assert not SimulatedModel("slow").never_waits  # 50 ms before the first byte
    assert not SimulatedModel("flaky").never_waits  # slow first bytes now and then
