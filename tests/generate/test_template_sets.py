"""Template sets as TOML data: the paper's exact texts, validation errors, user overrides, filling."""

from __future__ import annotations

from pathlib import Path

import pytest

from kontest_tui import paths
from kontest_tui.errors import TemplateError
from kontest_tui.generate.templates import (
    Template,
    TemplateSet,
    fill_template,
    list_template_sets,
    load_template_file,
    load_template_set,
    save_template_set,
)

PROMPT = "Be concise as possible. Answer with a yes or no response."


def test_places_paper_templates_are_the_papers() -> None:
    places = load_template_set("paper", "places")
    assert (places.name, places.realise) == ("paper", False)
    assert places.ids == ("t1", "t2", "t3")
    assert places.relation_types == ("contains",)
    texts = [template.text_for("contains") for template in places.templates]
    assert texts == [
        "Does {parent} have a {child}?",
        "Is there a {child} in {parent}?",
        "Is there a {child} located in {parent}?",
    ]
    assert places.system_prompt == PROMPT
    assert places.temperature == 0.0
    assert places.default_type == "contains"
    assert load_template_set("subdivisions").domain == "places"
    assert load_template_set("paper", "subdivisions") == places


def test_default_sets_are_natural_and_realised() -> None:
    places = load_template_set("places")
    assert (places.name, places.realise) == ("natural", True)
    assert [template.text_for("contains") for template in places.templates] == [
        "Does {parent} contain {child}?",
        "Is {child} in {parent}?",
        "Is {child} part of {parent}?",
    ]
    music = load_template_set("music")
    assert (music.name, music.realise) == ("natural", True)
    assert music.get("t1").texts["album->song"] == (
        'Does the album "{parent}" have a song called "{child}"?'
    )
    assert load_template_set("natural", "places") == places


def test_a_set_name_needs_the_kg_domain() -> None:
    with pytest.raises(TemplateError, match="give the KG"):
        load_template_set("paper")
    with pytest.raises(TemplateError, match="no paper templates for domain 'cooking'"):
        load_template_set("paper", "cooking")


def test_music_templates_are_the_papers() -> None:
    music = load_template_set("paper", "music")
    t1, t2 = music.get("t1"), music.get("t2")
    assert t1.texts["album->song"] == 'Does the album, "{parent}" have a song called "{child}"?'
    assert t2.texts["album->song"] == 'Is "{child}" in the album, "{parent}"?'
    assert t1.texts["artist->song"] == 'Does {parent} have a song called "{child}"?'
    assert t2.texts["artist->song"] == 'Is "{child}" a song by {parent}?'
    assert t1.texts["artist->album"] == 'Does {parent} have an album called "{child}"?'
    assert t2.texts["artist->album"] == 'Is "{child}" an album by {parent}?'
    assert set(music.get("t3").texts) == {"album->song", "artist->song", "artist->album"}
    assert music.system_prompt == PROMPT
    assert t1.pos["song"] == "n" and "Does" in t1.fixed


def test_selection_defaults_to_first_two() -> None:
    places = load_template_set("places")
    assert [t.id for t in places.select()] == ["t1", "t2"]
    assert [t.id for t in places.select(["t3", "t1"])] == ["t3", "t1"]
    with pytest.raises(TemplateError, match="t7"):
        places.select(["t1", "t7"])
    with pytest.raises(TemplateError, match="repeated"):
        places.select(["t1", "t1"])


def write(tmp_path: Path, body: str, name: str = "mine.toml") -> Path:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


GOOD_T1 = (
    '[[templates]]\nid = "t1"\n[templates.texts]\ncontains = "Does {parent} have a {child}?"\n'
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Does {parent} have it?", "missing {child}"),
        ("Does {parent} have a {chld}?", "unknown placeholder {chld}"),
        ("Does {parent} have a {child}", None),
        ("Does {parent have a {child}?", "unbalanced"),
        ("Does {parent} have a {child}}?", "unbalanced"),
        ("Does {parent} have a child}?", "unbalanced"),
        ("Does {parent} have a {child} {?", "unbalanced"),
        ("Is {0} in {parent} {child}?", "unknown placeholder {0}"),
    ],
)
def test_bad_texts_name_file_and_template(tmp_path: Path, text: str, expected: str | None) -> None:
    body = (
        f'domain = "x"\n{GOOD_T1}[[templates]]\nid = "t2"\n[templates.texts]\ncontains = {text!r}\n'
    )
    path = write(tmp_path, body.replace("'", '"') if "'" not in text else body)
    if expected is None:
        assert load_template_file(path).get("t2").text_for("contains") == text
        return
    with pytest.raises(TemplateError) as caught:
        load_template_file(path)
    message = str(caught.value)
    assert str(path) in message and "template t2" in message and expected in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (f'domain = "x"\n{GOOD_T1}{GOOD_T1}', "duplicate template id t1"),
        (
            f'domain = "x"\n{GOOD_T1}[[templates]]\nid = "t2"\n[templates.texts]\n'
            'other = "Is {child} in {parent}?"\n',
            "template t1 has no text for relation type 'other'",
        ),
        ('domain = "x"\n[[templates]\nid = "t1"\n', "malformed TOML"),
        (GOOD_T1, "missing domain"),
        ('domain = "x"\n', "no [[templates]]"),
        (f'domain = "x"\ndefault_type = "part of"\n{GOOD_T1}', "default_type 'part of'"),
        ('domain = "x"\n[[templates]]\nid = "t1"\n', "template t1 has no [templates.texts]"),
        (f'domain = "x"\n{GOOD_T1}[templates.words]\nhave = "verb"\n', "template t1 words"),
    ],
)
def test_bad_files_are_one_line_errors(tmp_path: Path, body: str, expected: str) -> None:
    path = write(tmp_path, body)
    with pytest.raises(TemplateError) as caught:
        load_template_file(path)
    assert str(path) in str(caught.value)
    assert expected in str(caught.value)
    assert "\n" not in str(caught.value)


