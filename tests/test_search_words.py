"""How search folds and cuts text (social/search_words.py): pure functions, no Redis."""

from __future__ import annotations

import pytest

from social.search_words import TERMS_MAX, fold, haystack, matches, terms, words


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("Kathleen", "kathleen"),
        ("Zoë", "zoe"),
        ("ZOË", "zoe"),
        ("Ｋａｔｅ", "kate"),  # full-width forms
        ("straße", "strasse"),
        ("İstanbul", "istanbul"),
        ("Ångström", "angstrom"),
        ("김민수", "김민수"),  # Hangul syllables whole again after the marks go
    ],
)
def test_folding_ignores_case_accents_and_compatibility_forms(text, folded):
    assert fold(text) == folded


def test_a_name_is_cut_into_its_words():
    assert words("Kathleen Bowman") == ["kathleen", "bowman"]
    assert words("Zoë O'Brien-Smith") == ["zoe", "o", "brien", "smith"]
    assert words("!!! ... 🎉") == []


def test_spaceless_scripts_are_indexed_by_bigrams_and_the_last_character():
    assert words("王小明") == ["王小", "小明", "明"]
    assert terms("小明") == ["小明"]  # a run asks for its bigrams
    assert terms("明") == ["明"]  # one character: any bigram it starts


def test_vowel_signs_stay_inside_their_word():
    # Devanagari's vowel signs are spacing marks: re's \w alone would cut the word apart.
    assert words("किशोर कुमार")[0] == "किशोर"
    assert len(words("किशोर कुमार")) == 2


def test_every_term_must_start_a_word():
    text = haystack("Kathleen Bowman met 王小明 in Zürich")
    assert matches(terms("kath bow"), text)
    assert matches(terms("ZURICH"), text)
    assert matches(terms("小明"), text) and matches(terms("王"), text)
    assert not matches(terms("athleen"), text)  # the middle of a word is not its start
    assert not matches(terms("kath smith"), text)
    assert not matches(terms("明小"), text)


def test_a_query_holds_at_most_terms_max_terms_and_no_control_characters():
    assert len(terms(" ".join(f"w{i}" for i in range(30)))) == TERMS_MAX
    assert terms("\x00a\x01b") == ["a", "b"]
    assert terms("\ud800kate") == ["kate"]  # a lone surrogate is no word character
