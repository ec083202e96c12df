"""Check the figures the docs quote against the commands shown beside them.

    .venv/bin/python scripts/doc_figures.py [--fast] [--only NAME ...] [--list]

Each check names a doc and runs, in a scratch directory with its own session database, the
commands the doc shows beside a figure; it reads the figure from what they print and passes
when the doc holds it exactly so (whitespace and line breaks aside). A failed check prints
what the doc should say. `--fast` runs the checks that take a few seconds (the ones
tests/test_doc_figures.py runs); the others replay whole samples or run a benchmark (about
two minutes in all). Figures that depend on the machine (timings, memory) are not checked:
their docs name the benchmark that measures them.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
RECORDINGS = "tests/data/recordings"
SESSION_ID = re.compile(r"\d{8}-\d{6}-[0-9a-f]{6}")


class Scratch:
    """A scratch directory with its own KONTEST_HOME; runs commands from the checkout (in
    this process with `in_process`, as tests/test_doc_figures.py does)."""

    def __init__(self, folder: Path, *, in_process: bool = False) -> None:
        self.folder = folder
        self.in_process = in_process
        self.env = {**os.environ, "KONTEST_HOME": str(folder / "home")}

    def kontest(self, *args: str) -> str:
        """`kontest ARGS` (the --db paths relative to the scratch folder); its stdout."""
        argv = [str(self.folder / a[5:]) if a.startswith("@db:") else a for a in args]
        if self.in_process:
            from kontest_tui.cli import run_cli

            out = io.StringIO()
            with contextlib.chdir(ROOT), contextlib.redirect_stdout(out):
                code = run_cli(argv)
            if code not in (0, 1):
                raise RuntimeError(f"kontest {' '.join(argv)}: exit {code}")
            return out.getvalue()
        done = subprocess.run(
            [str(BIN / "kontest"), *argv],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode not in (0, 1):
            raise RuntimeError(f"kontest {' '.join(argv)}: exit {done.returncode}: {done.stderr}")
        return done.stdout

    def python(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, *args], cwd=ROOT, env=self.env, capture_output=True, text=True
        )
        if done.returncode:
            raise RuntimeError(f"python {' '.join(args)}: exit {done.returncode}: {done.stderr}")
        return done.stdout

    def report(self, db: str, session: str = "") -> dict[str, object]:
        """`kontest report [SESSION] --db DB --format json`."""
        args = ["report", *([session] if session else []), "--db", db, "--format", "json"]
        return json.loads(self.kontest(*args))  # type: ignore[no-any-return]

    def ids(self, db: str) -> list[str]:
        return [row["id"] for row in json.loads(self.kontest("sessions", "--db", db, "--json"))]


Figures = Callable[[Scratch], list[str]]


@dataclass(frozen=True)
class Check:
    name: str
    doc: str
    figures: Figures  # the texts the doc must hold, as the commands print them
    fast: bool = False


def _pct(part: float, whole: float, digits: int = 1) -> str:
    return f"{100 * part / whole:.{digits}f}%"


def halluvault(s: Scratch) -> list[str]:
    s.kontest(
        "run", "--db", "@db:hv.db", "--kg", "places", "--model", "sim:forgetful", "--kind",
        "logic", "-q",
    )  # fmt: skip
    logic = s.report("@db:hv.db")["logic"]
    assert isinstance(logic, dict)
    errors, asked, valid = logic["errors"], logic["asked"], logic["valid"]
    return [
        f"{errors} errors of {asked} responses = {_pct(errors, asked)} (of the {valid} "
        f"valid answers: {_pct(errors, valid)})"
    ]


def stability(s: Scratch) -> list[str]:
    model = f"replay:{RECORDINGS}/places-gpt35.jsonl"
    s.kontest(
        "run", "--db", "@db:st.db", "--kg", "places", "--per-path", "--templates", "paper", "--fresh-conversations",
        "--model", model, "-q",
    )  # fmt: skip
    cell = s.report("@db:st.db")["consistency"]["stability"]  # type: ignore[index]
    return [f"{cell['errors']} of {cell['tests']} repeated questions answered the other way"]


def planned_ontological(s: Scratch) -> list[str]:
    found = []
    for kg in ("places", "music"):
        db = f"@db:{kg}-plan.db"
        s.kontest("run", "--db", db, "--kg", kg, "--per-path", "--model", "sim:careful", "-q")
        found.append(s.report(db)["tests_planned"]["ontological"])  # type: ignore[index]
    return [f"{found[0]} tests for places and {found[1]} for music in per-path mode"]


def paper_rows(s: Scratch) -> list[str]:
    """The places recordings under both ontological rules; music Llama2's 92."""
    texts = []
    onto: dict[str, int] = {}
    for rule in ("paper", "prototype"):
        model = f"replay:{RECORDINGS}/places-falcon.jsonl"
        db = f"@db:falcon-{rule}.db"
        s.kontest(
            "run", "--db", db, "--kg", "places", "--per-path", "--templates", "paper",
            "--ontological-rule", rule,
            "--model", model, "-q",
        )  # fmt: skip
        onto[rule] = s.report(db)["tests"]["ontological"]  # type: ignore[index]
    texts.append(f"{onto['prototype']} valid ontological tests (the paper's rule: {onto['paper']})")
    db = "@db:llama2.db"
    s.kontest(
        "run", "--db", db, "--kg", "music", "--per-path", "--templates", "paper",
        "--ontological-rule", "prototype",
        "--model", f"replay:{RECORDINGS}/music-llama2.jsonl", "-q",
    )  # fmt: skip
    report = s.report(db)
    texts.append(
        f"gives {report['tests']['ontological']} under either rule"  # type: ignore[index]
    )
    return texts


