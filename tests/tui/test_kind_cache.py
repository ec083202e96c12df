"""The wizard's kind-building cache (tui.kind_cache): keys, staleness, work in progress."""

from __future__ import annotations

from kontest_tui.domain.records import Conversation, Query
from kontest_tui.tui.kind_cache import COUNTING, KindCache, KindChoices
from kontest_tui.tui.kind_choices import AnnotatedQuestions

CHOICES = KindChoices(
    ("t1", "t2"),
    strength=2,
    postfix=False,
    variant_limit=None,
    question_types=("yes-no", "wh"),
    rules=("negation",),
)


def conversation(conversation_id: str) -> Conversation:
    return Conversation(conversation_id, "a>b", "atomic", "Q1", (Query("a>b", "t1", "q?"),))


def test_a_key_holds_what_the_kind_depends_on_and_nothing_else() -> None:
    cache = KindCache()
    assert cache.key("kontest", CHOICES) == ("kontest", 0, ("t1", "t2"))
    assert cache.key("variant", CHOICES) == ("variant", 0, ("t1", "t2"), 2, False, None)
    assert cache.key("factcheck", CHOICES) == ("factcheck", 0, ("t1", "t2"), ("yes-no", "wh"))
    assert cache.key("logic", CHOICES) == ("logic", 0, ("t1", "t2"), ("negation",))
    # Another strength changes the variants' key only.
    stronger = KindChoices(
        ("t1", "t2"), strength=3, question_types=("yes-no", "wh"), rules=("negation",)
    )
    assert cache.key("variant", stronger) != cache.key("variant", CHOICES)
    assert cache.key("logic", stronger) == cache.key("logic", CHOICES)
    # A questions file depends on its path and the variant options, not on the KG.
    assert cache.key("annotation", CHOICES, "q.jsonl") == ("annotation", "q.jsonl", 2, False, None)
    cache.new_graph()
    assert cache.key("annotation", CHOICES, "q.jsonl") == ("annotation", "q.jsonl", 2, False, None)
    assert cache.key("kontest", CHOICES) == ("kontest", 1, ("t1", "t2"))


def test_pending_building_built_and_failed() -> None:
    cache = KindCache()
    logic, kontest = cache.key("logic", CHOICES), cache.key("kontest", CHOICES)
    assert cache.is_pending(logic) and cache.conversations(logic) is None
    cache.start([logic, kontest])
    assert not cache.is_pending(logic)  # a worker builds it: not started twice
    assert cache.note(logic) == COUNTING
    built = [conversation("c1"), conversation("c2")]
    cache.finish(logic, built)
    cache.finish(kontest, None, "no templates")
    assert cache.conversations(logic) == built and not cache.building
    assert cache.conversations(kontest) is None and cache.note(kontest) == "no templates"
    assert not cache.is_pending(kontest)  # a failure is not retried for the same choices


def test_a_new_graph_makes_everything_stale_and_variants_can_be_forgotten() -> None:
    cache = KindCache()
    variant, logic = cache.key("variant", CHOICES), cache.key("logic", CHOICES)
    cache.finish(variant, [conversation("v")])
    cache.finish(logic, [conversation("l")])
    cache.forget_kind("variant")  # synonym pins and bans change the variants
    assert cache.conversations(variant) is None and cache.conversations(logic) is not None
    cache.new_graph()
    assert cache.conversations(logic) is None and cache.is_pending(cache.key("logic", CHOICES))
    assert cache.key("logic", CHOICES) != logic


def test_questions_files_read_again_and_failed_loads() -> None:
    cache = KindCache()
    key = cache.key("annotation", CHOICES, "q.jsonl")
    loaded = AnnotatedQuestions("q.jsonl", [conversation("q1/v0")], ["q.jsonl:2: no answer"])
    cache.finish_questions(key, loaded)
    assert cache.conversations(key) == loaded.conversations and cache.questions[key] is loaded
    cache.restart(key)  # Load again: the file may have changed
    assert key in cache.building and cache.conversations(key) is None
    cache.finish_questions(key, None, "no such file", keep_error=False)
    assert cache.is_pending(key)  # a failed Load is not kept: the next Load reads it again
    cache.start([key])
    cache.finish_questions(key, None, "no usable question")
    assert cache.note(key) == "no usable question" and not cache.is_pending(key)
