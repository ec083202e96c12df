"""An explanation card as text, Markdown, standalone HTML (escaped, no script) or SVG.

All four show the same things in the same order: the title and the fact tested, what the
knowledge graph says (its source, the right answer) and which reply it contradicts, whether
asking again confirmed it (when it was asked again), the one-line headline, where the error
stands among the relation's answers and any doubt about an implied fact, how the model was
asked (a chat and its system prompt, or a text it completed), every conversation (each
question in full with the template's text it was filled from, the prompt a completions
model continued, the reply as it came, what was read from it and whether that is right,
how sure the model was when that is known), why it is an error, and the session it comes
from. Text from the model or the KG is escaped for each format (Markdown punctuation, HTML
entities, Rich markup never parsed). The SVG is Rich's console export of `card_to_rich`,
which the explorer shows too.
"""

from __future__ import annotations

import io
import re
import textwrap
from collections.abc import Sequence
from functools import cache
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from kontest_tui.errors import InvalidInputError
from kontest_tui.report.explain import CardChat, CardTurn, ExplanationCard
from kontest_tui.safe_text import escape_unsafe

if TYPE_CHECKING:  # Rich is imported where a card is drawn with it (SVG, the explorer)
    from rich.text import Text

CARD_FORMATS = ("text", "markdown", "html", "svg")
WIDTH = 88  # text and SVG width in columns


@cache
def offline_svg_format() -> str:
    """Rich's SVG page without its @font-face rules, which fetch Fira Code from a CDN: a
    card is drawn with the fonts of the machine that shows it (offline first)."""
    from rich._export_format import CONSOLE_SVG_FORMAT

    return re.sub(r"@font-face \{\{.*?\}\}\s*", "", CONSOLE_SVG_FORMAT, flags=re.S).replace(
        "font-family: Fira Code, monospace;",
        "font-family: Fira Code, ui-monospace, Menlo, Consolas, monospace;",
    )


def render_cards(cards: Sequence[ExplanationCard], fmt: str = "text") -> str:
    """Several cards in one document (one SVG per card is joined only for text formats)."""
    if fmt == "markdown":
        return cards_markdown(cards)
    if fmt == "html":
        return cards_html(cards)
    if fmt == "svg":
        if len(cards) != 1:
            raise InvalidInputError("an SVG holds one card: choose one with --error N")
        return card_svg(cards[0])
    return "\n".join(card_text(card) for card in cards)


def _source(card: ExplanationCard) -> str:
    parts = []
    if card.model:
        parts.append(f"model {card.model}")
    if card.session:
        parts.append(f"session {card.session}")
    return ", ".join(parts)


def _answer_line(turn: CardTurn) -> str:
    """`no (wrong: the knowledge graph says yes)`: the reading, held to the right answer."""
    return f"{turn.read} ({turn.judged})" if turn.judged else turn.read


def reply_shown(raw: str | None) -> str:
    """A reply as a card shows it: as it came, in quotes when spaces start or end it (a
    completions model's " No"), "(no reply)" when there is none."""
    if raw is None:
        return "(no reply)"
    return f'"{raw}" (quoted to show its spaces)' if raw != raw.strip() else raw


def sureness(p_yes: float) -> str:
    """`P(yes) 0.42 of yes or no`: how sure the model was of a reply."""
    return f"P(yes) {p_yes:.2f} of yes or no"


def shared_system(card: ExplanationCard) -> str | None:
    """The system prompt every conversation of the card began with (shown once), or None
    when they differ or have none (then each chat shows its own)."""
    prompts = {chat.system for chat in card.chats}
    return prompts.pop() if len(prompts) == 1 else None


TRY_MARK = "  • "  # a try of the confirmation, under "Asked again"


def _preface(card: ExplanationCard) -> list[str]:
    """The sentences between the fact and the headline: what the graph says, the wrong
    reply, the confirmation and its tries (each starting with TRY_MARK), the weak mark or
    that no margin is known."""
    lines = [line for line in (card.knowledge, card.wrong) if line]
    if card.confirmation:
        lines.append(f"Asked again: {card.confirmation}")
        lines += [TRY_MARK + line for line in card.tries]
    if card.margin:
        lines.append(card.margin)
    return lines


def _wrapped(sentence: str, width: int) -> list[str]:
    """A preface sentence wrapped; a try's lines indented under its mark."""
    if sentence.startswith(TRY_MARK):
        return textwrap.wrap(
            sentence[len(TRY_MARK) :],
            width,
            initial_indent=TRY_MARK,
            subsequent_indent=" " * len(TRY_MARK),
        )
    return textwrap.wrap(sentence, width)