def table_3(s: Scratch) -> list[str]:
    """The compare's Table 3 of the four places recordings: its Falcon and Total rows; the
    ensemble's spread over fold splits on the same sessions; GPT-3.5's total design effect."""
    db = "@db:t3.db"
    for model in ("falcon", "gemini", "gpt35", "llama2"):
        s.kontest(
            "run", "--db", db, "--kg", "places", "--per-path", "--templates", "paper",
            "--ontological-rule", "prototype", "--model", f"replay:{RECORDINGS}/places-{model}.jsonl", "-q",
        )  # fmt: skip
    text = s.kontest("compare", "--db", db, "--format", "markdown")
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    start = next(i for i, line in enumerate(text.splitlines()) if "Valid Test Executions" in line)
    valid = [line for line in text.splitlines()[start:] if line.startswith("| ")][2:7]
    figures = [SESSION_ID.sub("ID", line) for line in valid if "falcon" in line or "Total" in line]
    errors = [line for line in rows if line.startswith("| Total | ")][0]
    figures.append(errors)
    figures.append(next(line for line in rows if line.startswith("| KONTEST total |")))
    total = json.loads(s.kontest("compare", "--db", db, "--format", "json"))["overlap_total"]
    errors, alone, every = total["errors"], total["one_model_only"], total["all"]
    figures.append(
        f"{errors} distinct errors, {alone} ({_pct(alone, errors)}) found by one model only, "
        f"{every} ({_pct(every, errors)}) by all four"
    )
    ids = s.ids(db)
    data = json.loads(s.kontest("ensemble", *ids, "--db", db, "--format", "json"))
    gaps = data["spread"]["weighted"]["t2"]
    figures.append(
        f"Template 1 (our t2) ranges from {min(gaps)} to {max(gaps)} over seeds 0-7 (median "
        f"{median(gaps):g}; seed 0 gives {gaps[0]})"
    )
    t2 = data["per_template"]["t2"]
    figures.append(
        f"the majority vote's {t2['majority']['missing']} and the models' mean "
        f"{t2['models_mean']['missing']:g}"
    )
    gpt35 = s.report(db, ids[2])["rates"]["total"]  # type: ignore[index]
    figures.append(f"the design effect of GPT-3.5's total is {gpt35['design_effect']:.2f}")
    return figures


def default_profile_rates(s: Scratch) -> list[str]:
    rates = {}
    for kg in ("places", "music"):
        db = f"@db:{kg}-probe.db"
        s.kontest(
            "run", "--db", db, "--kg", kg, "--model", "sim", "--kind", "factcheck,logic", "-q"
        )
        accuracy = s.report(db)["accuracy"]
        assert isinstance(accuracy, dict)
        rates[kg] = (accuracy["factcheck"]["error_rate"], accuracy["logic"]["error_rate"])
    return [
        f"error rates of the valid answers on places / music are "
        f"{100 * rates['places'][0]:.1f}% / {100 * rates['music'][0]:.1f}% (FactChecker) and "
        f"{100 * rates['places'][1]:.1f}% / {100 * rates['music'][1]:.1f}% (logic rules)"
    ]


def aliases(s: Scratch) -> list[str]:
    code = (
        "import json, sys; d = json.load(open(sys.argv[1])); "
        "print(sum(bool(n['aliases']) for n in d['nodes']), len(d['nodes']))"
    )
    found = []
    for kg in ("places", "music"):
        have, nodes = s.python("-c", code, f"kontest_tui/sample_kgs/{kg}.json").split()
        found.append(f"{have} of the {nodes} nodes have an alias")
    return found


def subdivision_errors(s: Scratch) -> list[str]:
    s.kontest(
        "run", "--db", "@db:sub.db", "--kg", "subdivisions", "--entity", "BE", "--entity",
        "ES", "--entity", "LU", "--model", "sim:forgetful", "-q",
    )  # fmt: skip
    errors = s.report("@db:sub.db")["errors"]["total"]  # type: ignore[index]
    return [f"with `sim:forgetful` ({errors} errors, two pages"]


def interval_coverage(s: Scratch) -> list[str]:
    out = s.python("benchmarks/interval_coverage.py", "--runs", "1000")
    lines = [line for line in out.splitlines() if re.search(r"%\s+\(width", line)]
    return [" | ".join(_coverage_cells(line)) for line in lines]


