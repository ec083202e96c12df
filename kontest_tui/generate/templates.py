"""Question templates as data: load, validate and fill the TOML template sets of assets/templates.

A template set belongs to one domain (places, music, ...) and has a name: each domain has its
default set (`natural`: texts that read as written by hand once realised, generate.realise)
and the papers' exact texts (`paper`, filled literally, what the recordings replay). It holds
template ids (t1, t2, ...); each id has one text per relation type, so "template t1" is one
phrasing style across all relation types. Texts use `{parent}` and `{child}`; `{{` and `}}`
are literal braces. User files in `paths.config_dir()/templates/*.toml` replace built-in sets
of the same domain and name or add new ones. Filling is single-pass: entity labels are
inserted literally.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

from kontest_tui import paths
from kontest_tui.domain.answers import clean_text
from kontest_tui.errors import TemplateError
from kontest_tui.resources import asset_path
from kontest_tui.validate_input import is_name, loads_toml, read_input_text

DEFAULT_SYSTEM_PROMPT = "Be concise as possible. Answer with a yes or no response."
PLACEHOLDERS = ("parent", "child")
DEFAULT_SET = "natural"  # a domain's default template set (a file that names none is it)
PAPER_SET = "paper"  # the papers' exact texts
SET_NAMES = (DEFAULT_SET, PAPER_SET)
PARTS_OF_SPEECH = ("n", "v", "a", "r")

# One token of a template text: a literal run, an escaped brace, or a {name} placeholder.
_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]|[^{}]+")
# A label's whitespace (including newlines) collapses to single spaces.
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Template:
    """One phrasing style: a text per relation type, plus optional per-word annotations.

    `pos` maps a word of the texts to its part of speech ("n", "v", "a", "r") and `fixed`
    lists words that must never be replaced; both are read by the covering-array variants.
    """

    id: str
    texts: dict[str, str]
    pos: dict[str, str] = field(default_factory=dict)
    fixed: tuple[str, ...] = ()

    def text_for(self, relation_type: str) -> str:
        """The text for `relation_type`; TemplateError when this template has none."""
        try:
            return self.texts[relation_type]
        except KeyError:
            raise TemplateError(
                f"template {self.id} has no text for relation type {relation_type!r}"
            ) from None

    @property
    def text(self) -> str:
        """Its text for a reader: the one text, or each relation type's joined by " / "
        ("album->song: Is {child} a song on {parent}? / ...")."""
        if len(self.texts) == 1:
            return next(iter(self.texts.values()))
        return " / ".join(f"{kind}: {value}" for kind, value in self.texts.items())

    def fill(self, relation_type: str, parent_label: str, child_label: str) -> str:
        """The question for one relation: this template's text with both labels filled in."""
        return fill_template(self.text_for(relation_type), parent_label, child_label)


@dataclass(frozen=True, slots=True)
class TemplateSet:
    """All templates of one domain, with the prompt settings a session starts from."""

    domain: str
    templates: tuple[Template, ...]
    default_type: str
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    temperature: float = 0.0
    aliases: tuple[str, ...] = ()
    source: str = ""
    name: str = DEFAULT_SET  # "natural" (the domain's default), "paper", or a user's name
    realise: bool = False  # labels said in context and articles agreed (generate.realise)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(template.id for template in self.templates)

    @property
    def relation_types(self) -> tuple[str, ...]:
        """Every relation type some template has a text for, in file order."""
        seen: dict[str, None] = {}
        for template in self.templates:
            seen.update(dict.fromkeys(template.texts))
        return tuple(seen)

    def get(self, template_id: str) -> Template:
        for template in self.templates:
            if template.id == template_id:
                return template
        raise TemplateError(
            f"{self.domain} templates have no id {template_id!r} (known: {', '.join(self.ids)})"
        )

    def select(self, template_ids: Sequence[str] | None = None) -> tuple[Template, ...]:
        """The templates a run uses: `template_ids` in that order, or the first two."""
        if not template_ids:
            return self.templates[:2]
        if len(set(template_ids)) != len(template_ids):
            raise TemplateError(f"template ids repeated: {', '.join(template_ids)}")
        return tuple(self.get(template_id) for template_id in template_ids)

    def serves(self, domain: str) -> bool:
        return domain == self.domain or domain in self.aliases


