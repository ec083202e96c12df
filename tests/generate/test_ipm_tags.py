"""A template word's part of speech (generate.ipm.tag_words): its place in the sentence
first, WordNet's most used sense otherwise ("release" in `Did {parent} release ...` is a
verb: tagged a noun, its variants would take noun synonyms)."""

from __future__ import annotations

from kontest_tui.generate.ipm import guess_pos, tag_words


def test_a_word_after_an_auxiliary_and_the_subject_is_a_verb() -> None:
    assert guess_pos("release") == "n"  # out of context: the noun has more senses
    tags = tag_words('Did {parent} release an album called "{child}"?', {}, skip={"did", "an"})
    assert tags["release"] == "v"
    assert tags["album"] == "n"  # after a determiner
    assert "Did" not in tags and "an" not in tags  # skipped (stop words)


def test_a_word_after_to_is_a_verb_and_known_tags_are_kept() -> None:
    tags = tag_words("Is {child} said to border {parent}?", {"said": "v"}, skip={"is", "to"})
    assert tags["border"] == "v"  # WordNet's guess alone: a noun
    assert guess_pos("border") == "n"
    assert tags["said"] == "v"
    # A known tag wins over the place: the user's (or the set's) choice stays.
    assert tag_words("Did {parent} release it?", {"release": "n"})["release"] == "n"


def test_a_place_wordnet_has_no_sense_for_falls_back_to_the_guess() -> None:
    # "the" before "located": WordNet has no noun "located", so the guess (a verb) stays.
    assert tag_words("Is {child} the located one in {parent}?", {}, skip={"is", "the"})[
        "located"
    ] == guess_pos("located")