def _coverage_cells(line: str) -> list[str]:
    """A benchmark line as the doc's table row: scenario, true rate, the three coverages."""
    name = line[:40].strip()
    rest = line[40:].split()
    true, coverages = rest[0], [cell for cell in rest[1:] if cell.endswith("%")]
    return [name, true, *coverages]


def compare_example(s: Scratch) -> list[str]:
    """docs/compare.md's sample tables: every table row of its examples, session ids aside."""
    db = "@db:example.db"
    for model in ("sim:careful", "sim", "sim:forgetful", "sim:yes-sayer"):
        s.kontest(
            "run", "--db", db, "--kg", "places", "--model", model, "--kind",
            "kontest,factcheck,logic,variant", "--limit", "30", "-q",
        )  # fmt: skip
    first = s.kontest("compare", "--db", db, "--format", "markdown")
    db = "@db:t4.db"
    for model in ("sim:careful", "sim:forgetful"):
        s.kontest("run", "--db", db, "--kg", "music", "--model", model, "--kind", "variant",
                  "--limit", "6", "-q")  # fmt: skip
    second = s.kontest("compare", "--db", db, "--format", "markdown")
    printed = {SESSION_ID.sub("ID", line) for line in (first + second).splitlines()}
    doc = (ROOT / "docs/compare.md").read_text(encoding="utf-8")
    section = doc[doc.index("## One table per paper") :]
    rows, heading = [], ""
    for line in section.splitlines():
        if line.startswith("#"):
            heading = line
        elif line.startswith("| ") and "Time" not in heading:  # timings differ run to run
            rows.append(SESSION_ID.sub("ID", line))
    missing = [row for row in rows if row not in printed]
    if missing:
        raise AssertionError("rows compare does not print:\n  " + "\n  ".join(missing))
    return []


def _confirmed_session(s: Scratch) -> str:
    """`kontest run --confirm` on 30 relations at temperature 0.8: its stdout."""
    return s.kontest(
        "run", "--db", "@db:cf.db", "--kg", "places", "--model", "sim", "--limit", "30",
        "--temperature", "0.8", "--model-seed", "3", "--confirm", "-q",
    )  # fmt: skip


def confirmed(s: Scratch) -> list[str]:
    """The report's `Confirmed:` line (its seconds depend on the machine: left out)."""
    out = _confirmed_session(s)
    line = next(line for line in out.splitlines() if line.startswith("Confirmed: "))
    head, _, rest = line.partition(" calls in ")
    return [head + " calls in", rest.split("; ", 1)[1]]


def confirm_table(s: Scratch) -> list[str]:
    """`kontest confirm --kind atomic`'s rows after that run."""
    _confirmed_session(s)
    table = s.kontest("confirm", "--db", "@db:cf.db", "--kind", "atomic", "-q")
    return table.splitlines()[2:]


CHECKS = (
    Check("halluvault", "docs/probes.md", halluvault, fast=True),
    Check("stability", "docs/sessions-and-runs.md", stability, fast=True),
    Check("planned-ontological", "docs/oracles-and-metrics.md", planned_ontological, fast=True),
    Check("aliases", "docs/knowledge-graphs.md", aliases),
    Check("subdivision-errors", "docs/explorer.md", subdivision_errors),
    Check("paper-rows", "docs/compare.md", paper_rows),
    Check("table-3", "docs/compare.md", table_3),
    Check("default-profile", "docs/models.md", default_profile_rates),
    Check("interval-coverage", "docs/oracles-and-metrics.md", interval_coverage),
    Check("compare-example", "docs/compare.md", compare_example),
    Check("confirmed", "docs/oracles-and-metrics.md", confirmed),
    Check("confirm-table", "docs/explain-and-probe.md", confirm_table),
)


def normalised(text: str) -> str:
    return " ".join(text.split())


def run_check(check: Check, folder: Path, *, in_process: bool = False) -> list[str]:
    """The figures the doc lacks (what it should say), [] when it holds them all."""
    figures = check.figures(Scratch(folder, in_process=in_process))
    doc = normalised((ROOT / check.doc).read_text(encoding="utf-8"))
    doc_ids = SESSION_ID.sub("ID", doc)
    return [f for f in figures if normalised(f) not in doc and normalised(f) not in doc_ids]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="only the checks of a few seconds")
    parser.add_argument("--only", nargs="*", default=None, help="these checks by name")
    parser.add_argument("--list", action="store_true", help="list the checks and exit")
    args = parser.parse_args(argv)
    if args.list:
        for check in CHECKS:
            print(f"{check.name:22} {check.doc}{'  (fast)' if check.fast else ''}")
        return 0
    chosen = [
        c
        for c in CHECKS
        if (not args.fast or c.fast) and (args.only is None or c.name in args.only)
    ]
    failed = 0
    for check in chosen:
        with tempfile.TemporaryDirectory() as folder:
            try:
                missing = run_check(check, Path(folder))
            except AssertionError as error:
                missing = [str(error)]
        status = "ok" if not missing else "DIFFERS"
        print(f"{status:8} {check.name} ({check.doc})")
        for figure in missing:
            print(f"         the command prints: {figure}")
        failed += bool(missing)
    print(f"{len(chosen) - failed} of {len(chosen)} checks hold")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