@lru_cache(maxsize=4096)
def _compile(text: str) -> tuple[str | int, ...]:
    """Split a text into literal strings and placeholder indexes (0 = parent, 1 = child)."""
    parts: list[str | int] = []
    literal: list[str] = []
    for match in _TOKEN.finditer(text):
        token = match.group(0)
        if token == "{{":
            literal.append("{")
        elif token == "}}":
            literal.append("}")
        elif token in ("{", "}"):
            raise TemplateError(f"unbalanced {token!r} in {text!r} (write {token * 2} for a brace)")
        elif token.startswith("{"):
            name = match.group(1)
            if name not in PLACEHOLDERS:
                raise TemplateError(
                    f"unknown placeholder {token} in {text!r} (use {{parent}} and {{child}})"
                )
            if literal:
                parts.append("".join(literal))
                literal = []
            parts.append(PLACEHOLDERS.index(name))
        else:
            literal.append(token)
    if literal:
        parts.append("".join(literal))
    for index, name in enumerate(PLACEHOLDERS):
        if index not in parts:
            raise TemplateError(f"missing {{{name}}} in {text!r}")
    return tuple(parts)


def template_parts(text: str) -> tuple[str | int, ...]:
    """A text's literal strings and placeholder indexes (0 = parent, 1 = child), braces
    unescaped; TemplateError for a text `validate_text` refuses."""
    return _compile(text)


def validate_text(text: str) -> None:
    """Raise TemplateError when `text` lacks a placeholder, has an unknown one or a stray brace."""
    _compile(text)


def clean_label(label: str) -> str:
    """A label as it goes into a question: whitespace and newlines collapsed to one space."""
    return _SPACE.sub(" ", label).strip()


@lru_cache(maxsize=4096)
def format_string(text: str) -> str:
    """`text` as a `str.format` pattern with positional fields: "{0}" = parent, "{1}" = child.

    `format_string(text).format(parent, child)` fills in one pass (values are never re-read),
    the fast path for bulk generation; labels must already be `clean_label`-ed.
    """
    return "".join(
        part.replace("{", "{{").replace("}", "}}") if isinstance(part, str) else f"{{{part}}}"
        for part in _compile(text)
    )


def fill_template(text: str, parent_label: str, child_label: str) -> str:
    """Fill `{parent}` and `{child}` in one pass; labels are inserted literally, never re-read."""
    return format_string(text).format(clean_label(parent_label), clean_label(child_label))


def _fail(source: str, message: str) -> TemplateError:
    return TemplateError(f"{source}: {message}")


def _read_template(source: str, index: int, raw: object) -> Template:
    where = f"templates[{index}]"
    if not isinstance(raw, dict):
        raise _fail(source, f"{where} is not a table")
    template_id = raw.get("id")
    if not isinstance(template_id, str) or not template_id.strip():
        raise _fail(source, f"{where} has no id")
    template_id = template_id.strip()
    where = f"template {template_id}"
    texts = raw.get("texts")
    if not isinstance(texts, dict) or not texts:
        raise _fail(source, f"{where} has no [templates.texts] table")
    cleaned: dict[str, str] = {}
    for relation_type, text in texts.items():
        if not isinstance(text, str):
            raise _fail(source, f"{where} text for {relation_type!r} is not a string")
        # what a model is asked: no escape sequences, bidi overrides or zero-width characters
        text = cleaned[relation_type] = clean_text(text)
        try:
            validate_text(text)
        except TemplateError as error:
            raise _fail(source, f"{where} ({relation_type}): {error}") from None
    words = raw.get("words", {})
    if not isinstance(words, dict) or any(
        not isinstance(tag, str) or tag not in PARTS_OF_SPEECH for tag in words.values()
    ):
        raise _fail(source, f"{where} words must map words to one of {', '.join(PARTS_OF_SPEECH)}")
    fixed = raw.get("fixed", [])
    if not isinstance(fixed, list) or any(not isinstance(word, str) for word in fixed):
        raise _fail(source, f"{where} fixed must be a list of words")
    unknown = set(raw) - {"id", "texts", "words", "fixed"}
    if unknown:
        raise _fail(source, f"{where} has unknown keys: {', '.join(sorted(unknown))}")
    return Template(id=template_id, texts=cleaned, pos=dict(words), fixed=tuple(fixed))


def _read_name(data: dict[str, object], source: str) -> tuple[str, bool]:
    """The set's name (default: the domain's default set) and whether it is realised."""
    name = data.get("name", DEFAULT_SET)
    if not isinstance(name, str) or not is_name(name.strip()):
        raise _fail(source, "name must be a name (letters, digits, '_' and '-')")
    realise = data.get("realise", False)
    if not isinstance(realise, bool):
        raise _fail(source, "realise must be true or false")
    return name.strip(), realise