def _context(card: ExplanationCard) -> list[str]:
    """The sentences after the headline: the finding, the doubts, how the model was asked."""
    lines = [card.finding] if card.finding else []
    lines += card.doubts
    if card.asked:
        lines.append(card.asked)
    system = shared_system(card)
    if system:
        lines.append(f"System prompt: “{system}”")
    return lines


# -- text ------------------------------------------------------------------------------------


def card_text(card: ExplanationCard, *, width: int = WIDTH) -> str:
    """The card as plain text wrapped at `width` columns."""
    lines = [card.title, "=" * min(len(card.title), width), f"Fact tested: {card.fact}"]
    for sentence in _preface(card):
        lines += _wrapped(sentence, width)
    lines += [""] + textwrap.wrap(card.headline, width) + [""]
    context = _context(card)
    for sentence in context:
        lines += textwrap.wrap(sentence, width)
    if context:
        lines.append("")
    shared = shared_system(card)
    for chat in card.chats:
        lines.append(chat.heading)
        if chat.system and not shared:
            lines += _field("System", chat.system, width)
        for turn in chat.turns:
            lines += _field("Question", turn.question, width)
            if turn.phrasing:
                lines += _field("Template", turn.phrasing, width)
            if turn.prompt:
                lines += _field("Prompt", turn.prompt, width)
            lines += _field("Reply", reply_shown(turn.raw), width)
            lines += _field("Read as", _answer_line(turn), width)
            if turn.p_yes is not None:
                lines += _field("How sure", sureness(turn.p_yes), width)
        lines.append("")
    lines.append("Why this is an error" if card.error else "Why this passed")
    for reason in card.reasons:
        lines += textwrap.wrap(reason, width, initial_indent="- ", subsequent_indent="  ")
    if card.expected:
        lines += ["", f"Right answer: {card.expected}"]
    source = _source(card)
    if source:
        lines += ["", f"From {source}."]
    return "\n".join(lines) + "\n"


def _field(name: str, value: str, width: int) -> list[str]:
    head = f"  {name + ':':<10}"
    out: list[str] = []
    for index, paragraph in enumerate(value.splitlines() or [""]):
        wrapped = textwrap.wrap(paragraph, max(20, width - len(head))) or [""]
        for number, line in enumerate(wrapped):
            prefix = head if index == 0 and number == 0 else " " * len(head)
            out.append(prefix + line)
    return out


# -- Markdown --------------------------------------------------------------------------------

_MARKDOWN_SPECIAL = "\\`*_[]<>#|~&"
# What starts a list item or a heading underline at the start of a line.
_LINE_START = re.compile(r"^(\s*)([-+](?=\s|$)|=+(?=\s*$))")
_NUMBERED = re.compile(r"^(\s*\d+)([.)])(?=\s|$)")


def escape_markdown(text: str) -> str:
    """Text shown literally in Markdown: the characters that format escaped (and a line
    that would start a list or a heading), lines kept as line breaks."""
    escaped = "".join(f"\\{char}" if char in _MARKDOWN_SPECIAL else char for char in text)
    lines = [
        _NUMBERED.sub(r"\1\\\2", _LINE_START.sub(r"\1\\\2", line)) for line in escaped.splitlines()
    ]
    return "  \n".join(lines)


