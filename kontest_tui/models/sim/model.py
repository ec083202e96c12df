"""The simulated system under test: a deterministic, profile-driven imperfect LLM.

`decide_answer` and `decide_fault` are pure functions of (profile, seed, the chat's user
turns[, attempt number]), so the same chat gets the same answer in-process (`sim:PROFILE`)
and over HTTP (`kontest sim serve`, models/sim/server.py), whatever the order or concurrency.
The question's relation is recognised by matching the template texts of assets/templates
(and user template files); FactChecker and logic-rule probes (assets/probes) are answered by
sim/probes.py from the same knowledge of each fact; an unrecognised question falls back to
its normalised text. Profiles (sim/profile.py) are data: assets/models/*.toml.
The template patterns are read once per in-process model, or re-checked at most once a second
by `kontest sim serve`, not per question; the KG's names are looked up in a dict
(sim/entities.py): a question costs the same whatever the KG's size.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from kontest_tui.domain.answers import is_refusal, parse_answer
from kontest_tui.domain.records import Answer, Conversation
from kontest_tui.errors import KontestError, ModelError
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.models.base import ChatRequest, ChatResult, Message, TokenCallback
from kontest_tui.models.provider import ModelSpec
from kontest_tui.models.providers.sim import PREFIX, spec_text
from kontest_tui.models.sim.entities import EntityFinder
from kontest_tui.models.sim.probes import answer_probe, probe_size
from kontest_tui.models.sim.profile import (
    DEFAULT_PROFILE,
    INVALID_UTF8,
    ParsedQuestion,
    SimProfile,
    draw,
    load_profile,
    normalise,
    pick,
    template_error_rate,
)
from kontest_tui.resources import asset_path

MAX_COUNTED_CHATS = 1_000_000
LONG_TEXT_CHUNK = 8192  # long answers stream in chunks of this many characters
JSON_POSTFIX = "Return a JSON Boolean."  # covering-array variants ask for true/false
FAULTS = ("rate_limit", "server_error", "dropped_stream", "slow_first_byte")

_TOKEN = re.compile(r"\s*[\w']+|\s*[^\w\s]+|\s+")
# (pattern, template id, relation type, characters of the text that are not placeholders,
# the lower-cased ASCII words any text it matches has: a cheap test before the regex)
Patterns = tuple[tuple[re.Pattern[str], str, str, int, tuple[str, ...]], ...]


# ---------------------------------------------------------------------------- questions


_PLURAL_VERBS = {"is": "are", "does": "do", "has": "have", "was": "were"}
_SLOT_ARTICLE = re.compile(r"(?:(?<=\s)|^)(?:a|an|the)\s+$", re.IGNORECASE)


def _literal(text: str, words: list[str] | None = None) -> str:
    """`text` as a regex (any whitespace between its words); its words (lower-cased, the
    ASCII ones) are added to `words`, when given: a text it matches has each of them."""
    if words is not None:
        words.extend(word.lower() for word in text.split(" ") if word and word.isascii())
    return r"\s+".join(re.escape(word) for word in text.split(" "))


def _loose_literal(text: str, *, first: bool, last: bool, words: list[str] | None = None) -> str:
    """A realised literal as a regex: the opening verb in either number, an article before
    the next slot optional (any of a, an, the), a "?" after a closing quote optional."""
    head, article = text, ""
    if not last and _SLOT_ARTICLE.search(text):
        head, article = _SLOT_ARTICLE.sub("", text), r"(?:(?:a|an|the)\s+)?"
    tail = ""
    if last and head.endswith(('"?', "”?")):
        head, tail = head[:-1], r"\??"
    verb = ""
    if first:
        word = head.split(" ", 1)[0]
        if word.lower() in _PLURAL_VERBS:
            verb = f"(?:{re.escape(word)}|{_PLURAL_VERBS[word.lower()]})"
            head = head[len(word) :]
    return verb + (_literal(head, words) if head else "") + article + tail


def _pattern_for(
    text: str, realised: bool = False, words: list[str] | None = None
) -> re.Pattern[str] | None:
    """A template text as a regex, placeholders as groups. A realised set's question may
    differ from its text where realisation settled it (generate.realise): the opening verb
    agrees with a plural name ("Are ..."), an article before a slot is dropped or changed,
    and a title ending in "?" ends the question: `realised` lets those through. `words`
    (when given) receives the words every text the regex matches has (_literal)."""
    parts = re.split(r"(\{parent\}|\{child\})", " ".join(text.split()))
    if "{parent}" not in parts or "{child}" not in parts:
        return None
    regex = []
    for index, part in enumerate(parts):
        if part in ("{parent}", "{child}"):
            regex.append(f"(?P<{part[1:-1]}>.+?)")
            continue
        literal = part.replace("{{", "{").replace("}}", "}")
        if realised:
            regex.append(
                _loose_literal(literal, first=index == 0, last=index == len(parts) - 1, words=words)
            )
        else:
            regex.append(_literal(literal, words))
    return re.compile("".join(regex), re.IGNORECASE)


def _template_files_signature() -> tuple[tuple[str, int], ...]:
    """Built-in and user template files with their mtimes: the patterns' cache key."""
    from kontest_tui import paths

    files: list[tuple[str, int]] = []
    for folder in (asset_path("templates"), paths.config_dir() / "templates"):
        if folder.is_dir():
            for path in sorted(folder.glob("*.toml")):
                try:
                    files.append((str(path), path.stat().st_mtime_ns))
                except OSError:
                    continue
    return tuple(files)


