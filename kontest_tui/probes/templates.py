"""Probe templates as data: assets/probes/<domain>.toml (FactChecker questions, logic rules).

Placeholders: {parent} {child} {middle} {parent_type} {middle_type}. Filling is one pass, so
a label that itself contains "{child}" or braces is inserted literally.

Logic rules are not templates of their own: per relation type the file gives the ways to
state a fact R(parent, child) (`fact`, `negated`, `inverse`, `inverse_negated`) and whether R
is symmetric; probes.logic applies the HalluVault rules to KG facts and states the derived
fact with these forms. Two more keys serve the answer oracle (probes.answer_oracle): the fact
as a declarative knowledge point (`statement`, "{child} is located in {parent}.") and the
words that name the relation in a model's reasoning (`words`, "located in", "part of", ...).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from kontest_tui.domain.answers import clean_text
from kontest_tui.errors import TemplateError
from kontest_tui.resources import asset_path
from kontest_tui.validate_input import is_name, loads_toml, read_input_text

PLACEHOLDERS = frozenset({"parent", "child", "middle", "parent_type", "middle_type"})
_PLACEHOLDER = re.compile(r"\{([A-Za-z_]+)\}")
QUESTION_TYPES = ("yes_no", "multiple_choice", "wh", "two_hop", "two_hop_choice")
ASKS_FOR_PARENT = frozenset({"multiple_choice", "wh", "two_hop_choice"})
LOGIC_RULES = ("negation", "symmetric", "inverse", "transitive", "composite")
# How a fact R(parent, child) is stated: R itself, not R, the inverse relation, not the inverse.
FACT_FORMS = ("fact", "negated", "inverse", "inverse_negated")
# The other keys of a relation type's logic table (see the module docstring).
LOGIC_KEYS = ("symmetric", "statement", "words")


@dataclass(frozen=True, slots=True)
class LogicForms:
    """The statement forms of one relation type (form -> text), whether R is symmetric, the
    fact as a knowledge point (declarative) and the words naming R in a model's reasoning."""

    forms: dict[str, str]
    symmetric: bool = False
    statement: str | None = None
    words: tuple[str, ...] = ()

    def text(self, form: str) -> str | None:
        return self.forms.get(form)


@dataclass(frozen=True)
class ProbeTemplates:
    """Per relation type: FactChecker question texts and logic rules; prompts per question type."""

    domain: str
    topic: str
    prompts: dict[str, str]
    factcheck: dict[str, dict[str, str]] = field(default_factory=dict)
    logic: dict[str, LogicForms] = field(default_factory=dict)

    def prompt(self, kind: str) -> str:
        return self.prompts.get(kind, "").replace("{topic}", self.topic)


def fill(text: str, values: dict[str, str]) -> str:
    """Substitute placeholders in one pass; values are collapsed to one line and used literally."""

    def substitute(match: re.Match[str]) -> str:
        return " ".join(values[match.group(1)].split())

    return _PLACEHOLDER.sub(substitute, text)


def _check_text(text: object, where: str, asks_for_parent: bool = False) -> str:
    """A question that asks for the parent (multiple choice, WH) must not name it."""
    if not isinstance(text, str) or not clean_text(text).strip():
        raise TemplateError(f"{where}: expected a non-empty text")
    text = clean_text(text)  # what a model is asked: no escapes, bidi or zero-width characters
    unknown = sorted(set(_PLACEHOLDER.findall(text)) - PLACEHOLDERS)
    if unknown:
        raise TemplateError(f"{where}: unknown placeholder {{{unknown[0]}}} in {text!r}")
    for needed in ("child",) if asks_for_parent else ("parent", "child"):
        if f"{{{needed}}}" not in text:
            raise TemplateError(f"{where}: missing {{{needed}}} in {text!r}")
    if asks_for_parent and "{parent}" in text:
        raise TemplateError(
            f"{where}: a question asking for the parent must not contain {{parent}}"
        )
    return text


def load_probe_templates(domain_or_path: str | Path) -> ProbeTemplates:
    """Load assets/probes/<domain>.toml, or a file path; TemplateError names the file and entry."""
    path = Path(domain_or_path)
    if not path.suffix and is_name(str(domain_or_path)):
        path = asset_path("probes", f"{domain_or_path}.toml")
    if not path.exists():
        raise TemplateError(f"{path}: no probe templates for this domain")
    data = loads_toml(read_input_text(path, str(path), TemplateError), str(path), TemplateError)
    name = path.name
    factcheck: dict[str, dict[str, str]] = {}
    for relation_type, texts in _table(data, "factcheck", name).items():
        if not isinstance(texts, dict):
            raise TemplateError(
                f"{name}: factcheck.{relation_type}: expected a table of question texts"
            )
        unknown = sorted(set(texts) - set(QUESTION_TYPES))
        if unknown:
            raise TemplateError(
                f"{name}: factcheck.{relation_type}: unknown question type {unknown[0]!r}"
            )
        factcheck[relation_type] = {
            qtype: _check_text(
                text, f"{name}: factcheck.{relation_type}.{qtype}", qtype in ASKS_FOR_PARENT
            )
            for qtype, text in texts.items()
        }
    logic: dict[str, LogicForms] = {}
    for relation_type, entry in _table(data, "logic", name).items():
        where = f"{name}: logic.{relation_type}"
        if not isinstance(entry, dict):
            raise TemplateError(f"{where}: expected a table of statement forms")
        unknown = sorted(set(entry) - {*FACT_FORMS, *LOGIC_KEYS})
        if unknown:
            raise TemplateError(
                f"{where}: unknown key {unknown[0]!r} (use {', '.join((*FACT_FORMS, *LOGIC_KEYS))})"
            )
        symmetric = entry.get("symmetric", False)
        if not isinstance(symmetric, bool):
            raise TemplateError(f"{where}.symmetric: expected true or false")
        forms = {
            form: _check_text(entry[form], f"{where}.{form}")
            for form in FACT_FORMS
            if form in entry
        }
        statement = (
            _check_text(entry["statement"], f"{where}.statement") if "statement" in entry else None
        )
        words = entry.get("words", [])
        if not isinstance(words, list) or not all(isinstance(w, str) and w.strip() for w in words):
            raise TemplateError(f"{where}.words: expected a list of non-empty texts")
        logic[relation_type] = LogicForms(
            forms, symmetric, statement, tuple(" ".join(w.lower().split()) for w in words)
        )
    prompts: dict[str, str] = {}
    for key, value in _table(data, "prompts", name).items():
        if not isinstance(value, str):
            raise TemplateError(f"{name}: prompts.{key}: expected a text")
        prompts[key] = clean_text(value)
    domain = _text(data, "domain", name, path.stem)
    return ProbeTemplates(
        domain=domain,
        topic=_text(data, "topic", name, domain),
        prompts=prompts,
        factcheck=factcheck,
        logic=logic,
    )


def _table(data: dict[str, object], key: str, name: str) -> dict[str, object]:
    """`data[key]` when it is a table ({} when absent); a TemplateError naming it otherwise."""
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise TemplateError(f"{name}: {key}: expected a table ([{key}])")
    return value


def _text(data: dict[str, object], key: str, name: str, default: str) -> str:
    """`data[key]` when it is a text (`default` when absent), cleaned; a TemplateError otherwise."""
    value = data.get(key, default)
    if not isinstance(value, str):
        raise TemplateError(f"{name}: {key}: expected a text")
    return " ".join(clean_text(value).split())
