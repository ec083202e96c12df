"""Probe template files: validation errors name the file and entry; filling is literal."""

from __future__ import annotations

import pytest

from kontest_tui.errors import TemplateError
from kontest_tui.probes.templates import fill, load_probe_templates


def test_samples_load() -> None:
    places = load_probe_templates("places")
    assert places.factcheck["contains"]["yes_no"] == "Is {child} located in {parent}?"
    assert places.logic["contains"].text("inverse") == "Does {parent} include {child}?"
    assert not places.logic["contains"].symmetric
    music = load_probe_templates("music")
    assert set(music.factcheck) == {"artist->album", "album->song", "artist->song"}
    assert "music" in music.prompt("wh")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('[factcheck.contains]\nyes_no = "Is {chld} in {parent}?"', "unknown placeholder {chld}"),
        ('[factcheck.contains]\nyes_no = "Is it in {parent}?"', "missing {child}"),
        ('[factcheck.contains]\nquiz = "Is {child} in {parent}?"', "unknown question type 'quiz'"),
        (
            '[logic.contains]\nfact = "Is {child} in {parent}?"\nsymmetric = "maybe"',
            "expected true or false",
        ),
        ('[logic.contains]\nreverse = "{child} {parent}"', "unknown key 'reverse'"),
        ('[logic.contains]\nnegated = "Is {child} not in it?"', "missing {parent}"),
        ('[factcheck.contains]\nwh = "Is {child} in {parent}?"', "must not contain {parent}"),
        ("[factcheck\n", "probes.toml"),
    ],
)
def test_bad_templates_are_one_clear_error(tmp_path, body: str, message: str) -> None:
    path = tmp_path / "probes.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(TemplateError) as raised:
        load_probe_templates(path)
    assert message in str(raised.value)
    assert "probes.toml" in str(raised.value)
    assert "\n" not in str(raised.value)


def test_fill_is_single_pass_and_literal() -> None:
    text = fill("Is {child} located in {parent}?", {"child": "{parent}", "parent": 'A "B"\nC'})
    assert text == 'Is {parent} located in A "B" C?'