def parse_template_set(data: dict[str, object], source: str = "<templates>") -> TemplateSet:
    """Build and validate a TemplateSet from parsed TOML; errors name `source` and the template."""
    domain = data.get("domain")
    if not isinstance(domain, str) or not domain.strip():
        raise _fail(source, 'missing domain = "..."')
    if not is_name(domain.strip()):
        raise _fail(source, f"domain {domain[:80]!r} is not a name (letters, digits, '_' and '-')")
    raw_templates = data.get("templates")
    if not isinstance(raw_templates, list) or not raw_templates:
        raise _fail(source, "no [[templates]] defined")
    templates = tuple(_read_template(source, index, raw) for index, raw in enumerate(raw_templates))
    seen: set[str] = set()
    for template in templates:
        if template.id in seen:
            raise _fail(source, f"duplicate template id {template.id}")
        seen.add(template.id)
    relation_types: dict[str, None] = {}
    for template in templates:
        relation_types.update(dict.fromkeys(template.texts))
    for template in templates:
        for relation_type in relation_types:
            if relation_type not in template.texts:
                raise _fail(
                    source,
                    f"template {template.id} has no text for relation type {relation_type!r}",
                )
    default_type = data.get("default_type", next(iter(relation_types)))
    if default_type not in relation_types:
        raise _fail(source, f"default_type {default_type!r} has no template texts")
    system_prompt = data.get("system_prompt", DEFAULT_SYSTEM_PROMPT)
    if not isinstance(system_prompt, str):
        raise _fail(source, "system_prompt must be a string")
    system_prompt = clean_text(system_prompt)
    temperature = data.get("temperature", 0.0)
    if (
        isinstance(temperature, bool)
        or not isinstance(temperature, int | float)
        or not math.isfinite(temperature)
        or temperature < 0
    ):
        raise _fail(source, "temperature must be a finite number >= 0")
    aliases = data.get("aliases", [])
    if not isinstance(aliases, list) or any(
        not isinstance(alias, str) or not is_name(alias) for alias in aliases
    ):
        raise _fail(source, "aliases must be a list of domain names")
    name, realise = _read_name(data, source)
    return TemplateSet(
        domain=domain.strip(),
        templates=templates,
        default_type=str(default_type),
        system_prompt=system_prompt,
        temperature=float(temperature),
        aliases=tuple(aliases),
        source=source,
        name=name,
        realise=realise,
    )


def load_template_file(path: str | Path) -> TemplateSet:
    """Read one template TOML file (TemplateError naming the file on any problem)."""
    path = Path(path)
    if not path.exists():
        raise TemplateError(f"{path}: no such template file")
    text = read_input_text(path, str(path), TemplateError)
    return parse_template_set(loads_toml(text, str(path), TemplateError), str(path))


def _files(folder: Path) -> Iterable[Path]:
    return sorted(folder.glob("*.toml")) if folder.is_dir() else ()


def all_template_sets() -> dict[tuple[str, str], TemplateSet]:
    """Every available template set by (domain, name): built-in ones, then user ones
    replacing them."""
    sets: dict[tuple[str, str], TemplateSet] = {}
    for folder in (asset_path("templates"), paths.config_dir() / "templates"):
        for path in _files(folder):
            template_set = load_template_file(path)
            sets[template_set.domain, template_set.name] = template_set
    return sets


def list_template_sets(name: str = DEFAULT_SET) -> dict[str, TemplateSet]:
    """The template sets of one name (default: each domain's default set) by domain."""
    return {
        domain: found
        for (domain, set_name), found in all_template_sets().items()
        if set_name == name
    }


def load_template_set(domain_or_path: str | Path, domain: str | None = None) -> TemplateSet:
    """A template set by file path (anything ending in .toml, existing or not a name), by set name
    (`paper`, `natural`: that set of `domain`, the KG's) or by domain name.

    For a user's `--templates` choice only; a KG's domain goes to `template_set_for_domain`,
    which never reads a path."""
    choice = str(domain_or_path)
    if choice in SET_NAMES:
        if domain is None:
            raise TemplateError(f"template set {choice!r} is chosen for a KG: give the KG too")
        return template_set_for_domain(domain, choice)
    candidate = Path(domain_or_path)
    if choice.endswith(".toml") or candidate.exists() or not is_name(choice):
        return load_template_file(candidate)  # a path: its checks say what is wrong with it
    return template_set_for_domain(choice)


