#!/usr/bin/env bash
# Build the wheel, install it into a fresh venv and use it from outside the checkout, as
# `pipx install .` users do: the samples, templates, profiles, stylesheets and WordNet must all
# come from the installed package. Run by .ci/run; exits non-zero on the first failure.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

"$ROOT/.venv/bin/python" -m pip install --quiet build
"$ROOT/.venv/bin/python" -m build --wheel --outdir "$WORK/dist" "$ROOT" >"$WORK/build.log" 2>&1 \
    || { cat "$WORK/build.log"; exit 1; }
WHEEL="$(ls "$WORK"/dist/*.whl)"
echo "wheel: $(basename "$WHEEL"), $(unzip -l "$WHEEL" | tail -1 | awk '{print $2}') files"
# Typed package (PEP 561): type checkers of projects that import kontest_tui read its hints.
# (the listing goes to a file first: `grep -q` leaving a pipe early gives unzip SIGPIPE, and
# pipefail turned that into a failure now and then)
unzip -l "$WHEEL" >"$WORK/wheel-files.txt"
grep -q 'kontest_tui/py.typed' "$WORK/wheel-files.txt" || { echo "py.typed missing from the wheel"; exit 1; }

"$PYTHON" -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install --quiet "$WHEEL"

cd "$WORK"   # nothing of the checkout is on the path from here
export KONTEST_HOME="$WORK/home"
K="$WORK/venv/bin/kontest"
"$K" kg info places
"$K" sim profiles
"$K" run --kg places --model sim --limit 5 --db "$WORK/smoke.db"
"$WORK/venv/bin/python" - <<'PY'
"""Start the explorer headless from the installed package: stylesheet, samples, first screens."""
import asyncio

from kontest_tui.tui.app import make_app


async def main() -> None:
    app = make_app(kg="places", model="sim")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.screen is not None
        print(f"explorer started: {type(app.screen).__name__}")
    assert not app.return_code, app.return_code


asyncio.run(main())
PY
echo "wheel smoke test passed"