def _template_patterns() -> Patterns:
    """(pattern, template id, relation type), most literal text first; re-read when a
    template file (built-in or the user's) appears, changes or goes."""
    return _patterns_for(_template_files_signature())


@lru_cache(maxsize=4)
def _patterns_for(signature: tuple[tuple[str, int], ...]) -> Patterns:
    """(pattern, template id, relation type, literal characters, words), most literal text
    first."""
    from kontest_tui.generate.templates import load_template_file

    found: list[tuple[int, re.Pattern[str], str, str, tuple[str, ...]]] = []
    for path, _mtime in signature:
        try:
            template_set = load_template_file(path)
        except (KontestError, OSError):
            continue  # a broken user file must not hide the others
        for template in template_set.templates:
            for relation_type, text in template.texts.items():
                words: list[str] = []
                pattern = _pattern_for(text, template_set.realise, words)
                if pattern is not None:
                    literal = len(text) - len("{parent}{child}")
                    found.append((literal, pattern, template.id, relation_type, tuple(words)))
    found.sort(key=lambda item: -item[0])
    return tuple(
        (pattern, tid, rtype, literal, words) for literal, pattern, tid, rtype, words in found
    )


class TemplatePatterns:
    """The template patterns as of the last check: re-read when a template file appears,
    changes or goes, checked at most every `recheck` seconds (None: read once)."""

    def __init__(self, recheck: float | None = None) -> None:
        self.recheck = recheck
        self._patterns: Patterns | None = None
        self._checked = 0.0

    def current(self) -> Patterns:
        """The patterns, reading the template files' signature only when due."""
        now = time.monotonic()
        if self._patterns is None or (
            self.recheck is not None and now - self._checked >= self.recheck
        ):
            self._patterns = _template_patterns()
            self._checked = now
        return self._patterns


def parse_question(question: str, patterns: Patterns | None = None) -> ParsedQuestion | None:
    """Recognise a filled template text; None when no known template matches.

    `patterns` default: the template files as they are now (checked on every call)."""
    patterns = patterns or _template_patterns()
    global _parsed
    known, parsed = _parsed
    if known is not patterns or len(parsed) >= MAX_PARSED:  # the set changed, or memory
        parsed = {}
        _parsed = (patterns, parsed)
    if question not in parsed:  # a question comes back (a sequential turn's atomic twin)
        parsed[question] = _parse_question(question, patterns)
    return parsed[question]