def test_missing_file_and_unknown_domain() -> None:
    with pytest.raises(TemplateError, match="no such template file"):
        load_template_set("nowhere/none.toml")
    with pytest.raises(TemplateError, match="no templates for domain 'cooking'"):
        load_template_set("cooking")


def test_user_templates_override_and_add_domains() -> None:
    folder = paths.config_dir() / "templates"
    folder.mkdir(parents=True)
    (folder / "my-places.toml").write_text(
        'domain = "places"\nsystem_prompt = "Answer yes or no."\n'
        '[[templates]]\nid = "t1"\n[templates.texts]\ncontains = "Is {child} part of {parent}?"\n',
        encoding="utf-8",
    )
    (folder / "food.toml").write_text(
        'domain = "food"\ndefault_type = "dish->ingredient"\n[[templates]]\nid = "t1"\n'
        '[templates.texts]\n"dish->ingredient" = "Does {parent} contain {child}?"\n',
        encoding="utf-8",
    )
    places = load_template_set("places")
    assert places.get("t1").text_for("contains") == "Is {child} part of {parent}?"
    assert places.system_prompt == "Answer yes or no."
    assert load_template_set("food").default_type == "dish->ingredient"
    assert set(list_template_sets()) == {"places", "music", "food"}


def test_fill_is_single_pass_and_literal() -> None:
    text = "Does {parent} have a {child}?"
    assert fill_template(text, "Ireland", "Ulster") == "Does Ireland have a Ulster?"
    assert (
        fill_template(text, 'A "quoted" {child} \\1 back\\', "x\n  y\t{parent} }{")
        == 'Does A "quoted" {child} \\1 back\\ have a x y {parent} }{?'
    )
    assert fill_template("{{{parent}}} in {child}", "P", "C") == "{P} in C"
    assert fill_template('Is "{child}" in "{parent}"?', "", "%s {0}") == 'Is "%s {0}" in ""?'
    with pytest.raises(TemplateError):
        fill_template("Is {child} here?", "P", "C")


@pytest.mark.parametrize("domain", ["places", "music"])
def test_dump_and_load_round_trip(tmp_path: Path, domain: str) -> None:
    original = load_template_set(domain)
    path = save_template_set(original, tmp_path / f"{domain}.toml")
    again = load_template_file(path)
    assert again.templates == original.templates
    assert (again.domain, again.default_type, again.system_prompt, again.temperature) == (
        original.domain,
        original.default_type,
        original.system_prompt,
        original.temperature,
    )
    assert again.aliases == original.aliases


def test_saved_set_replaces_built_in_and_keeps_odd_text() -> None:
    text = 'Is "{child}" \\ in {parent}?\t{{x}}\x7f'
    custom = TemplateSet(
        domain="places",
        templates=(
            Template("t1", {"contains": text}),
            Template("t2", {"contains": "{parent}{child}"}),
        ),
        default_type="contains",
        system_prompt='Say "yes" or "no".\n',
        temperature=0.5,
    )
    path = save_template_set(custom)
    assert path == paths.config_dir() / "templates" / "places.toml"
    loaded = load_template_set("places")
    # quotes, backslash, tab and braces come back; a control character (DEL) is dropped where
    # the file is read, as every text that reaches a model is cleaned
    assert loaded.get("t1").text_for("contains") == text.removesuffix("\x7f")
    assert loaded.system_prompt == 'Say "yes" or "no".\n' and loaded.temperature == 0.5
    assert loaded.ids == ("t1", "t2")


def test_saving_an_invalid_set_writes_nothing(tmp_path: Path) -> None:
    broken = TemplateSet("x", (Template("t1", {"contains": "{parent} only"}),), "contains")
    with pytest.raises(TemplateError, match="missing {child}"):
        save_template_set(broken, tmp_path / "x.toml")
    assert not (tmp_path / "x.toml").exists()