def resolve_template_set(choice: TemplateSet | str | None, domain: str) -> TemplateSet:
    """The set a session of a KG of `domain` uses: `choice` as given (a set, a file, a set
    name such as `paper`, a domain), or the domain's default set."""
    if isinstance(choice, TemplateSet):
        return choice
    return load_template_set(choice, domain) if choice else template_set_for_domain(domain)


def template_set_for_domain(domain: str, name: str = DEFAULT_SET) -> TemplateSet:
    """The template set `name` of a domain name (a KG's `domain`): never read as a file path."""
    if domain and not is_name(domain):
        raise TemplateError(
            f"no templates for domain {domain[:80]!r}: a domain is a name "
            "(letters, digits, '_' and '-'); pass --templates FILE"
        )
    sets = list_template_sets(name)
    if domain in sets:
        return sets[domain]
    for template_set in sets.values():
        if template_set.serves(domain):
            return template_set
    known = ", ".join(sorted(sets)) or "none"
    which = "templates" if name == DEFAULT_SET else f"{name} templates"
    raise TemplateError(f"no {which} for domain {domain!r} (known: {known}); pass --templates FILE")


def _toml_string(value: str) -> str:
    """A TOML basic string (JSON string escapes are valid TOML escapes)."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def dumps_template_set(template_set: TemplateSet) -> str:
    """The TOML text of a template set, in the schema `load_template_file` reads back."""
    lines = [
        f"domain = {_toml_string(template_set.domain)}",
        f"name = {_toml_string(template_set.name)}",
        f"realise = {'true' if template_set.realise else 'false'}",
        f"aliases = [{', '.join(_toml_string(alias) for alias in template_set.aliases)}]",
        f"system_prompt = {_toml_string(template_set.system_prompt)}",
        f"temperature = {float(template_set.temperature)!r}",
        f"default_type = {_toml_string(template_set.default_type)}",
    ]
    for template in template_set.templates:
        lines += ["", "[[templates]]", f"id = {_toml_string(template.id)}"]
        if template.fixed:
            lines.append(f"fixed = [{', '.join(_toml_string(word) for word in template.fixed)}]")
        lines.append("[templates.texts]")
        lines += [
            f"{_toml_string(kind)} = {_toml_string(text)}" for kind, text in template.texts.items()
        ]
        if template.pos:
            lines.append("[templates.words]")
            lines += [
                f"{_toml_string(word)} = {_toml_string(tag)}" for word, tag in template.pos.items()
            ]
    return "\n".join(lines) + "\n"


def user_template_path(domain: str) -> Path:
    """Where the user's copy of a domain's template set lives (it replaces the built-in one)."""
    if not is_name(domain):
        raise TemplateError(f"no templates for domain {domain[:80]!r}: a domain is a name")
    return paths.config_dir() / "templates" / f"{domain}.toml"


def restore_builtin_templates(domain: str) -> Path | None:
    """Remove the user's copy of a domain's templates, so the built-in set is used again;
    the path removed, or None when there was no copy."""
    target = user_template_path(domain)
    if not target.is_file():
        return None
    target.unlink()
    return target


def with_template(template_set: TemplateSet, template: Template) -> TemplateSet:
    """The set with `template` in place of the one with its id, or added at the end."""
    if template.id in template_set.ids:
        templates = tuple(template if t.id == template.id else t for t in template_set.templates)
    else:
        templates = (*template_set.templates, template)
    return replace(template_set, templates=templates)


_WORD = re.compile(r"\{(?:parent|child)\}|(\w+(?:['’-]\w+)*)")


def template_words(text: str) -> list[str]:
    """The words of a template text that could vary (placeholders left out), each once."""
    seen: dict[str, None] = {}
    for match in _WORD.finditer(text):
        if match.group(1):
            seen.setdefault(match.group(1), None)
    return list(seen)


def save_template_set(template_set: TemplateSet, path: str | Path | None = None) -> Path:
    """Validate and write a template set; default: the user's `<config>/templates/<domain>.toml`,
    which then replaces the built-in set of that domain."""
    text = dumps_template_set(template_set)
    target = Path(path) if path else user_template_path(template_set.domain)
    parse_template_set(tomllib.loads(text), str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target
