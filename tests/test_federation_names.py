"""Fediverse addresses and origins (social/federation/names.py): pure functions, no Redis."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from social.account_forms import UsernameField
from social.federation.names import (
    ADDRESS_INPUT_MAX,
    DOMAIN_MAX,
    NAME_MAX,
    Address,
    InvalidAddress,
    Origin,
    format_acct,
    is_local_name,
    is_remote_name,
    normalise_domain,
    parse_address,
    same_origin,
    split_acct,
    url_domain,
    url_on_domain,
    url_origin,
)


@pytest.mark.parametrize(
    "text",
    ["@bob@beta.test", "bob@beta.test", "acct:bob@beta.test", "ACCT:bob@BETA.test"],
)
def test_the_three_spellings_of_an_address_give_one_address(text):
    assert parse_address(text) == Address("bob", "beta.test")


def test_an_address_keeps_the_case_of_its_name_and_writes_its_resource():
    address = parse_address("@Bob.Smith@Beta.Test")
    assert address == Address("Bob.Smith", "beta.test")
    assert str(address) == "Bob.Smith@beta.test"
    assert address.resource == "acct:Bob.Smith@beta.test"


@pytest.mark.parametrize(
    ("domain", "normal"),
    [
        ("Beta.Test", "beta.test"),
        ("bücher.example", "xn--bcher-kva.example"),
        ("BÜCHER.example", "xn--bcher-kva.example"),
        ("xn--bcher-kva.example", "xn--bcher-kva.example"),
        ("ДОМЕН.рф", "xn--d1acufc.xn--p1ai"),
        ("ｅｘａｍｐｌｅ。com", "example.com"),  # full-width letters and dot
        ("example.com.", "example.com"),  # the root's dot: one name, one block
        ("alpha.test:18001", "alpha.test:18001"),
        ("alpha.test:018001", "alpha.test:18001"),
        ("127.0.0.1:8000", "127.0.0.1:8000"),
        ("a-b.c-d.test", "a-b.c-d.test"),
        ("a" * 63 + ".test", "a" * 63 + ".test"),
    ],
)
def test_a_domain_is_lower_case_punycode_with_its_port(domain, normal):
    assert normalise_domain(domain) == normal
    assert parse_address(f"bob@{domain}").domain == normal


@pytest.mark.parametrize(
    "domain",
    [
        "",
        "a..b",
        ".beta.test",
        "-beta.test",
        "beta-.test",
        "under_score.test",
        "beta test",
        "beta.test/path",
        "beta.test?q",
        "beta.test#x",
        "beta.test@evil.test",
        "a" * 64 + ".test",  # a label over 63
        ".".join(["a" * 60] * 5),  # over 253 in all
        "xn--zz.test",  # punycode that decodes to nothing
        "0x7f.0.0.1",  # a resolver would read 127.0.0.1
        "2130706433",
        "127.1",
        "256.0.0.1",
        "example.123",
        "[::1]",
        "[::1]:80",
        "alpha.test:",
        "alpha.test:0",
        "alpha.test:65536",
        "alpha.test:²",  # str.isdigit() takes it
        "alpha.test:１８００１",  # int() takes full-width digits
        "alpha.test:١٢",  # and Arabic-Indic ones
        "alpha.test: 80",
        "alpha.test:+80",
        "alpha.test:80:80",
    ],
)
def test_anything_else_is_no_domain(domain):
    with pytest.raises(InvalidAddress):
        normalise_domain(domain)
    with pytest.raises(InvalidAddress):
        parse_address(f"bob@{domain}")


@pytest.mark.parametrize(
    "name", ["bob", "Bob", "bob_2", "bob.smith", "bob-smith", "a", "a..b", "_", "x" * NAME_MAX]
)
def test_a_remote_name_follows_mastodons_rule(name):
    assert is_remote_name(name)
    assert parse_address(f"{name}@beta.test").name == name


@pytest.mark.parametrize(
    "name",
    [
        "",
        ".bob",
        "bob.",
        "-bob",
        "bob-",
        "bo b",
        "bob/x",
        "bob:x",
        "bob%40x",
        "bob+tag",
        "ａlice",  # full-width a
        "аlice",  # Cyrillic a
        "\u212aate",  # the Kelvin sign, which [a-z] with IGNORECASE takes for k
        "\u017fam",  # the long s, likewise
        "zoë",
        "bob\n",
        "x" * (NAME_MAX + 1),
    ],
)
def test_anything_else_is_no_name(name):
    assert not is_remote_name(name)
    with pytest.raises(InvalidAddress):
        parse_address(f"{name}@beta.test")


@pytest.mark.parametrize(
    "text",
    ["", "@", "bob@", "@bob@", "@@bob@beta.test", "acct:@bob@beta.test", "bob@@beta.test"]
    + ["bob@beta.test@evil.test", "https://beta.test/@bob", " bob@beta.test", "bob@beta.test "],
)
def test_malformed_addresses_are_refused(text):
    with pytest.raises(InvalidAddress):
        parse_address(text)


def test_an_over_long_address_is_refused_before_it_is_parsed():
    with pytest.raises(InvalidAddress):
        split_acct("a" * (ADDRESS_INPUT_MAX + 1))
    with pytest.raises(InvalidAddress):
        parse_address("bob@" + "a" * 1_000_000)
    with pytest.raises(InvalidAddress):
        normalise_domain("a." * 1_000_000)
    assert len(normalise_domain(".".join(["a" * 63] * 3) + "." + "a" * 61)) == DOMAIN_MAX


def test_an_address_without_a_domain_is_no_remote_address():
    for text in ("bob", "@bob", "acct:bob"):
        with pytest.raises(InvalidAddress):
            parse_address(text)


@pytest.mark.parametrize(
    ("text", "split"),
    [
        ("bob", ("bob", None)),
        ("@bob", ("bob", None)),
        ("bob@beta.test", ("bob", "beta.test")),
        ("@Bob@Beta.Test", ("Bob", "beta.test")),
        ("acct:bob@alpha.test:18001", ("bob", None)),  # the local domain is no domain
        ("bob@ALPHA.test:18001", ("bob", None)),
        ("bob@alpha.test", ("bob", "alpha.test")),  # another port is another server
        ("bob@alpha.test:18002", ("bob", "alpha.test:18002")),
    ],
)
def test_split_acct_tells_local_names_from_remote_addresses(text, split):
    assert split_acct(text, local_domain="alpha.test:18001") == split


def test_split_acct_without_a_local_domain_keeps_every_domain():
    assert split_acct("bob@alpha.test:18001") == ("bob", "alpha.test:18001")


@pytest.mark.parametrize(
    ("name", "domain", "acct"),
    [
        ("bob", None, "bob"),
        ("bob", "alpha.test:18001", "bob"),
        ("bob", "Alpha.Test:18001", "bob"),
        ("bob", "beta.test", "bob@beta.test"),
        ("bob", "bücher.example", "bob@xn--bcher-kva.example"),
        ("Bob", "beta.test:18002", "Bob@beta.test:18002"),
    ],
)
def test_format_acct_writes_a_name_for_local_accounts_and_name_at_domain_for_others(
    name, domain, acct
):
    assert format_acct(name, domain, "alpha.test:18001") == acct


def test_format_and_split_are_inverse():
    for name, domain in (("bob", None), ("carol.x", "beta.test:18002")):
        acct = format_acct(name, domain, "alpha.test:18001")
        assert split_acct(acct, "alpha.test:18001") == (name, domain)


@pytest.mark.parametrize(
    "name",
    ["bob", "Bob_2", "abc", "x" * 20, "ab", "x" * 21, "bob.smith", "bob-smith", "bob@beta.test"]
    + ["ａlice", "zoë", "bob ", "", "\u212aate", "b_b"],
)
def test_the_local_name_rule_is_the_sign_up_rule(name):
    try:
        signs_up = UsernameField().clean(name) == name  # the form trims what is typed
    except ValidationError:
        signs_up = False
    assert is_local_name(name) == signs_up


def test_every_local_name_is_a_valid_remote_name_and_none_holds_an_at_sign():
    for name in ("abc", "Bob_2", "___", "x" * 20, "0123"):
        assert is_local_name(name) and is_remote_name(name) and "@" not in name
    assert not is_local_name("bob@beta.test")


# --- Origins -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("https://beta.test/users/bob", Origin("https", "beta.test", 443)),
        ("HTTPS://Beta.Test:443/users/bob", Origin("https", "beta.test", 443)),
        ("http://beta.test/", Origin("http", "beta.test", 80)),
        ("http://alpha.test:18001/users/bob", Origin("http", "alpha.test", 18001)),
        ("http://alpha.test:/x", Origin("http", "alpha.test", 80)),
        ("https://bücher.example/x", Origin("https", "xn--bcher-kva.example", 443)),
        ("https://beta.test.?x#y", Origin("https", "beta.test", 443)),
    ],
)
def test_an_origin_is_scheme_host_and_port_normalised(url, origin):
    assert url_origin(url) == origin


@pytest.mark.parametrize(
    "url",
    [
        "",
        "/users/bob",
        "//beta.test/users/bob",
        "beta.test/users/bob",
        "ftp://beta.test/",
        "javascript:alert(1)",
        "https://alpha.test@evil.test/",  # user information: whose host is it?
        "https://evil.test\\@alpha.test/",  # a backslash: browsers read it as a slash
        "https://evil.test\\.alpha.test/",
        "https://beta.test /x",
        "https://beta.test\t/x",
        "https://beta.test\x00/x",
        "https:///x",
        "https://[::1]/x",
        "https://[::1/x",
        "https://beta.test:²/x",
        "https://beta.test:١٢/x",
        "https://beta.test:99999/x",
        "https://beta%2etest/x",
        "https://" + "a" * 5000 + ".test/",
    ],
)
def test_a_url_with_no_clear_origin_has_none(url):
    assert url_origin(url) is None
    assert not same_origin(url, url)
    assert url_domain(url) is None


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("https://beta.test/users/bob", "https://beta.test/users/bob/statuses/1"),
        ("https://beta.test/a", "HTTPS://BETA.TEST:443/b"),
        ("https://bücher.example/a", "https://xn--bcher-kva.example/b"),
        ("http://alpha.test:18001/a", "http://alpha.test:18001/b"),
        ("https://beta.test./a", "https://beta.test/b"),
    ],
)
def test_urls_of_one_server_have_the_same_origin(a, b):
    assert same_origin(a, b)
    assert same_origin(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("https://beta.test/a", "https://evil.test/a"),
        ("https://beta.test/a", "https://beta.test.evil.test/a"),
        ("https://beta.test/a", "https://sub.beta.test/a"),
        ("https://beta.test/a", "http://beta.test/a"),
        ("https://beta.test/a", "https://beta.test:8443/a"),
        ("http://alpha.test:18001/a", "http://alpha.test:18002/a"),
        ("https://beta.test/a", "https://alpha.test@beta.test/a"),
    ],
)
def test_urls_of_other_servers_do_not(a, b):
    assert not same_origin(a, b)
    assert not same_origin(b, a)


@pytest.mark.parametrize(
    ("url", "domain"),
    [
        ("http://alpha.test:18001", "alpha.test:18001"),
        ("https://example.org", "example.org"),
        ("https://example.org:443/path", "example.org"),
        ("http://example.org:443/", "example.org:443"),
        ("HTTP://127.0.0.1:8000", "127.0.0.1:8000"),
    ],
)
def test_url_domain_is_the_domain_an_account_there_would_have(url, domain):
    assert url_domain(url) == domain


def test_url_on_domain_checks_a_url_against_an_accounts_domain():
    assert url_on_domain("https://beta.test/users/bob", "beta.test")
    assert url_on_domain("https://Beta.Test/users/bob", "BETA.test.")
    assert url_on_domain("http://alpha.test:18001/users/bob", "alpha.test:18001")
    assert url_on_domain("https://bücher.example/u/x", "xn--bcher-kva.example")
    assert not url_on_domain("https://evil.test/users/bob", "beta.test")
    assert not url_on_domain("https://beta.test:8443/users/bob", "beta.test")
    assert not url_on_domain("http://alpha.test:18002/users/bob", "alpha.test:18001")
    assert not url_on_domain("https://beta.test@evil.test/", "beta.test")
    assert not url_on_domain("https://beta.test/", "not a domain")
