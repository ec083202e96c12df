"""The new-session wizard's state: the user's choices, what the engine said about them, and
whether Run may start. Plain Python (no Textual): the screen renders it, calls the engine
in workers (`run.api.prepare`, the model check, a relation's preview) and feeds the results
back; every transition is a method, unit-tested on its own (tests/tui/test_wizard_state.py).

Versions: every choice that changes the session spec bumps `version` (and `model_version`
for the model), so an answer from a worker started for older choices is recognised and
dropped. Run: `request_run` starts at once when nothing blocks, waits (armed) while the
engine is still preparing or checking the model, and says why not otherwise; an armed run
starts when both answers come without a problem, and any change of choice, a failed load or
a failed check disarms it (the run never starts on choices made after Run was pressed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from kontest_tui.run.api import (
    KindOptions,
    Preparation,
    Problem,
    RelationPreview,
    SessionSpec,
    kind_of,
    kind_options_from,
    list_test_kinds,
)

Decision = Literal["start", "armed", "blocked"]


@dataclass(frozen=True, slots=True)
class Entity:
    """An entity the session is scoped to: its id and label, and the KG it was found in."""

    id: str
    label: str
    source: str


@dataclass(frozen=True, slots=True)
class KindChoices:
    """The test kinds ticked and their options, as the Kinds step shows them: each kind's
    controls' values by option key (run.api.KindChoice.controls; an option not shown keeps
    the engine's default), and the covering arrays' strength (the Variants step's)."""

    kinds: tuple[str, ...] = ("kontest",)  # kind names, registry order
    strength: int = 2
    values: tuple[tuple[str, object], ...] = ()  # (option key, value)

    def value(self, key: str) -> object:
        return dict(self.values).get(key)

    def problems(self) -> list[Problem]:
        """A ticked kind with nothing ticked under one of its lists of names builds nothing."""
        values = dict(self.values)
        problems = []
        for choice in list_test_kinds():
            if choice.value not in self.kinds:
                continue
            for control in choice.controls:
                if control.type == "names" and values.get(control.key, control.choices) == ():
                    message = f"{control.label}: tick at least one {control.item}."
                    problems.append(Problem("kinds", message))
        return problems

    def options(self) -> KindOptions:
        """The engine's options (all sub-choices ticked: None, i.e. all)."""
        return kind_options_from(dict(self.values), strength=self.strength)


@dataclass(slots=True)
class WizardState:
    """The choices of the wizard and what the engine said about them (module docstring)."""

    source: str = "places"  # a sample name, a KG file path, a built Wikidata graph's file
    model: str = "sim"
    entities: list[Entity] = field(default_factory=list)
    depth: int | None = None
    per_path: bool = False
    template_ids: tuple[str, ...] | None = None  # None: the template set's first two
    template_set: str | None = None  # a set name ("paper"); None: the domain's default set
    kinds: KindChoices = field(default_factory=KindChoices)
    questions: str | None = None  # an annotated-questions file in the plan
    version: int = 0
    model_version: int = 0
    preparation: Preparation | None = None  # for `version`, when it came
    prepare_error: str = ""  # the worker itself failed
    model_checked: bool = False  # the check of `model_version` came back
    model_issue: Problem | None = None
    model_line: str = ""
    preview: RelationPreview | None = None  # the relation browsed
    armed: bool = False

    # -- the spec --------------------------------------------------------------------------

    def spec(self) -> SessionSpec:
        """The session spec the choices describe."""
        return SessionSpec(
            self.source,
            model=self.model.strip() or "sim",
            entities=tuple(entity.id for entity in self.entities),
            depth=self.depth,
            per_path=self.per_path,
            template_set=self.template_set,
            template_ids=self.template_ids,
            kinds=tuple(kind_of(kind) for kind in self.kinds.kinds),
            kind_options=self.kinds.options(),
            questions=self.questions,
        )

    def ready_spec(self) -> SessionSpec:
        """The prepared (resolved) spec with the current model: what Run starts."""
        assert self.preparation is not None
        return replace(self.preparation.spec, model=self.model.strip() or "sim")

    # -- choices (each returns whether the spec changed: then prepare again) ---------------

    def _changed(self) -> bool:
        self.version += 1
        self.preparation = None
        self.prepare_error = ""
        self.preview = None
        self.armed = False
        return True

    def reload(self) -> bool:
        """The same choices prepared again (a file changed, synonyms were pinned)."""
        return self._changed()

    def choose_kg(self, source: str) -> bool:
        """Another KG: its whole graph, templates of its own domain."""
        source = source.strip()
        if not source or source == self.source:
            return False
        self.source = source
        self.entities = []
        self.template_ids = None
        return self._changed()

    def add_entity(self, entity: Entity) -> bool:
        """Scope to one more entity (one of another KG switches to that KG first)."""
        if entity.source != self.source:
            self.source = entity.source
            self.entities = []
            self.template_ids = None
        elif any(known.id == entity.id for known in self.entities):
            return False
        self.entities.append(entity)
        return self._changed()

    def clear_scope(self) -> bool:
        if not self.entities:
            return False
        self.entities = []
        return self._changed()

    def set_depth(self, depth: int | None) -> bool:
        depth = depth if depth else None
        if depth == self.depth:
            return False
        self.depth = depth
        return self._changed()

    def set_per_path(self, per_path: bool) -> bool:
        if per_path == self.per_path:
            return False
        self.per_path = per_path
        return self._changed()

    def set_templates(self, template_ids: Sequence[str]) -> bool:
        chosen = tuple(template_ids)
        if chosen == self.chosen_templates():
            return False
        self.template_ids = chosen
        return self._changed()

    def set_template_set(self, name: str | None) -> bool:
        """Another template set of the KG's domain ("paper": the papers' exact texts)."""
        name = name or None
        if name == self.template_set:
            return False
        self.template_set = name
        return self._changed()

    def set_kinds(self, kinds: KindChoices) -> bool:
        if kinds == self.kinds:
            return False
        self.kinds = kinds
        return self._changed()

    def set_questions(self, path: str | None) -> bool:
        path = (path or "").strip() or None
        if path == self.questions:
            return False
        self.questions = path
        return self._changed()

    def set_model(self, model: str) -> bool:
        """Another model: checked again (the rest stays prepared)."""
        if model.strip() == self.model.strip():
            return False
        self.model = model
        self.model_version += 1
        self.model_checked = False
        self.model_issue = None
        self.model_line = ""
        self.armed = False
        return True

    # -- what the engine said --------------------------------------------------------------

    def prepared(self, version: int, preparation: Preparation) -> SessionSpec | None:
        """`prepare` answered for `version` (older answers are dropped). Returns the spec to
        run when an armed run may start now."""
        if version != self.version:
            return None
        self.preparation = preparation
        self.prepare_error = ""
        self.preview = preparation.preview
        return self._start_if_armed()

    def prepare_failed(self, version: int, message: str) -> None:
        """The prepare worker failed (an engine bug): a problem, the run disarmed."""
        if version == self.version:
            self.prepare_error = message
            self.armed = False

    def checked_model(
        self, version: int, problem: Problem | None, line: str = ""
    ) -> SessionSpec | None:
        """The model check for `version` answered: `problem` when the model cannot run."""
        if version != self.model_version:
            return None
        self.model_checked = True
        self.model_issue = problem
        self.model_line = line
        return self._start_if_armed()

    def previewed(self, version: int, preview: RelationPreview) -> bool:
        """A relation's preview came (for `version`); whether it is shown."""
        if version != self.version:
            return False
        self.preview = preview
        return True

    # -- reading the state -----------------------------------------------------------------

    def chosen_templates(self) -> tuple[str, ...]:
        """The template ids the run uses (the set's first two until others are chosen)."""
        if self.template_ids is not None:
            return self.template_ids
        template_set = self.preparation.spec.template_set if self.preparation else None
        ids = getattr(template_set, "ids", ())
        return tuple(ids[:2])

    @property
    def preparing(self) -> bool:
        return self.preparation is None and not self.prepare_error

    @property
    def checking(self) -> bool:
        return not self.model_checked

    def problems(self) -> list[Problem]:
        """What blocks a run now (the engine's, the kinds' options', the model's)."""
        problems = list(self.kinds.problems())
        if self.prepare_error:
            problems.append(Problem("graph", f"Preparing failed: {self.prepare_error}"))
        if self.preparation is not None:
            problems += [p for p in self.preparation.problems if p.step != "model"]
        if self.model_issue is not None:
            problems.append(self.model_issue)
        return problems

    def blocked(self) -> str:
        """Why Run is off ('' when it can start, or is only waiting for the engine)."""
        return " ".join(problem.message for problem in self.problems())

    def waiting(self) -> str:
        """What Run waits for ('' when nothing)."""
        if self.preparing:
            return "preparing the session…"
        if self.checking:
            return "checking the model…"
        return ""

    def run_state(self) -> tuple[bool, str]:
        """(Run may start now, the reason when not): what the Run button shows."""
        blocked = self.blocked()
        if blocked:
            return False, blocked
        waiting = self.waiting()
        return (False, f"Waiting: {waiting}") if waiting else (True, "")

    def request_run(self) -> tuple[Decision, str]:
        """Run was pressed: start now, wait for the engine (armed), or why not."""
        blocked = self.blocked()
        if blocked:
            self.armed = False
            return "blocked", blocked
        waiting = self.waiting()
        if waiting:
            self.armed = True
            return "armed", f"The run starts when ready ({waiting})"
        self.armed = False
        return "start", ""

    def _start_if_armed(self) -> SessionSpec | None:
        if not self.armed or self.waiting():
            return None
        self.armed = False
        return None if self.blocked() else self.ready_spec()
