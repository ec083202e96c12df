"""How the simulated model answers FactChecker questions and HalluVault logic-rule tests.

The question types are recognised from the probe template texts (assets/probes/*.toml), the
way sim.py recognises KONTEST questions. Every answer rests on the model's knowledge of the KG
facts the question is about, with the same fact keys and seeded draws as a KONTEST question
(`draw(seed, "know", "parent>child") < knowledge`), so a model that knows a fact tends to get
every question type about it right, and one that does not errs or declines:

- a statement (yes-no, logic-rule facts and premises): true facts are believed when known (or
  at the yes-bias rate), false facts (not ancestor/descendant in the KG) only at the yes-bias
  rate; negated statements invert the belief; 2-hop questions need every link. A derived
  fact (transitive, composite) is one more fact with its own draw, so a model may know both
  premises and still deny the conclusion (an error-inference) or deny a premise;
- multiple choice: the letter of the true option when the fact is known, else a seeded guess;
- WH: the true parent's label when known, else "I don't know" (`refusal_rate`) or a seeded
  wrong label of the same type from the KG.

Logic prompts allow "I don't know": a statement resting on an unknown fact is declined at
`refusal_rate`. A logic answer lists the knowledge it used after its Yes/No (HalluVault's
prompt): each link of the KG path between the statement's two entities, as the model believes
it: the true link when it knows that fact, else the child placed in a seeded wrong entity of
the parent's type (its knowledge is wrong there). So an error resting on an unknown link shows
wrong knowledge, and one where every link is known (a flip, a template's error) shows the right
knowledge with the wrong conclusion: what the answer oracle tells apart.
Like sim.decide_answer this is a pure function of (profile, seed, user turns, KG).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from kontest_tui.errors import KontestError
from kontest_tui.generate.relations import relation_type
from kontest_tui.models.sim.entities import EntityFinder
from kontest_tui.models.sim.profile import SimProfile, draw, normalise, pick, template_error_rate
from kontest_tui.probes.templates import FACT_FORMS, ProbeTemplates, fill, load_probe_templates
from kontest_tui.resources import asset_path

_PLACEHOLDER = re.compile(r"(\{(?:parent|child|middle|parent_type|middle_type)\})")
_OPTION = re.compile(r"^\s*\(?([A-Da-d])\)\s*(.+?)\s*$")
WRONG_LABEL_TRIES = 8  # same-type nodes tried for a wrong WH answer before declining


@dataclass(frozen=True, slots=True)
class ProbeReading:
    """What a probe template asks: a statement about facts, a 2-hop chain, or the parent.

    `pairs` are (container slot, contained slot) facts the statement asserts; `negated`
    says the expected answer is the opposite of the facts holding (negation rules)."""

    source: str  # "factcheck" | "logic"
    name: str  # question type or rule
    form: str  # "statement" | "two_hop" | "ask_parent"
    pairs: tuple[tuple[str, str], ...] = (("parent", "child"),)
    negated: bool = False


@dataclass(frozen=True, slots=True)
class ProbeQuestion:
    """A recognised probe question: its reading, the filled slots and any listed options."""

    reading: ProbeReading
    slots: dict[str, str]
    options: tuple[tuple[str, str], ...] = ()


# ---------------------------------------------------------------------------- recognition


@dataclass(frozen=True, slots=True)
class _Template:
    pattern: re.Pattern[str]
    literals: tuple[str, ...]  # lower-cased literal parts: a cheap test before the regex
    reading: ProbeReading
    size: int = 0  # characters of the text that are not placeholders


def _template(text: str, reading: ProbeReading) -> _Template:
    """A template text as a regex (placeholders as groups)."""
    regex: list[str] = []
    literals: list[str] = []
    seen: set[str] = set()
    for part in _PLACEHOLDER.split(" ".join(text.split())):
        if _PLACEHOLDER.fullmatch(part):
            name = part[1:-1]
            regex.append(f"(?P={name})" if name in seen else f"(?P<{name}>.+?)")
            seen.add(name)
        elif part:
            literals.append(part.strip().lower())
            regex.append(r"\s+".join(re.escape(word) for word in part.split(" ")))
    pattern = re.compile("".join(regex), re.IGNORECASE)
    size = len(_PLACEHOLDER.sub("", " ".join(text.split())))
    return _Template(pattern, tuple(literal for literal in literals if literal), reading, size)


def _logic_reading(form: str) -> ProbeReading:
    """A logic statement form (probes.templates.FACT_FORMS): it asserts the fact (parent
    contains child), in the relation's or the inverse relation's words, or negates it."""
    return ProbeReading(
        "logic", form, "statement", (("parent", "child"),), form.endswith("negated")
    )


def _factcheck_reading(question_type: str) -> ProbeReading:
    if question_type == "yes_no":
        return ProbeReading("factcheck", question_type, "statement")
    if question_type == "two_hop":
        return ProbeReading("factcheck", question_type, "two_hop")
    return ProbeReading("factcheck", question_type, "ask_parent", ())


@lru_cache(maxsize=1)
def probe_templates() -> tuple[_Template, ...]:
    """Every built-in probe template (once per text and reading), most literal text first;
    on a tie a FactChecker reading wins (its prompt is the stricter one)."""
    found: dict[tuple[str, ProbeReading], tuple[int, int, _Template]] = {}

    def add(text: str, order: int, reading: ProbeReading) -> None:
        template = _template(text, reading)
        found.setdefault(
            (template.pattern.pattern, reading),
            (sum(map(len, template.literals)), order, template),
        )

    folder = asset_path("probes")
    for path in sorted(folder.glob("*.toml")) if folder.is_dir() else ():
        try:
            templates = load_probe_templates(path)
        except (KontestError, OSError):
            continue
        for texts in templates.factcheck.values():
            for question_type, text in texts.items():
                add(text, 0, _factcheck_reading(question_type))
        for forms in templates.logic.values():
            for form in FACT_FORMS:
                stated = forms.text(form)
                if stated is not None:
                    add(stated, 1, _logic_reading(form))
    ordered = sorted(found.values(), key=lambda item: (-item[0], item[1]))
    return tuple(template for _, _, template in ordered)


def parse_probe(question: str) -> ProbeQuestion | None:
    """Recognise a filled probe template (options "A) ..." on the last lines); None if none."""
    found = _match_probe(question)
    return found[0] if found is not None else None


def probe_size(question: str) -> int:
    """How much of `question` the probe template it fills says (its characters that are
    not placeholders); 0 when it fills none. A KONTEST template that matches the question
    but says less of it ("Is {child} in {parent}?" against "Is it true that {child} is
    located in {parent}?") is not what the question was made from."""
    found = _match_probe(question)
    return found[1] if found is not None else 0


def _match_probe(question: str) -> tuple[ProbeQuestion, int] | None:
    lines = [line for line in question.splitlines() if line.strip()]
    options: list[tuple[str, str]] = []
    while len(lines) > 1 and (match := _OPTION.match(lines[-1])):
        options.insert(0, (match.group(1).upper(), match.group(2)))
        lines.pop()
    head = " ".join(" ".join(lines).split())
    lowered = head.lower()
    for template in probe_templates():
        for literal in template.literals:  # a loop, not all(): ~3x faster per question
            if literal not in lowered:
                break
        else:
            match = template.pattern.fullmatch(head)
            if match:
                slots = {key: value.strip() for key, value in match.groupdict().items()}
                return ProbeQuestion(template.reading, slots, tuple(options)), template.size
    return None


# ---------------------------------------------------------------------------- decisions


@dataclass(frozen=True, slots=True)
class _Mind:
    """The simulated model's view of one chat: profile, seed, KG lookups."""

    profile: SimProfile
    seed: int
    entities: EntityFinder | None

    def knows(self, parent: str, child: str) -> bool:
        fact = f"{normalise(parent)}>{normalise(child)}"
        return draw(self.seed, "know", fact) < self.profile.knowledge

    def believes(self, parent: str, child: str) -> tuple[bool, bool]:
        """(says `parent` contains `child`, is sure of it) for one fact."""
        entities = self.entities
        pair = entities.find_pair(parent, child) if entities is not None else None
        if entities is not None and pair is not None:
            parent, child = entities.kg.label(pair[0]), entities.kg.label(pair[1])
        fact = f"{normalise(parent)}>{normalise(child)}"
        biased = draw(self.seed, "bias", fact) < self.profile.yes_bias
        if (
            pair is None
            and entities is not None
            and entities.ids_of(parent)
            and entities.ids_of(child)
        ):
            return biased, not biased  # a false fact: only the yes-bias says yes
        known = draw(self.seed, "know", fact) < self.profile.knowledge
        return known or biased, known


def _statement(mind: _Mind, question: ProbeQuestion) -> tuple[bool, bool, str]:
    """(the facts hold for the model, it is sure, the first fact's key)."""
    slots = question.slots
    pairs = [(slots.get(a, ""), slots.get(b, "")) for a, b in question.reading.pairs]
    if question.reading.form == "two_hop":
        pairs = _two_hop_links(mind, slots) or pairs
    holds, sure = True, True
    for parent, child in pairs:
        says, certain = mind.believes(parent, child)
        holds, sure = holds and says, sure and certain
    parent, child = pairs[0]
    return holds, sure, f"{normalise(parent)}>{normalise(child)}"


def _two_hop_links(mind: _Mind, slots: dict[str, str]) -> list[tuple[str, str]]:
    """The two KG links of a true 2-hop question (parent > middle > child), else []."""
    entities = mind.entities
    pair = entities.find_pair(slots.get("parent", ""), slots.get("child", "")) if entities else None
    if entities is None or pair is None:
        return []
    top, bottom = pair
    wanted = slots.get("middle_type", "").lower()
    middles = [m for m in entities.parents(bottom) if entities.is_ancestor(top, m)]
    typed = [m for m in middles if entities.kg.nodes[m].type.lower() == wanted]
    if not (typed or middles):
        return []
    middle = entities.kg.label((typed or middles)[0])
    return [(entities.kg.label(top), middle), (middle, entities.kg.label(bottom))]


def _fill(style: str, letter: str = "", label: str = "") -> str:
    return style.replace("{letter}", letter).replace("{label}", label)


def _choice(mind: _Mind, question: ProbeQuestion, chat: Sequence[str], confused: bool) -> str:
    child = question.slots.get("child", "")
    chosen = ""
    if mind.entities is not None and not confused:
        for letter, label in question.options:
            if mind.entities.find_pair(label, child) is not None:
                chosen = letter if mind.knows(label, child) else ""
                break
    options = dict(question.options)
    if not chosen:
        chosen = pick(list(options), draw(mind.seed, "guess", chat[-1]))
    style = pick(mind.profile.choice_styles, draw(mind.seed, "style", *chat))
    return _fill(style, chosen, options[chosen])


def _true_parent(entities: EntityFinder, child: str, parent_type: str) -> tuple[str, str] | None:
    """(parent id, child id): the first child entity's parent of the asked type, by KG order."""
    wanted = parent_type.lower()
    for child_id in entities.ids_of(child):
        parents = entities.parents(child_id)
        typed = [p for p in parents if (entities.kg.nodes[p].type or "place").lower() == wanted]
        if typed or parents:
            return (typed or parents)[0], child_id
    return None


def _wrong_label(mind: _Mind, true_parent: str, child_id: str, chat: Sequence[str]) -> str | None:
    """A seeded label of the true parent's type that is not a true answer."""
    entities = mind.entities
    assert entities is not None
    pool = entities.of_type(entities.kg.nodes[true_parent].type)
    right = normalise(entities.kg.label(true_parent))
    start = int(draw(mind.seed, "wrong", chat[-1]) * len(pool)) if pool else 0
    for step in range(min(WRONG_LABEL_TRIES, len(pool))):
        candidate = pool[(start + step) % len(pool)]
        label = entities.kg.label(candidate)
        if normalise(label) != right and not entities.is_ancestor(candidate, child_id):
            return label
    return None


def _wh(mind: _Mind, question: ProbeQuestion, chat: Sequence[str], confused: bool) -> str:
    profile, seed = mind.profile, mind.seed
    entities = mind.entities
    slots = question.slots
    found = (
        _true_parent(entities, slots.get("child", ""), slots.get("parent_type", ""))
        if entities is not None
        else None
    )
    label: str | None = None
    if entities is not None and found is not None:
        kg = entities.kg
        parent_id, child_id = found
        if not confused and mind.knows(kg.label(parent_id), kg.label(child_id)):
            label = kg.label(parent_id)
        elif draw(seed, "refuse", chat[-1]) >= profile.refusal_rate:
            label = _wrong_label(mind, parent_id, child_id, chat)
    if label is None:
        return pick(profile.refuse_styles, draw(seed, "unsure-pick", *chat))
    return _fill(pick(profile.wh_styles, draw(seed, "style", *chat)), label=label)


def answer_probe(
    profile: SimProfile,
    seed: int,
    chat: Sequence[str],
    question: str,
    entities: EntityFinder | None,
    json_boolean: bool = False,
) -> str | None:
    """The answer to a probe question (the last turn of `chat`, normalised turns), or None
    when `question` is not a probe template. The seeded draws for hostile, unsure, flip and
    style are the ones sim.decide_answer uses."""
    probe = parse_probe(question)
    if probe is None:
        return None
    reading = probe.reading
    if profile.hostile_rate and draw(seed, "hostile", *chat) < profile.hostile_rate:
        return pick(profile.hostile_answers, draw(seed, "hostile-pick", *chat))
    may_decline = reading.source == "logic"
    if draw(seed, "unsure", *chat) < profile.unsure_rate:
        styles = profile.refuse_styles if may_decline else profile.unsure_styles
        return pick(styles, draw(seed, "unsure-pick", *chat))
    mind = _Mind(profile, seed, entities)
    # A probe wording is not a KONTEST template: the same extra wording error as a variant.
    confused = draw(seed, "wording", chat[-1]) < profile.variant_error
    if reading.form == "ask_parent":
        if probe.options:
            return _choice(mind, probe, chat, confused)
        return _wh(mind, probe, chat, confused)
    holds, sure, fact = _statement(mind, probe)
    says_yes = holds != reading.negated
    key, rate = template_error_rate(profile, question, None)
    if rate and draw(seed, "template", key, fact) < rate:
        says_yes = not says_yes
    if confused:
        says_yes = not says_yes
    if len(chat) > 1 and draw(seed, "flip", *chat) < profile.flip_rate:
        says_yes = not says_yes
    if may_decline and not sure and draw(seed, "refuse", chat[-1]) < profile.refusal_rate:
        return pick(profile.refuse_styles, draw(seed, "unsure-pick", *chat))
    if json_boolean:
        return "true" if says_yes else "false"
    styles = profile.yes_styles if says_yes else profile.no_styles
    answer = pick(styles, draw(seed, "style", *chat))
    if reading.source == "logic":
        knowledge = _knowledge(mind, probe, chat)
        if knowledge:
            answer = f"{answer} {knowledge}"
    return answer


def _knowledge(mind: _Mind, question: ProbeQuestion, chat: Sequence[str]) -> str:
    """The knowledge a logic answer lists (see the module docstring), "" when the statement
    is not about two related KG entities."""
    entities = mind.entities
    if entities is None:
        return ""
    parent, child = question.slots.get("parent", ""), question.slots.get("child", "")
    pair = entities.find_pair(parent, child) or entities.find_pair(child, parent)
    if pair is None:
        return ""
    top, node = pair
    kg = entities.kg
    templates = _statements(kg.domain)
    points: list[str] = []
    while node != top:
        above = [p for p in entities.parents(node) if p == top or entities.is_ancestor(top, p)]
        if not above:
            break
        link_parent = above[0]
        statement = templates.get(relation_type(kg, link_parent, node))
        if statement is not None:
            believed: str | None = kg.label(link_parent)
            if not mind.knows(kg.label(link_parent), kg.label(node)):
                believed = _wrong_label(mind, link_parent, node, [*chat, kg.label(node)])
            if believed is not None:
                points.append(fill(statement, {"parent": believed, "child": kg.label(node)}))
        node = link_parent
    return " ".join(points)


@lru_cache(maxsize=8)
def _statements(domain: str) -> dict[str, str]:
    """Relation type -> its knowledge-point statement (the domain's probe file)."""
    try:
        templates: ProbeTemplates = load_probe_templates(domain)
    except KontestError:
        return {}
    return {
        relation: forms.statement
        for relation, forms in templates.logic.items()
        if forms.statement is not None
    }