MAX_PARSED = 50_000
# The patterns the parsed questions were read with (held, so its identity stays its own).
_parsed: tuple[Patterns | None, dict[str, ParsedQuestion | None]] = (None, {})


def _parse_question(question: str, patterns: Patterns) -> ParsedQuestion | None:
    text = " ".join(question.split())
    # An ASCII text lacking a word of a pattern cannot match it (for ASCII, lower() and the
    # regex's IGNORECASE agree): most patterns are passed over without the regex, which
    # tries every split of the text between the placeholders before it fails.
    lowered = text.lower() if text.isascii() else None
    for pattern, template_id, relation_type, literal, words in patterns:
        if lowered is not None and not _has_words(lowered, words):
            continue
        match = pattern.fullmatch(text)
        if match:
            if probe_size(question) > literal:
                return None  # a probe template says more of it (sim.probes.probe_size)
            return ParsedQuestion(
                template_id,
                relation_type,
                match.group("parent").strip(),
                match.group("child").strip(),
            )
    return None


def _has_words(text: str, words: tuple[str, ...]) -> bool:
    for word in words:  # noqa: SIM110 (a loop: all() of a generator costs ~3x more)
        if word not in text:
            return False
    return True


# ---------------------------------------------------------------------------- decisions


def strip_json_postfix(question: str) -> tuple[str, bool]:
    """The question without a trailing "Return a JSON Boolean." and whether it had one."""
    text = question.rstrip()
    if text.lower().endswith(JSON_POSTFIX.lower()):
        return text[: -len(JSON_POSTFIX)].rstrip(), True
    return question, False


@lru_cache(maxsize=65536)
def fact_draw(seed: int, *parts: str) -> float:
    """draw() for the draws that depend on the fact alone (a relation's fact is drawn again
    for each of its questions: its atomic and sequential turns, with each template)."""
    return draw(seed, *parts)


@dataclass(frozen=True, slots=True)
class SimReply:
    """What the simulated model says and how sure it was: `p_yes`, P(yes | yes or no) of its
    first token (None for a hostile reply), greater than 0.5 exactly when it says yes at
    temperature 0."""

    text: str
    p_yes: float | None


# How far from a coin toss (0.5) the simulated model's yes/no probability lies: a fact it
# knows 0.30-0.47 (p 0.80-0.97), a template or wording error as far (a confident slip), a
# fact it guesses (yes-bias) 0.02-0.14, a flip on a later turn 0.03-0.15, an unsure reply
# within 0.05, a probe question 0.10-0.45.
_KNOWN = (0.30, 0.17)
_GUESSED = (0.02, 0.12)
_FLIPPED = (0.03, 0.12)
_UNSURE = (0.0, 0.05)
_PROBE = (0.10, 0.35)


def _strength(span: tuple[float, float], unit: float) -> float:
    return span[0] + span[1] * unit


def _p_yes(says_yes: bool, strength: float) -> float:
    return round(0.5 + strength if says_yes else 0.5 - strength, 4)


def sampled_yes(p_yes: float, temperature: float, unit: float) -> bool:
    """A yes/no answer sampled at `temperature` from P(yes) = p_yes (`unit` uniform in [0, 1)):
    the logit divided by the temperature, as a sampler does."""
    p = min(max(p_yes, 1e-6), 1 - 1e-6)
    logit = math.log(p / (1 - p)) / temperature
    return unit < 1 / (1 + math.exp(-logit))


def decide_answer(
    profile: SimProfile,
    seed: int,
    questions: Sequence[str],
    entities: EntityFinder | None = None,
    patterns: Patterns | None = None,
) -> str:
    """The answer to the last of `questions` (the chat's user turns, in order) at temperature 0.

    `entities` (from the session's KG) recognises relations in questions that match no
    template (covering-array variants); those get an extra wording error `variant_error`.
    FactChecker and logic-rule questions are answered by sim.probes.answer_probe.
    `patterns` are the template patterns to recognise (default: the files as they are now).
    """
    return decide_reply(profile, seed, questions, entities, patterns).text


