"""What the wizard has built of each test kind, keyed by everything it depends on.

Counting a kind means building its conversations (in a worker); what is built is kept and
becomes the run's plan. A key names the kind, the graph version (bumped when the KG,
its relations or the template set change), the templates and the kind's own options, so
a result for older choices is simply never looked up again. Plain Python: no Textual.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass

from kontest_tui.domain.records import Conversation
from kontest_tui.tui.kind_choices import AnnotatedQuestions

Key = tuple[Hashable, ...]
ANNOTATION = "annotation"
COUNTING = "counting…"


@dataclass(frozen=True)
class KindChoices:
    """The wizard's choices a kind's conversations depend on (read in the UI thread)."""

    template_ids: tuple[str, ...]
    strength: int = 2
    postfix: bool = False
    variant_limit: int | None = None
    question_types: tuple[str, ...] = ()  # the FactChecker question types ticked
    rules: tuple[str, ...] = ()  # the logic rules ticked


class KindCache:
    """Built conversations, annotated-questions files read, failures and work in progress,
    each by key (`key`)."""

    def __init__(self) -> None:
        self.graph_version = 0
        self.built: dict[Key, list[Conversation]] = {}
        self.questions: dict[Key, AnnotatedQuestions] = {}
        self.errors: dict[Key, str] = {}
        self.building: set[Key] = set()

    def key(self, kind: str, choices: KindChoices, questions_path: str | None = None) -> Key:
        """What `kind`'s conversations depend on. A questions file depends on its path and
        the variant options only (not on the KG or the templates)."""
        if kind == ANNOTATION:
            return self.questions_key(questions_path or "", choices)
        key: Key = (kind, self.graph_version, choices.template_ids)
        if kind == "variant":
            key += (choices.strength, choices.postfix, choices.variant_limit)
        elif kind == "factcheck":
            key += (choices.question_types,)
        elif kind == "logic":
            key += (choices.rules,)
        return key

    @staticmethod
    def questions_key(path: str, choices: KindChoices) -> Key:
        return (ANNOTATION, path, choices.strength, choices.postfix, choices.variant_limit)

    def new_graph(self) -> None:
        """The KG, its relations or the template set changed: what was built is stale."""
        self.graph_version += 1
        self.built.clear()
        self.errors.clear()

    def forget_kind(self, kind: str) -> None:
        """Drop what was built of one kind (synonym pins and bans change the variants)."""
        for key in [key for key in self.built if key and key[0] == kind]:
            del self.built[key]

    def is_pending(self, key: Key) -> bool:
        """Whether `key` still has to be built: not built, not failed, not being built."""
        done = key in self.built or key in self.questions or key in self.errors
        return not done and key not in self.building

    def start(self, keys: Iterable[Key]) -> None:
        """A worker builds these keys now."""
        self.building.update(keys)

    def restart(self, key: Key) -> None:
        """Build `key` again (a questions file read anew: it may have changed)."""
        self.questions.pop(key, None)
        self.errors.pop(key, None)
        self.building.add(key)

    def finish(self, key: Key, conversations: list[Conversation] | None, error: str = "") -> None:
        """A kind was built (`conversations`) or failed (None, with `error`)."""
        self.building.discard(key)
        if conversations is None:
            self.errors[key] = error
        else:
            self.built[key] = conversations

    def finish_questions(
        self, key: Key, loaded: AnnotatedQuestions | None, error: str = "", keep_error: bool = True
    ) -> None:
        """A questions file was read (`loaded`) or not (None: the error is kept for the
        counts unless `keep_error` is false, for a Load that failed and left the plan)."""
        self.building.discard(key)
        if loaded is not None:
            self.questions[key] = loaded
        elif keep_error:
            self.errors[key] = error

    def conversations(self, key: Key) -> list[Conversation] | None:
        """The conversations built for `key` (a questions file's too), None if not yet."""
        if key and key[0] == ANNOTATION:
            loaded = self.questions.get(key)
            return loaded.conversations if loaded is not None else None
        return self.built.get(key)

    def note(self, key: Key) -> str:
        """Why `key` has no conversations: its error, else that it is being counted."""
        return self.errors.get(key, COUNTING)
