"""Explanation cards (report.explain): each error kind told in plain sentences, worked by hand.

The paper's Kinawley example (Ireland > Ulster > Kinawley) with the places templates; the
verdicts come from the real oracles over hand-written replies, and each card's questions,
replies, readings and reasons are checked against what the replies say.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from kontest_tui.domain.answers import parse_answer
from kontest_tui.domain.extras import (
    ChoiceOption,
    FactcheckExtras,
    LogicExtras,
    PremiseExtras,
    VariantExtras,
)
from kontest_tui.domain.records import Answer, Conversation, Query, Response, TestKind
from kontest_tui.generate.conversations import build_conversations
from kontest_tui.generate.relations import extract_relations
from kontest_tui.generate.templates import template_set_for_domain
from kontest_tui.kg.graph import Edge, KnowledgeGraph, Node
from kontest_tui.kg.names import NodeNames
from kontest_tui.oracles.metamorphic import find_metamorphic_verdicts
from kontest_tui.oracles.ontological import find_ontological_verdicts
from kontest_tui.oracles.variant import find_variant_verdicts
from kontest_tui.probes.evaluate import evaluate_probes
from kontest_tui.report.explain import CardEvidence, build_card, evidence_from_records
from kontest_tui.report.explain_render import (
    card_svg,
    card_text,
    card_to_rich,
    cards_html,
    cards_markdown,
)

CODES = re.compile(r"\b(Q1|Q2|A1|A2|B1|B2|t1|t2|t3)\b")


def kinawley() -> KnowledgeGraph:
    nodes = {
        "Q27": Node("Q27", "Ireland", type="country"),
        "Q190": Node("Q190", "Ulster", type="region"),
        "Q6413": Node("Q6413", "Kinawley", type="locality"),
    }
    return KnowledgeGraph("kinawley", "places", nodes, [Edge("Q27", "Q190"), Edge("Q190", "Q6413")])


KG = kinawley()
TEMPLATES = template_set_for_domain("places", "paper")  # the paper's Figure 1 questions
RELATIONS = extract_relations(KG)
CONVERSATIONS = build_conversations(KG, RELATIONS, TEMPLATES)
NAMES = NodeNames(KG)


def conversation(relation_id: str, label: str) -> Conversation:
    return next(c for c in CONVERSATIONS if c.relation_id == relation_id and c.label == label)


def respond(replies: dict[tuple[str, str], list[str]]) -> dict[tuple[str, int], Response]:
    """{(relation id, label): [reply per turn]} -> responses parsed as a run parses them."""
    responses = {}
    for (relation_id, label), texts in replies.items():
        found = conversation(relation_id, label)
        for turn, raw in enumerate(texts):
            responses[(found.id, turn)] = Response(found.id, turn, raw, parse_answer(raw))
    return responses


def evidence(
    responses, conversations=CONVERSATIONS, relations=RELATIONS, verdicts=()
) -> CardEvidence:
    return evidence_from_records(
        verdicts,
        conversations,
        responses,
        relations,
        NAMES,
        template_set=TEMPLATES,
        session="S1",
        model="sim",
    )


def errors_of(verdicts, oracle):
    return [v for v in verdicts if v.oracle == oracle and v.error]


def all_formats(card) -> list[str]:
    return [card_text(card), cards_markdown([card]), cards_html([card]), card_svg(card)]


def assert_no_codes(card) -> None:
    for rendered in (card_text(card), cards_markdown([card]), cards_html([card])):
        assert not CODES.search(rendered), CODES.search(rendered)


def kontest_cards(replies, oracle):
    responses = respond(replies)
    answers = {key: r.answer for key, r in responses.items()}
    verdicts = find_metamorphic_verdicts(CONVERSATIONS, answers) + find_ontological_verdicts(
        RELATIONS, CONVERSATIONS, answers
    )
    wrong = errors_of(verdicts, oracle)
    proof = evidence(responses, verdicts=wrong)
    return [build_card(verdict, proof) for verdict in wrong]


IU = "Q27>Q190"  # Ireland contains Ulster
UK = "Q190>Q6413"  # Ulster contains Kinawley
IK = "Q27>Q6413"  # Ireland contains Kinawley (through Ulster)


def test_atomic_card_shows_both_phrasings_alone_and_their_templates() -> None:
    # Ireland > Ulster: "No." to t1 alone, "Yes, it is." to t2 alone: one atomic error.
    cards = kontest_cards(
        {(IU, "Q1"): ["No."], (IU, "Q2"): ["Yes, it is."], (IU, "A"): ["No", "No"]},
        "atomic",
    )
    assert len(cards) == 1
    card = cards[0]
    assert card.title == "Two phrasings, opposite answers"
    assert card.fact == "Ireland contains Ulster"
    assert "said no to one and yes to the other" in card.headline
    first, second = card.chats
    assert [t.question for t in first.turns] == ["Does Ireland have a Ulster?"]
    assert [t.question for t in second.turns] == ["Is there a Ulster in Ireland?"]
    assert first.turns[0].phrasing == "Does {parent} have a {child}?"
    assert second.turns[0].phrasing == "Is there a {child} in {parent}?"
    assert (first.turns[0].raw, first.turns[0].read) == ("No.", "no")
    assert (second.turns[0].raw, second.turns[0].read) == ("Yes, it is.", "yes")
    assert first.turns[0].compared and second.turns[0].compared
    assert any("fresh chat" in reason for reason in card.reasons)
    assert any("“Does {parent} have a {child}?”" in reason for reason in card.reasons)
    assert_no_codes(card)


def test_intra_card_shows_the_one_conversation_whole() -> None:
    # A = [t1, t2] on Ulster > Kinawley: yes then no.
    cards = kontest_cards({(UK, "A"): ["Yes.", "No, it does not."]}, "sequential_intra")
    (card,) = cards
    assert card.title == "A contradiction within one conversation"
    (chat,) = card.chats
    assert [t.question for t in chat.turns] == [
        "Does Ulster have a Kinawley?",
        "Is there a Kinawley in Ulster?",
    ]
    assert [t.read for t in chat.turns] == ["yes", "no"]
    assert [t.raw for t in chat.turns] == ["Yes.", "No, it does not."]
    assert all(t.compared for t in chat.turns)
    assert "said yes, then no" in card.headline
    assert_no_codes(card)


def test_inter_card_shows_the_question_alone_and_after_its_paraphrase() -> None:
    # t2 alone says yes; B = [t2, t1] is fine, A = [t1, t2] ends with no: Q2 vs A2.
    cards = kontest_cards(
        {(UK, "Q2"): ["Yes"], (UK, "A"): ["Yes", "No"]},
        "sequential_inter",
    )
    (card,) = cards
    alone, after = card.chats
    assert [t.question for t in alone.turns] == ["Is there a Kinawley in Ulster?"]
    assert [t.question for t in after.turns] == [
        "Does Ulster have a Kinawley?",
        "Is there a Kinawley in Ulster?",
    ]
    # Only the second turn of the conversation is compared; the first is its context.
    assert [t.compared for t in after.turns] == [False, True]
    assert "got yes" in card.headline and "it got no" in card.headline
    assert_no_codes(card)


def test_ontological_card_shows_all_three_questions_and_answers() -> None:
    # The paper's example: yes to Ireland has Ulster and Ulster has Kinawley, no to Ireland
    # has Kinawley, under t1 alone (t2 answered yes everywhere: no error there).
    replies = {
        (IU, "Q1"): ["Yes"],
        (UK, "Q1"): ["Yes"],
        (IK, "Q1"): ["No, it does not."],
        (IU, "Q2"): ["Yes"],
        (UK, "Q2"): ["Yes"],
        (IK, "Q2"): ["Yes"],
    }
    (card,) = kontest_cards(replies, "ontological")
    assert card.fact == "Ireland contains Kinawley"
    assert card.headline == (
        "The model said yes to “Ireland contains Ulster” and “Ulster contains Kinawley”, "
        "but no to “Ireland contains Kinawley”."
    )
    questions = [chat.turns[0].question for chat in card.chats]
    assert questions == [
        "Does Ireland have a Ulster?",
        "Does Ulster have a Kinawley?",
        "Does Ireland have a Kinawley?",
    ]
    assert [chat.turns[0].read for chat in card.chats] == ["yes", "yes", "no"]
    assert card.chats[2].turns[0].raw == "No, it does not."
    assert any("Ireland → Ulster → Kinawley" in reason for reason in card.reasons)
    assert_no_codes(card)


def variant_records() -> tuple[list[Conversation], dict[tuple[str, int], Response]]:
    original = Query(UK, "t1", "Does Ulster have a Kinawley?")
    varied = Query(UK, "t1", "Does Ulaidh include a Kinawley?")
    conversations = [
        Conversation(
            f"{UK}/t1~v0",
            UK,
            "atomic",
            "t1 v0",
            (original,),
            test_kind=TestKind.VARIANT,
            extras=VariantExtras(0),
        ),
        Conversation(
            f"{UK}/t1~v1",
            UK,
            "atomic",
            "t1 v1",
            (varied,),
            test_kind=TestKind.VARIANT,
            extras=VariantExtras(1, changed={"parent": "Ulaidh", "w3:have": "include"}),
        ),
    ]
    responses = {
        (conversations[0].id, 0): Response(conversations[0].id, 0, "Yes", Answer.YES),
        (conversations[1].id, 0): Response(conversations[1].id, 0, "No.", Answer.NO),
    }
    return conversations, responses


def test_variant_card_names_the_words_that_changed() -> None:
    conversations, responses = variant_records()
    answers = {key: r.answer for key, r in responses.items()}
    (verdict,) = errors_of(find_variant_verdicts(conversations, answers), "variant")
    card = build_card(verdict, evidence(responses, conversations, verdicts=[verdict]))
    assert card.title == "Changing a few words flipped the answer"
    assert "“Ulster → Ulaidh”" in card.headline and "“have → include”" in card.headline
    assert card.headline.startswith("The original question was yes")
    assert card.headline.endswith("got no.")
    assert [chat.turns[0].question for chat in card.chats] == [
        "Does Ulster have a Kinawley?",
        "Does Ulaidh include a Kinawley?",
    ]
    assert_no_codes(card)


def probe_records():
    mc = Conversation(
        f"{IU}/fc:multiple_choice",
        IU,
        "atomic",
        "multiple_choice",
        (Query(IU, "fc:multiple_choice", "In which country is Ulster?\nA) Ireland\nB) Wales"),),
        test_kind=TestKind.FACTCHECK,
        extras=FactcheckExtras(
            question_type="multiple_choice",
            answer="A",
            options=(ChoiceOption("A", "Q27", "Ireland"), ChoiceOption("B", "wales", "Wales")),
        ),
    )
    wh = Conversation(
        f"{UK}/fc:wh",
        UK,
        "atomic",
        "wh",
        (Query(UK, "fc:wh", "In which region is Kinawley located?"),),
        test_kind=TestKind.FACTCHECK,
        extras=FactcheckExtras(question_type="wh", accepted=("Ulster", "Ulaidh")),
    )
    two_hop = Conversation(
        f"{IK}/fc:two_hop",
        IK,
        "atomic",
        "two_hop",
        (Query(IK, "fc:two_hop", "Is the region that contains Kinawley located in Ireland?"),),
        test_kind=TestKind.FACTCHECK,
        expected=(Answer.YES,),
        extras=FactcheckExtras(question_type="two_hop", hops=2, middle="Q190"),
    )
    premise = [
        Conversation(
            f"{IK}/lr:premise:{index}",
            IK,
            "atomic",
            "premise",
            (Query(IK, "lr:premise", text),),
            test_kind=TestKind.LOGIC,
            expected=(Answer.YES,),
            extras=PremiseExtras((fact.split(">")[0], fact.split(">")[1])),
        )
        for index, (fact, text) in enumerate(
            [
                (IU, "Is it true that Ulster is located in Ireland?"),
                (UK, "Is it true that Kinawley is located in Ulster?"),
            ]
        )
    ]
    transitive = Conversation(
        f"{IK}/lr:transitive",
        IK,
        "atomic",
        "transitive",
        (Query(IK, "lr:transitive", "Is it true that Kinawley is located in Ireland?"),),
        test_kind=TestKind.LOGIC,
        expected=(Answer.YES,),
        extras=LogicExtras(
            rule="transitive",
            steps="transitive",
            expected_text="yes",
            form="",
            premises=tuple(c.id for c in premise),
        ),
    )
    raw = {
        (mc.id, 0): "B) Wales",
        (two_hop.id, 0): "No, it is not.",
        (wh.id, 0): "It is in Munster.",
        (premise[0].id, 0): "Yes.",
        (premise[1].id, 0): "No, Kinawley is in Fermanagh.",
        (transitive.id, 0): "No. It is not in Ireland.",
    }
    conversations = [mc, wh, two_hop, *premise, transitive]
    responses = {key: Response(key[0], 0, text, parse_answer(text)) for key, text in raw.items()}
    return conversations, responses, raw


def test_factcheck_cards_give_the_right_option_and_name() -> None:
    conversations, responses, raw = probe_records()
    verdicts = evaluate_probes(conversations, raw).verdicts
    wrong = errors_of(verdicts, "factcheck")
    proof = evidence(responses, conversations, verdicts=wrong)
    cards = {verdict.template_id: build_card(verdict, proof) for verdict in wrong}
    choice = cards["multiple_choice"]
    assert choice.headline == "The right option is A) Ireland; the model chose B) Wales."
    assert choice.chats[0].turns[0].read == "option B) Wales"
    assert choice.chats[0].turns[0].judged == "wrong: the right option is A) Ireland"
    assert choice.wrong == (
        "So the wrong reply is the one to “In which country is Ulster?” (read as option B) Wales)."
    )
    assert choice.expected == "A) Ireland"
    wh = cards["wh"]
    assert (
        wh.headline
        == "The right answer is “Ulster” or “Ulaidh”; the model's reply does not name it."
    )
    assert wh.chats[0].turns[0].raw == "It is in Munster."
    assert wh.chats[0].turns[0].read == "another name"
    two_hop = cards["two_hop"]
    assert two_hop.headline == "The right answer is yes; the model said no."
    assert (
        "It spans two facts of the knowledge graph that meet at Ulster: “Ireland contains "
        "Ulster” and “Ulster contains Kinawley”."
    ) in two_hop.reasons
    for card in cards.values():
        assert card.chats[0].turns[0].phrasing is None  # probe questions have no template
        assert_no_codes(card)


def test_logic_card_shows_the_rule_its_premises_and_the_knowledge_error() -> None:
    conversations, responses, raw = probe_records()
    verdicts = evaluate_probes(conversations, raw).verdicts
    (verdict,) = errors_of(verdicts, "logic")
    card = build_card(verdict, evidence(responses, conversations, verdicts=[verdict]))
    assert card.title == "A fact derived by a logic rule answered wrongly"
    assert card.expected == "yes"
    assert card.headline == "The rule gives the answer yes; the model said no."
    premises = card.chats[:-1]
    assert [chat.turns[0].read for chat in premises] == ["yes", "no"]
    assert card.chats[-1].turns[0].question == "Is it true that Kinawley is located in Ireland?"
    assert any(reason.startswith("Transitivity") for reason in card.reasons)
    assert (
        "The knowledge graph states “Ireland contains Ulster” and “Ulster contains Kinawley”; "
        "the rule derives the question below from them, so its right answer is yes."
    ) in card.reasons
    assert any("error of knowledge" in reason for reason in card.reasons)
    assert card.knowledge == (
        "The right answer, yes, follows by the rule from the knowledge graph, which says "
        "Ireland contains Kinawley (Wikidata Q27 → Q6413), through Ulster."
    )
    # the premise the model denied is judged against the graph too
    assert [chat.turns[0].judged for chat in premises] == [
        "right: the knowledge graph says yes",
        "wrong: the knowledge graph says yes",
    ]
    assert_no_codes(card)


def test_renderers_escape_model_text_in_every_format() -> None:
    hostile = "No <script>alert(1)</script> [bold red]No[/] *no* | x"
    (card,) = kontest_cards(
        {(IU, "Q1"): [hostile], (IU, "Q2"): ["Yes"]},
        "atomic",
    )
    text, markdown, html, svg = all_formats(card)
    assert hostile in text  # plain text shows it exactly
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<script" not in svg
    assert "\\*no\\*" in markdown and "\\[bold red\\]" in markdown and "\\|" in markdown
    assert "[bold red]No[/]" in card_to_rich(card).plain  # markup shown, never parsed
    ET.fromstring(svg)  # well-formed XML
    assert "Two phrasings, opposite answers" in svg.replace("&#160;", " ")


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_each_format_holds_every_question_and_reply(fmt) -> None:
    (card,) = kontest_cards({(UK, "A"): ["Yes.", "No, it does not."]}, "sequential_intra")
    rendered = {
        "text": card_text,
        "markdown": lambda c: cards_markdown([c]),
        "html": lambda c: cards_html([c]),
    }[fmt](card)
    for needle in (
        "Does Ulster have a Kinawley?",
        "Is there a Kinawley in Ulster?",
        "No, it does not",
    ):
        assert needle in rendered.replace("\\", "")


# -- who is right, what the model saw, where the error stands ---------------------------------


def test_a_card_says_what_the_graph_says_and_which_reply_is_wrong() -> None:
    responses = respond({(IU, "Q1"): ["No."], (IU, "Q2"): ["Yes, it is."]})
    answers = {key: r.answer for key, r in responses.items()}
    (verdict,) = errors_of(find_metamorphic_verdicts(CONVERSATIONS, answers), "atomic")
    proof = evidence_from_records(
        [verdict],
        CONVERSATIONS,
        responses,
        RELATIONS,
        NAMES,
        template_set=TEMPLATES,
        model="sim",
        kg_name="kinawley",
        kg_source="KONTEST paper running example, by hand",
    )
    card = build_card(verdict, proof)
    assert card.knowledge == (
        "The knowledge graph “kinawley”, from KONTEST paper running example, says Ireland "
        "contains Ulster (Wikidata Q27 → Q190), so the right answer is yes."
    )
    assert (
        card.wrong == "So the wrong reply is the one to “Does Ireland have a Ulster?” (read as no)."
    )
    said, right = (chat.turns[0] for chat in card.chats)
    assert said.judged == "wrong: the knowledge graph says yes"
    assert right.judged == "right: the knowledge graph says yes"
    assert card.finding == (
        "This is one disagreement: asked alone, the two phrasings get opposite answers."
    )
    system = TEMPLATES.system_prompt
    assert [chat.system for chat in card.chats] == [system, system]  # a chat model
    for rendered in all_formats(card):
        assert "compared" not in rendered and "◀" not in rendered
    text = card_text(card)
    assert "Read as:  no (wrong: the knowledge graph says yes)" in text
    assert f"System prompt: “{system}”" in " ".join(text.split())


def sequential_card(replies, oracle="sequential_intra", **options):
    responses = respond(replies)
    answers = {key: r.answer for key, r in responses.items()}
    (verdict,) = errors_of(find_metamorphic_verdicts(CONVERSATIONS, answers), oracle)
    proof = evidence_from_records(
        [verdict], CONVERSATIONS, responses, RELATIONS, NAMES, template_set=TEMPLATES, **options
    )
    return build_card(verdict, proof)


def test_a_flip_only_after_the_models_own_reply_is_named() -> None:
    # both phrasings alone say yes; in A the second question gets no after the first's yes
    card = sequential_card(
        {(UK, "Q1"): ["Yes"], (UK, "Q2"): ["Yes"], (UK, "A"): ["Yes.", "No."]}, model="sim"
    )
    assert card.finding == (
        "Asked alone, both phrasings got yes: the model changes its answer only after its own "
        "previous reply."
    )
    assert (
        card.wrong
        == "So the wrong reply is the one to “Is there a Kinawley in Ulster?” (read as no)."
    )
    # alone, no to both: the model denies the fact, and says yes only after its own reply
    denied = sequential_card(
        {(UK, "Q1"): ["No"], (UK, "Q2"): ["No"], (UK, "A"): ["No.", "Yes."]}, model="sim"
    )
    assert denied.finding is not None and "it denies this fact" in denied.finding
    assert (
        denied.wrong
        == "So the wrong reply is the one to “Does Ulster have a Kinawley?” (read as no)."
    )
    # the same flip on a relation whose phrasings alone disagree repeats that disagreement
    repeat = sequential_card(
        {(UK, "Q1"): ["Yes"], (UK, "Q2"): ["No"], (UK, "A"): ["Yes.", "No."]}, model="sim"
    )
    assert repeat.finding is not None and repeat.finding.startswith("This repeats a disagreement")


def test_a_completions_model_card_shows_the_prompt_it_continued() -> None:
    from kontest_tui.models.base import Message
    from kontest_tui.models.completion_prompt import render_completion_prompt

    card = sequential_card(
        {(UK, "Q1"): ["Yes"], (UK, "Q2"): ["Yes"], (UK, "A"): [" Yes", " No"]},
        model="local:gemma3-270m",
    )
    (chat,) = card.chats
    assert chat.system is None  # completions mode: no system message, the header instead
    first, second = chat.turns
    assert second.prompt == render_completion_prompt(
        [
            Message("user", "Does Ulster have a Kinawley?"),
            Message("assistant", " Yes"),
            Message("user", "Is there a Kinawley in Ulster?"),
        ]
    )
    assert second.prompt.endswith("Question: Is there a Kinawley in Ulster?\nAnswer:")
    assert "Answer: Yes\nQuestion: Is there a Kinawley in Ulster?" in second.prompt
    assert card.asked is not None and "text to complete" in card.asked
    text = card_text(card)
    assert 'Reply:    " No" (quoted to show its spaces)' in text
    assert "  Prompt:   " in text and "System" not in text


def test_the_session_system_prompt_replaces_the_template_sets() -> None:
    from kontest_tui.report.prompts import prompting_of

    card = sequential_card(
        {(UK, "A"): ["Yes.", "No."]},
        model="sim",
        prompting=prompting_of("sim", {"system_prompt": "Reply in one word."}),
    )
    assert card.chats[0].system == "Reply in one word."


def test_an_implied_fact_through_a_generic_middle_node_is_flagged() -> None:
    from kontest_tui.oracles.findings import label_doubts

    nodes = {
        "sg": Node("sg", "Singapore", type="country"),
        "central": Node("central", "Central Region", type="region"),
        "villa": Node("villa", "Haw Par Villa", type="locality"),
    }
    kg = KnowledgeGraph("sg", "places", nodes, [Edge("sg", "central"), Edge("central", "villa")])
    relations = extract_relations(kg)
    conversations = build_conversations(kg, relations, TEMPLATES)
    raw = {"sg>central": "Yes", "central>villa": "Yes", "sg>villa": "No"}
    responses = {}
    for conversation in conversations:
        if conversation.kind == "atomic":
            text = raw[conversation.relation_id]
            responses[(conversation.id, 0)] = Response(conversation.id, 0, text, parse_answer(text))
    answers = {key: r.answer for key, r in responses.items()}
    wrong = errors_of(find_ontological_verdicts(relations, conversations, answers), "ontological")
    assert len(wrong) == 2  # one per template
    doubts = label_doubts({node: found.label for node, found in nodes.items()})
    proof = evidence_from_records(
        wrong, conversations, responses, relations, NodeNames(kg), doubts=doubts
    )
    card = build_card(wrong[0], proof)
    assert card.doubts == (
        "The name “Central Region” is generic (many entities could carry it): the model may "
        "have had another one in mind, so this implied fact may not follow from its answers.",
    )
    assert (
        card.wrong
        == "So the wrong reply is the one to “Does Singapore have a Haw Par Villa?” (read as no)."
    )
    assert "Central Region" in card_text(card).split("Why this is an error")[0]


def test_how_sure_and_confirmation_show_only_when_known() -> None:
    import dataclasses

    (card,) = kontest_cards({(IU, "Q1"): ["No."], (IU, "Q2"): ["Yes"]}, "atomic")
    for rendered in all_formats(card)[:3]:
        assert "How sure:" not in rendered and "Asked again" not in rendered
        # no reply has a margin: said once for the card, not per reply
        assert rendered.count("How sure the model was is not known") == 1
    first = card.chats[0]
    sure = dataclasses.replace(first.turns[0], p_yes=0.42)
    known = dataclasses.replace(
        card,
        chats=(dataclasses.replace(first, turns=(sure,)), *card.chats[1:]),
        confirmation="confirmed in 4 of 5 phrasings",
    )
    for rendered in (card_text(known), cards_markdown([known]), cards_html([known])):
        assert "P(yes) 0.42 of yes or no" in rendered
        assert "Asked again: confirmed in 4 of 5 phrasings" in rendered


def test_each_reply_shows_its_margin_and_an_error_between_coin_tosses_is_weak() -> None:
    import dataclasses

    from kontest_tui.store.confirmations import Confirmation, ConfirmationAnswer, error_key

    responses = respond({(IU, "Q1"): ["No."], (IU, "Q2"): ["Yes"]})
    q1, q2 = (conversation(IU, "Q1").id, 0), (conversation(IU, "Q2").id, 0)
    answers = {key: r.answer for key, r in responses.items()}
    (verdict,) = errors_of(find_metamorphic_verdicts(CONVERSATIONS, answers), "atomic")

    def card_with(margins, confirmations=None):
        given = {
            key: dataclasses.replace(r, p_yes=margins.get(key)) for key, r in responses.items()
        }
        proof = evidence(given, verdicts=[verdict])
        proof.confirmations = confirmations or {}
        return build_card(verdict, proof)

    # P(yes) 0.45 for the no and 0.62 for the yes: both within 0.2 of 0.5, so weak
    weak = card_with({q1: 0.45, q2: 0.62})
    for rendered in all_formats(weak)[:3]:
        assert "P(yes) 0.45 of yes or no" in rendered and "P(yes) 0.62 of yes or no" in rendered
        assert "Weak: every answer compared was close to a coin toss (P(yes) 0.45 and 0.62" in (
            rendered.replace("\\", "")
        )
        assert "not known" not in rendered
    # 0.45 and 0.91: the yes was sure, so not weak; each reply still shows its margin
    sure = card_with({q1: 0.45, q2: 0.91})
    assert sure.margin is None and "P(yes) 0.91 of yes or no" in card_text(sure)

    # Asked again: t3 in place of the wrong phrasing got yes (no contradiction), a new
    # sample got no and yes again: 1 of 2 tries held, mixed; each try in a line
    def answer(trial, position, form, phrasing, draw, question, reply, held):
        parsed = parse_answer(reply)
        return ConfirmationAnswer(
            trial, position, form, phrasing, draw, 11 if draw else None, f"c{trial}{position}",
            0, question, reply, parsed, p_yes=0.5 if draw else None, holds=held,
        )  # fmt: skip

    confirmed = Confirmation(
        "atomic",
        verdict.refs,
        IU,
        "mixed",
        trials=2,
        counted=2,
        held=1,
        answers=(
            answer(0, 1, "template", "t3", 0, "Is Ulster part of Ireland?", "Yes", False),
            answer(1, 0, "draw", "draw 1", 1, "Does Ireland have a Ulster?", "No", True),
            answer(1, 1, "draw", "draw 1", 1, "Is there a Ulster in Ireland?", "Yes", True),
        ),
    )
    card = card_with({}, {error_key(verdict): confirmed})
    assert card.confirmation == "mixed: the contradiction came back in 1 of 2 tries."
    assert card.tries == (
        "Another template (t3): “Is Ulster part of Ireland?” yes: no contradiction.",
        "New sample 1: “Does Ireland have a Ulster?” no (P(yes) 0.50); “Is there a Ulster in "
        "Ireland?” yes (P(yes) 0.50): opposite answers again.",
    )
    text, markdown, html = card_text(card), cards_markdown([card]), cards_html([card])
    assert "Asked again: mixed: the contradiction came back in 1 of 2 tries." in text
    assert "  • Another template (t3): “Is Ulster part of Ireland?” yes: no contradiction." in text
    assert "- Another template (t3)" in markdown and '<p class="try">• New sample 1' in html