def decide_reply(
    profile: SimProfile,
    seed: int,
    questions: Sequence[str],
    entities: EntityFinder | None = None,
    patterns: Patterns | None = None,
    *,
    temperature: float = 0.0,
    sample_seed: int | None = None,
) -> SimReply:
    """`decide_answer` with its margin (SimReply.p_yes). The model (what it knows, its slips)
    is `seed`'s; at `temperature` > 0 the yes/no answer of a KONTEST or variant question is
    sampled from its margin with `sample_seed` (a call's own seed: domain.seeds.draw_seed),
    so two seeds differ where the model is unsure and the same seed repeats its answer."""
    if not questions:
        return SimReply(pick(profile.unsure_styles, 0.0), 0.5)
    chat = tuple(normalise(question) for question in questions)
    question, json_boolean = strip_json_postfix(questions[-1])
    parsed = parse_question(question, patterns)
    if parsed is None:
        probe_answer = answer_probe(profile, seed, chat, question, entities, json_boolean)
        if probe_answer is not None:
            return SimReply(probe_answer, _probe_margin(profile, seed, chat, probe_answer))
    found = entities.find_relation(question) if parsed is None and entities else None
    if parsed is not None:
        fact = f"{normalise(parsed.parent)}>{normalise(parsed.child)}"
    elif found is not None:
        fact = f"{normalise(found[0])}>{normalise(found[1])}"
    else:
        fact = chat[-1]
    known = fact_draw(seed, "know", fact) < profile.knowledge
    says_yes = known or fact_draw(seed, "bias", fact) < profile.yes_bias
    sure = fact_draw(seed, "sure", fact)
    strength = _strength(_KNOWN if known else _GUESSED, sure)
    key, rate = template_error_rate(profile, question, parsed)
    if rate and fact_draw(seed, "template", key, fact) < rate:
        says_yes = not says_yes
    if found is not None and draw(seed, "wording", chat[-1]) < profile.variant_error:
        says_yes = not says_yes
    if len(chat) > 1 and draw(seed, "flip", *chat) < profile.flip_rate:
        says_yes = not says_yes
        strength = _strength(_FLIPPED, sure)
    if profile.hostile_rate and draw(seed, "hostile", *chat) < profile.hostile_rate:
        return SimReply(pick(profile.hostile_answers, draw(seed, "hostile-pick", *chat)), None)
    if draw(seed, "unsure", *chat) < profile.unsure_rate:
        text = pick(profile.unsure_styles, draw(seed, "unsure-pick", *chat))
        return SimReply(text, _p_yes(says_yes, _strength(_UNSURE, sure)))
    p_yes = _p_yes(says_yes, strength)
    if temperature > 0:
        unit = draw(seed if sample_seed is None else sample_seed, "sample", *chat)
        says_yes = sampled_yes(p_yes, temperature, unit)
    if json_boolean:
        return SimReply("true" if says_yes else "false", p_yes)
    styles = profile.yes_styles if says_yes else profile.no_styles
    return SimReply(pick(styles, draw(seed, "style", *chat)), p_yes)


def _probe_margin(profile: SimProfile, seed: int, chat: Sequence[str], answer: str) -> float | None:
    """A probe reply's margin: on the side of its yes/no (None for a letter, a name or a
    hostile reply; near 0.5 for a refusal)."""
    if profile.hostile_rate and answer in profile.hostile_answers:
        return None
    said = parse_answer(answer)
    if said is Answer.INVALID and answer.strip().lower() in ("true", "false"):
        said = Answer.YES if answer.strip().lower() == "true" else Answer.NO
    unit = draw(seed, "margin", *chat)
    if said in (Answer.YES, Answer.NO):
        return _p_yes(said is Answer.YES, _strength(_PROBE, unit))
    if is_refusal(answer):
        return _p_yes(unit < 0.5, _strength(_UNSURE, unit))
    return None