def _code_block(text: str, indent: str) -> str:
    """Text shown verbatim in Markdown: a fenced block longer than any backtick run in it."""
    fence = "`" * max(3, max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    body = "\n".join(indent + line for line in text.splitlines())
    return f"{indent}{fence}text\n{body}\n{indent}{fence}"


def cards_markdown(cards: Sequence[ExplanationCard], *, level: int = 2) -> str:
    """Cards as Markdown (headings at `level`)."""
    parts = [_card_markdown(card, level) for card in cards]
    return "\n".join(parts)


def _card_markdown(card: ExplanationCard, level: int) -> str:
    head = "#" * level
    out = [
        f"{head} {escape_markdown(card.title)}",
        "",
        f"**Fact tested:** {escape_markdown(card.fact)}",
        "",
    ]
    for sentence in _preface(card):
        if sentence.startswith(TRY_MARK):
            out[-1:] = [f"- {escape_markdown(sentence[len(TRY_MARK) :])}", ""]
        else:
            out += [escape_markdown(sentence), ""]
    out += [escape_markdown(card.headline), ""]
    for sentence in _context(card):
        out += [escape_markdown(sentence), ""]
    shared = shared_system(card)
    for chat in card.chats:
        out += [f"{head}# {escape_markdown(chat.heading)}", ""]
        if chat.system and not shared:
            out += [f"System prompt: {escape_markdown(chat.system)}", ""]
        for turn in chat.turns:
            out.append(f"- **Question:** {escape_markdown(turn.question)}")
            if turn.phrasing:
                out.append(f"  - Template: {escape_markdown(turn.phrasing)}")
            if turn.prompt:
                out += ["  - Prompt:", "", _code_block(turn.prompt, "    "), ""]
            out.append(f"  - Reply: {escape_markdown(reply_shown(turn.raw))}")
            judged = f" ({escape_markdown(turn.judged)})" if turn.judged else ""
            out.append(f"  - Read as: **{escape_markdown(turn.read)}**{judged}")
            if turn.p_yes is not None:
                out.append(f"  - How sure: {escape_markdown(sureness(turn.p_yes))}")
        out.append("")
    out += [f"{head}# {'Why this is an error' if card.error else 'Why this passed'}", ""]
    out += [f"- {escape_markdown(reason)}" for reason in card.reasons]
    if card.expected:
        out += ["", f"Right answer: **{escape_markdown(card.expected)}**"]
    source = _source(card)
    if source:
        out += ["", f"_From {escape_markdown(source)}._"]
    return "\n".join(out) + "\n"


# -- HTML ------------------------------------------------------------------------------------

CARD_CSS = (
    "body{font-family:system-ui,sans-serif;margin:1.5em;max-width:60em;color:#24292f}"
    ".card{border:1px solid #d0d7de;border-radius:8px;padding:1em 1.5em;margin-bottom:1.5em}"
    ".fact{font-weight:600}.chat{border-left:3px solid #8c959f;padding-left:1em;margin:1em 0}"
    ".chat h3{font-size:1em;margin:.2em 0}"
    ".turn{margin:.4em 0}.q{font-weight:600}.phrasing,.source{color:#57606a}"
    ".reply{white-space:pre-wrap;background:#f6f8fa;padding:.2em .4em;border-radius:4px}"
    ".wrong{color:#cf222e;font-weight:600}.right{color:#1a7f37}.try{margin:.2em 0 .2em 1.5em}"
    ".prompt{white-space:pre-wrap;background:#f6f8fa;padding:.4em;margin:.2em 0;"
    "font-family:ui-monospace,monospace;font-size:.9em}"
)


def cards_html(cards: Sequence[ExplanationCard], *, title: str | None = None) -> str:
    """A standalone HTML page of cards: no script, no network, everything escaped."""
    heading = title or (cards[0].title if len(cards) == 1 else "Explained errors")
    body = "".join(card_html(card) for card in cards)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(heading)}</title><style>{CARD_CSS}</style></head>"
        f"<body>{body}</body></html>\n"
    )


def card_html(card: ExplanationCard, *, level: int = 2) -> str:
    """One card as an HTML fragment (a `section`), escaped."""
    parts = [
        '<section class="card">',
        f"<h{level}>{escape(card.title)}</h{level}>",
        f'<p class="fact">Fact tested: {escape(card.fact)}</p>',
    ]
    for sentence in _preface(card):
        if sentence.startswith(TRY_MARK):
            parts.append(f'<p class="try">• {escape(sentence[len(TRY_MARK) :])}</p>')
        else:
            parts.append(f"<p>{escape(sentence)}</p>")
    parts.append(f"<p>{escape(card.headline)}</p>")
    parts += [f"<p>{escape(sentence)}</p>" for sentence in _context(card)]
    shared = shared_system(card)
    parts += [_chat_html(chat, shared is None) for chat in card.chats]
    why = "Why this is an error" if card.error else "Why this passed"
    parts.append(f"<h{level + 1}>{why}</h{level + 1}><ul>")
    parts += [f"<li>{escape(reason)}</li>" for reason in card.reasons]
    parts.append("</ul>")
    if card.expected:
        parts.append(f"<p>Right answer: <b>{escape(card.expected)}</b></p>")
    source = _source(card)
    if source:
        parts.append(f'<p class="source">From {escape(source)}.</p>')
    parts.append("</section>")
    return "".join(parts)


def _chat_html(chat: CardChat, own_system: bool = True) -> str:
    parts = [f'<div class="chat"><h3>{escape(chat.heading)}</h3>']
    if chat.system and own_system:
        parts.append(f'<div class="phrasing">System prompt: {escape(chat.system)}</div>')
    for turn in chat.turns:
        parts.append('<div class="turn">')
        parts.append(f'<div>Question: <span class="q">{escape(turn.question)}</span></div>')
        if turn.phrasing:
            parts.append(f'<div class="phrasing">Template: {escape(turn.phrasing)}</div>')
        if turn.prompt:
            parts.append(f'<div>Prompt:<div class="prompt">{escape(turn.prompt)}</div></div>')
        reply = escape(reply_shown(turn.raw))
        parts.append(f'<div>Reply: <span class="reply">{reply}</span></div>')
        judged = ""
        if turn.judged:
            style = "wrong" if turn.judged.startswith("wrong") else "right"
            judged = f' <span class="{style}">({escape(turn.judged)})</span>'
        parts.append(f"<div>Read as: <b>{escape(turn.read)}</b>{judged}</div>")
        if turn.p_yes is not None:
            parts.append(f"<div>How sure: {escape(sureness(turn.p_yes))}</div>")
        parts.append("</div>")
    parts.append("</div>")
    return "".join(parts)


# -- Rich and SVG ----------------------------------------------------------------------------


def _preface_style(sentence: str) -> str:
    """The confirmation's status in bold, the weak mark in yellow."""
    if sentence.startswith("Asked again: "):
        return "bold"
    return "yellow" if sentence.startswith("Weak: ") else ""


def card_to_rich(card: ExplanationCard, *, source: bool = True) -> Text:
    """The card as Rich Text (no markup is parsed: model text is appended as it is);
    `source`: end with the model and session it comes from."""
    from rich.text import Text

    text = Text()
    text.append(card.title + "\n", style="bold red" if card.error else "bold green")
    text.append("Fact tested: ", style="dim")
    text.append(card.fact + "\n", style="bold")
    for sentence in _preface(card):
        text.append(sentence + "\n", style=_preface_style(sentence))
    text.append("\n" + card.headline + "\n\n", style="bold")
    context = _context(card)
    for sentence in context:
        text.append(sentence + "\n", style="italic")
    if context:
        text.append("\n")
    shared = shared_system(card)
    for chat in card.chats:
        text.append(chat.heading + "\n", style="bold cyan")
        if chat.system and not shared:
            text.append("  System:   ", style="dim")
            text.append(chat.system + "\n")
        for turn in chat.turns:
            text.append("  Question: ", style="dim")
            text.append(turn.question + "\n")
            if turn.phrasing:
                text.append("  Template: ", style="dim")
                text.append(turn.phrasing + "\n", style="italic")
            if turn.prompt:
                text.append("  Prompt:\n", style="dim")
                text.append(
                    "".join(f"    {line}\n" for line in turn.prompt.splitlines()), style="dim"
                )
            text.append("  Reply:    ", style="dim")
            text.append(reply_shown(turn.raw) + "\n")
            text.append("  Read as:  ", style="dim")
            style = {"yes": "green", "no": "red"}.get(turn.read, "yellow")
            text.append(turn.read, style=f"bold {style}")
            if turn.judged:
                wrong = turn.judged.startswith("wrong")
                text.append(f" ({turn.judged})", style="bold red" if wrong else "green")
            text.append("\n")
            if turn.p_yes is not None:
                text.append("  How sure: ", style="dim")
                text.append(sureness(turn.p_yes) + "\n")
        text.append("\n")
    text.append(("Why this is an error" if card.error else "Why this passed") + "\n", style="bold")
    for reason in card.reasons:
        text.append(f"• {reason}\n")
    if card.expected:
        text.append("Right answer: ", style="dim")
        text.append(card.expected + "\n", style="bold")
    origin = _source(card)
    if origin and source:
        text.append(f"From {origin}.\n", style="dim")
    return text


def card_svg(card: ExplanationCard, *, width: int = WIDTH) -> str:
    """The card drawn as an SVG (Rich's console export), titled with the card's title."""
    from rich.console import Console

    console = Console(
        record=True, width=width, file=io.StringIO(), color_system="truecolor", force_terminal=True
    )
    console.print(card_to_rich(card))
    return console.export_svg(title=f"kontest · {card.title}", code_format=offline_svg_format())


def write_card_files(card: ExplanationCard, folder: Path, stem: str) -> list[Path]:
    """Write a card as Markdown, SVG and standalone HTML side by side (`stem`.md/.svg/.html
    in `folder`, made when missing); their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for suffix, text in (
        (".md", cards_markdown([card])),
        (".svg", card_svg(card)),
        (".html", cards_html([card])),
    ):
        path = folder / f"{stem}{suffix}"
        path.write_text(escape_unsafe(text), encoding="utf-8")
        written.append(path)
    return written