def decide_fault(
    profile: SimProfile, seed: int, questions: Sequence[str], attempt: int
) -> str | None:
    """The fault of this attempt at this chat (None for a clean answer).

    Attempts from `faults.max_repeats` on never fault, so a retrying client always ends.
    """
    faults = profile.faults
    if attempt >= faults.max_repeats:
        return None
    chat = tuple(normalise(question) for question in questions)
    unit = draw(seed, "fault", str(attempt), *chat)
    for name in FAULTS:
        rate = getattr(faults, name)
        if unit < rate:
            return name
        unit -= rate
    return None


def chat_key(questions: Sequence[str]) -> str:
    """A compact key of a chat, for per-chat attempt counters."""
    text = "\x1f".join(normalise(question) for question in questions)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


class AttemptCounter:
    """How often each chat was asked (per model instance or per server)."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}

    def next(self, scope: str, questions: Sequence[str]) -> int:
        """The 0-based attempt number of this ask, counting it."""
        key = f"{scope}:{chat_key(questions)}"
        if len(self._counts) >= MAX_COUNTED_CHATS:  # bound a long-running server's memory
            self._counts.clear()
        attempt = self._counts.get(key, 0)
        self._counts[key] = attempt + 1
        return attempt


def split_tokens(text: str, limit: int | None = None) -> list[str]:
    """Split an answer into streamed pieces (words and punctuation; long texts in chunks).

    `limit` (max tokens) keeps only the first pieces, as a server's max_tokens would.
    """
    if len(text) > LONG_TEXT_CHUNK:
        pieces = [text[i : i + LONG_TEXT_CHUNK] for i in range(0, len(text), LONG_TEXT_CHUNK)]
    else:
        pieces = _TOKEN.findall(text) or [text]
    if limit is not None and limit > 0:
        pieces = pieces[:limit]
    return pieces


def received_whole(text: str, limit: int | None = None) -> tuple[str, int]:
    """(what a client reads, tokens) of an answer received in one piece: its split_tokens
    pieces as received, joined (a short answer's, one of a profile's few styles: once)."""
    return (_received_short if len(text) <= 200 else _received)(text, limit)


def _received(text: str, limit: int | None) -> tuple[str, int]:
    pieces = split_tokens(text, limit)
    return "".join(as_received(piece) for piece in pieces), len(pieces)


_received_short = lru_cache(maxsize=4096)(_received)


def as_received(text: str) -> str:
    """What a client reads after UTF-8 decoding with replacement (invalid bytes -> U+FFFD)."""
    if INVALID_UTF8[0] not in text and INVALID_UTF8[1] not in text:
        return text
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def user_turns(messages: Sequence[Message]) -> list[str]:
    return [message.content for message in messages if message.role == "user"]


def fault_message(fault: str, retry_after: float) -> str:
    if fault == "rate_limit":
        return f"rate limited (HTTP 429), retry after {retry_after:g} s"
    if fault == "server_error":
        return "server error (HTTP 500): simulated failure"
    return "stream broken: the connection closed mid-answer"


# ---------------------------------------------------------------------------- the model


class SimulatedModel:
    """In-process simulated model (`sim[:PROFILE]`): a ChatModel streaming with the profile's latency.

    The instance seed is the model (what it knows, its slips), as a server's `--seed` is over
    HTTP; a request's seed (`options.seed`, a call's own seed) draws the sample at temperature
    > 0 and changes nothing at temperature 0. The max-tokens limit cuts an answer as a server
    does (`stopped = "length"`). Faults raise ModelError (retryable) on the attempts `decide_fault` picks.
    """

    def __init__(
        self,
        profile: str | SimProfile = DEFAULT_PROFILE,
        seed: int = 0,
        kg: KnowledgeGraph | None = None,
    ) -> None:
        self.profile = profile if isinstance(profile, SimProfile) else load_profile(profile)
        self.seed = seed
        self.entities = EntityFinder(kg) if kg is not None else None
        self.patterns = TemplatePatterns()  # read on the first question, kept for the model
        name = profile if isinstance(profile, str) else self.profile.name
        self.spec = spec_text(ModelSpec(PREFIX, name))
        self._attempts = AttemptCounter()
        self._faulty = any(getattr(self.profile.faults, name) > 0 for name in FAULTS)

    @property
    def never_waits(self) -> bool:
        """No latency in the profile: a call never awaits, so it needs no timeout."""
        profile = self.profile
        return not (profile.first_byte_ms or profile.token_ms or profile.faults.slow_first_byte)

    def __repr__(self) -> str:
        return f"SimulatedModel(profile={self.profile.name!r}, seed={self.seed})"

    def prepare(self, conversations: Sequence[Conversation]) -> None:
        """Nothing to prepare: answers depend on the messages only."""

    async def check(self) -> str:
        return f"simulated model ready (profile {self.profile.name}, seed {self.seed})"

    async def aclose(self) -> None:
        return None

    async def chat(self, request: ChatRequest, on_token: TokenCallback | None = None) -> ChatResult:
        started = time.perf_counter()
        profile = self.profile
        # The model is this instance's seed (--model-seed); a request's own seed only draws
        # the sample at temperature > 0, as a real model's does.
        seed = self.seed
        questions = user_turns(request.messages)
        fault = None
        if self._faulty:  # attempt numbers only decide faults: not counted without them
            attempt = self._attempts.next(profile.name, questions)
            fault = decide_fault(profile, seed, questions, attempt)
        if fault == "rate_limit":
            raise ModelError(
                fault_message(fault, profile.faults.retry_after),
                retryable=True,
                retry_after=profile.faults.retry_after,
            )
        if fault == "server_error":
            raise ModelError(fault_message(fault, 0), retryable=True)
        delay = profile.first_byte_ms
        if fault == "slow_first_byte":
            delay += profile.faults.slow_first_byte_ms
        if delay:
            await asyncio.sleep(delay / 1000)
        reply = decide_reply(
            profile,
            seed,
            questions,
            self.entities,
            self.patterns.current(),
            temperature=request.options.temperature or 0.0,  # None: the server's default, 0
            sample_seed=request.options.seed,
        )
        text, p_yes = reply.text, reply.p_yes
        limit = request.options.max_tokens
        stopped = "length" if limit and len(split_tokens(text)) > limit else None
        if fault != "dropped_stream" and on_token is None and not profile.token_ms:
            # nothing to stream: the answer arrives in one piece
            text, tokens = received_whole(text, limit)
            elapsed = (time.perf_counter() - started) * 1000
            return ChatResult(
                text=text,
                tokens=tokens,
                latency_ms=elapsed,
                first_token_ms=elapsed,
                stopped=stopped,
                p_yes=p_yes,
            )
        pieces = split_tokens(text, limit)
        cut = len(pieces) // 2 if fault == "dropped_stream" else None
        received: list[str] = []
        first_token_ms: float | None = None
        for index, piece in enumerate(pieces):
            if index == cut:
                raise ModelError(fault_message(fault or "", 0), retryable=True)
            if index and profile.token_ms:
                await asyncio.sleep(profile.token_ms / 1000)
            piece = as_received(piece)
            if first_token_ms is None:
                first_token_ms = (time.perf_counter() - started) * 1000
            received.append(piece)
            if on_token is not None:
                on_token(piece)
        return ChatResult(
            text="".join(received),
            tokens=len(received),
            latency_ms=(time.perf_counter() - started) * 1000,
            first_token_ms=first_token_ms,
            stopped=stopped,
            p_yes=p_yes,
        )
