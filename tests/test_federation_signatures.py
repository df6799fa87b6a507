"""HTTP signatures (social/federation/signatures.py): keys, digests, signing, verifying.

Pure: no Redis. The published examples are copied from their specifications, wrapped as
printed there (RFC 8792 '\\' folding for RFC 9421, unfolded by `unfold`):
draft-cavage-http-signatures-12 Appendix C (its 1024-bit test key, C.1 to C.3) and
RFC 9421 (the B.1.1, B.1.2 and B.1.4 test keys; B.2.1, B.2.2, B.2.3, B.2.6, the section
3.2 and 4.3 examples and a B.4 transformation), each checked at the time it was made.
"""

from __future__ import annotations

import base64
import hashlib
import re
from email.utils import formatdate

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa

from social.federation import signatures
from social.federation.signatures import (
    DRAFT,
    RFC9421,
    ParsedSignature,
    RequestParts,
    SignatureError,
    SignatureMismatch,
    check_content_digest,
    check_digest,
    check_signature,
    content_digest_header,
    digest_header,
    generate_key_pair,
    load_public_key,
    parse_signature,
    sign_request,
    sign_request_rfc9421,
    signature_base,
    verify_signature,
)


def unfold(text: str) -> str:
    """Return text with RFC 8792 single-slash folding undone ('\\' at a line's end joins
    the next line, whose leading spaces go)."""
    return re.sub(r"\\\n *", "", text.strip())


def crypto_verifies(request: RequestParts, parsed: ParsedSignature, key) -> bool:
    """Return whether the signature's bytes verify over our signature base, rules aside:
    for published examples that cover less than our verifier demands."""
    base = signature_base(request, parsed)
    return any(
        signatures._verifies(key, algorithm, parsed.signature, base)
        for algorithm in signatures._algorithms(parsed, key)
    )


# --- Keys -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sender():
    return generate_key_pair()


@pytest.fixture(scope="module")
def stranger():
    return generate_key_pair()


def test_a_generated_pair_is_rsa_2048_in_pem_and_its_repr_hides_the_private_key(sender):
    assert sender.public_pem.startswith("-----BEGIN PUBLIC KEY-----\n")
    assert sender.private_pem.startswith("-----BEGIN PRIVATE KEY-----\n")
    assert load_public_key(sender.public_pem).key_size == 2048
    assert "PRIVATE" not in repr(sender) and "PUBLIC KEY" in repr(sender)


# RFC 9421 B.1.1 `test-key-rsa`, PKCS#1 as printed there.
TEST_KEY_RSA = """
-----BEGIN RSA PUBLIC KEY-----
MIIBCgKCAQEAhAKYdtoeoy8zcAcR874L8cnZxKzAGwd7v36APp7Pv6Q2jdsPBRrw
WEBnez6d0UDKDwGbc6nxfEXAy5mbhgajzrw3MOEt8uA5txSKobBpKDeBLOsdJKFq
MGmXCQvEG7YemcxDTRPxAleIAgYYRjTSd/QBwVW9OwNFhekro3RtlinV0a75jfZg
kne/YiktSvLG34lw2zqXBDTC5NHROUqGTlML4PlNZS5Ri2U4aCNx2rUPRcKIlE0P
uKxI4T+HIaFpv8+rdV6eUgOrB2xeI1dSFFn/nnv5OoZJEIB+VmuKn3DCUcCZSFlQ
PSXSfBDiUGhwOw76WuSSsf1D4b/vLoJ10wIDAQAB
-----END RSA PUBLIC KEY-----
"""

# RFC 9421 B.1.2 `test-key-rsa-pss`.
TEST_KEY_RSA_PSS = """
-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAr4tmm3r20Wd/PbqvP1s2
+QEtvpuRaV8Yq40gjUR8y2Rjxa6dpG2GXHbPfvMs8ct+Lh1GH45x28Rw3Ry53mm+
oAXjyQ86OnDkZ5N8lYbggD4O3w6M6pAvLkhk95AndTrifbIFPNU8PPMO7OyrFAHq
gDsznjPFmTOtCEcN2Z1FpWgchwuYLPL+Wokqltd11nqqzi+bJ9cvSKADYdUAAN5W
Utzdpiy6LbTgSxP7ociU4Tn0g5I6aDZJ7A8Lzo0KSyZYoA485mqcO0GVAdVw9lq4
aOT9v6d+nb4bnNkQVklLQ3fVAvJm+xdDOp9LCNCN48V2pnDOkFV6+U9nV5oyc6XI
2wIDAQAB
-----END PUBLIC KEY-----
"""

# RFC 9421 B.1.4 `test-key-ed25519`.
TEST_KEY_ED25519 = """
-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=
-----END PUBLIC KEY-----
"""

# draft-cavage-http-signatures-12 Appendix C `keyId=Test` (1024 bits, despite its text).
CAVAGE_TEST_KEY = """
-----BEGIN PUBLIC KEY-----
MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDCFENGw33yGihy92pDjZQhl0C3
6rPJj+CvfSC8+q28hxA161QFNUd13wuCTUcq0Qd2qsBe/2hFyc2DCJJg0h1L78+6
Z4UMR7EOcpfdUE9Hf3m/hs+FUR45uBJeDK1HSFHD8bHKD6kv8FPGfJTotc+2xjJw
oYi+1hqp1fIekaxsyQIDAQAB
-----END PUBLIC KEY-----
"""


def test_public_keys_load_from_spki_and_pkcs1_and_ed25519():
    assert load_public_key(TEST_KEY_RSA).key_size == 2048
    assert load_public_key(TEST_KEY_RSA_PSS).key_size == 2048
    assert isinstance(load_public_key(TEST_KEY_ED25519), ed25519.Ed25519PublicKey)


def test_an_rsa_key_under_2048_or_over_8192_bits_is_refused():
    with pytest.raises(SignatureError, match="has 1024 bits"):
        load_public_key(CAVAGE_TEST_KEY)
    # 8200 bits: a public key needs no primes, so any odd modulus of that size serves.
    modulus = (1 << 8199) | 1 | (1 << 100)
    big = rsa.RSAPublicNumbers(65537, modulus).public_key()
    pem = big.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()
    with pytest.raises(SignatureError, match="has 8200 bits"):
        load_public_key(pem)


def test_a_key_that_is_too_long_or_not_a_key_or_of_another_kind_is_refused():
    with pytest.raises(SignatureError, match="too long"):
        load_public_key(TEST_KEY_RSA + " " * 16 * 1024)
    for garbage in ("", "hello", TEST_KEY_RSA.replace("MIIB", "MIIC"), "é"):
        with pytest.raises(SignatureError, match="not a PEM public key"):
            load_public_key(garbage)
    ec_pem = (
        ec.generate_private_key(ec.SECP256R1())
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    with pytest.raises(SignatureError, match="neither RSA nor Ed25519"):
        load_public_key(ec_pem.decode())


# --- Digests ----------------------------------------------------------------------------

BODY = b'{"hello": "world"}'  # the body of both specifications' examples


def test_the_digest_header_is_sha256_in_base64_as_both_specifications_print_it():
    assert digest_header(BODY) == "SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE="
    assert content_digest_header(BODY) == "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:"


def test_a_digest_header_may_list_several_algorithms_in_any_case():
    sha512 = base64.b64encode(hashlib.sha512(BODY).digest()).decode()
    check_digest("SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=", BODY)
    check_digest(f"md5=abc, sha-512={sha512}", BODY)
    check_digest(f"Sha-512={sha512},SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=", BODY)


@pytest.mark.parametrize(
    "value, reason",
    [
        ("SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=", "does not match the body"),
        ("MD5=rL0Y20zC+Fzt72VPzMSk2A==", "no SHA-256 or SHA-512"),
        ("SHA-256=not*base64", "not valid base64"),
        ("SHA-256=AAAA", "not a sha256 digest"),
        ("SHA-256", "malformed"),
        ("a=b," * 9, "too many"),
        ("SHA-256=" + "A" * 1100, "too long"),
    ],
)
def test_a_digest_header_that_does_not_match_or_is_malformed_is_refused(value, reason):
    with pytest.raises(SignatureError, match=reason):
        check_digest(value, BODY + b" ")


def test_a_content_digest_is_checked_with_sha256_or_sha512():
    # RFC 9421's test-request carries this Content-Digest of the same body.
    published = unfold(
        r"""
sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+T\
  aPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:
"""
    )
    check_content_digest(published, BODY)
    check_content_digest("sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:", BODY)
    with pytest.raises(SignatureError, match="does not match the body"):
        check_content_digest(published, b"{}")
    with pytest.raises(SignatureError, match="no sha-256 or sha-512"):
        check_content_digest("md5=:rL0Y20zC+Fzt72VPzMSk2A==:", BODY)
    for malformed in ("sha-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=", "sha-256=:abc"):
        with pytest.raises(SignatureError, match="malformed"):
            check_content_digest(malformed, BODY)


# --- Signing and verifying our own (draft-cavage, as Mastodon does) -----------------------

SIGNED_AT = 1_700_000_000
URL = "https://beta.test/users/bob/inbox"
KEY_ID = "https://alpha.test/users/alice#main-key"


def received(added, *, method="POST", target="/users/bob/inbox", body=BODY, extra=()):
    """Return a request as the receiving server sees one sent with the added headers."""
    pairs = [("User-Agent", "Retwis/1.0"), ("Content-Type", "application/activity+json")]
    return RequestParts.of(method, target, pairs + list(added.items()) + list(extra), body)


def test_a_signed_post_verifies_and_says_whose_key_and_what_it_covers(sender):
    added = sign_request("POST", URL, None, BODY, KEY_ID, sender.private_pem, now=SIGNED_AT)
    assert set(added) == {"Host", "Date", "Digest", "Signature"}
    assert added["Host"] == "beta.test" and added["Date"] == "Tue, 14 Nov 2023 22:13:20 GMT"
    assert added["Signature"].startswith(
        f'keyId="{KEY_ID}",algorithm="rsa-sha256",headers="(request-target) host date digest",'
    )
    request = received(added)
    parsed = parse_signature(request)
    assert parsed.key_id == KEY_ID and parsed.scheme == DRAFT

    verified = verify_signature(
        request, parsed, load_public_key(sender.public_pem), now=SIGNED_AT + 30
    )

    assert (verified.key_id, verified.scheme, verified.algorithm) == (KEY_ID, DRAFT, "rsa-sha256")
    assert verified.components == ("(request-target)", "host", "date", "digest")
    assert verified.created == SIGNED_AT


def test_a_signed_get_covers_accept_and_no_digest(sender):
    url = "http://alpha.test:18001/users/alice/outbox?page=2"
    accept = 'application/ld+json; profile="https://www.w3.org/ns/activitystreams"'
    added = sign_request(
        "GET", url, {"Accept": accept}, None, KEY_ID, sender.private_pem, now=SIGNED_AT
    )
    assert "Digest" not in added and added["Host"] == "alpha.test:18001"
    request = received(
        added,
        method="GET",
        target="/users/alice/outbox?page=2",
        body=b"",
        extra=[("Accept", accept)],
    )

    verified = verify_signature(
        request,
        parse_signature(request),
        load_public_key(sender.public_pem),
        now=SIGNED_AT,
    )

    assert verified.components == ("(request-target)", "host", "date", "accept")
    tampered = RequestParts.of("GET", "/users/alice/outbox?page=3", request.headers)
    with pytest.raises(SignatureMismatch):
        verify_signature(
            tampered,
            parse_signature(tampered),
            load_public_key(sender.public_pem),
            now=SIGNED_AT,
        )


def _retarget(request, **changes):
    fields = {
        "method": request.method,
        "target": request.target,
        "headers": dict(request.headers),
        "body": request.body,
    }
    headers = changes.pop("headers", {})
    fields.update(changes)
    fields["headers"].update(headers)
    return RequestParts(**fields)


TAMPERINGS = {
    "method": lambda r: _retarget(r, method="PUT"),
    "path": lambda r: _retarget(r, target="/users/carol/inbox"),
    "query": lambda r: _retarget(r, target="/users/bob/inbox?x=1"),
    "host": lambda r: _retarget(r, headers={"host": "gamma.test"}),
    "date": lambda r: _retarget(r, headers={"date": "Tue, 14 Nov 2023 22:13:21 GMT"}),
    "body and digest": lambda r: _retarget(r, body=b"{}", headers={"digest": digest_header(b"{}")}),
    "signature bytes": lambda r: _retarget(
        r, headers={"signature": _flip_first_signature_character(r.headers["signature"])}
    ),
}


def _flip_first_signature_character(header):
    head, _, encoded = header.partition('signature="')
    return f'{head}signature="{"B" if encoded[0] == "A" else "A"}{encoded[1:]}'


@pytest.mark.parametrize("part", TAMPERINGS)
def test_a_signed_request_changed_in_any_covered_part_fails_to_verify(sender, part):
    added = sign_request("POST", URL, None, BODY, KEY_ID, sender.private_pem, now=SIGNED_AT)
    key = load_public_key(sender.public_pem)
    request = received(added)
    assert verify_signature(request, parse_signature(request), key, now=SIGNED_AT)
    tampered = TAMPERINGS[part](request)

    with pytest.raises(SignatureMismatch, match="does not verify with the key"):
        verify_signature(tampered, parse_signature(tampered), key, now=SIGNED_AT)


def test_a_body_changed_under_its_digest_is_refused_before_any_cryptography(sender):
    added = sign_request("POST", URL, None, BODY, KEY_ID, sender.private_pem, now=SIGNED_AT)
    request = _retarget(received(added), body=b'{"hello": "moon"}')
    parsed = parse_signature(request)

    with pytest.raises(SignatureError, match="digest does not match the body") as refused:
        check_signature(request, parsed, now=SIGNED_AT)
    assert not isinstance(refused.value, SignatureMismatch)
    with pytest.raises(SignatureError, match="digest does not match the body"):
        verify_signature(request, parsed, load_public_key(sender.public_pem), now=SIGNED_AT)


def test_another_key_id_means_another_key_which_does_not_verify(sender, stranger):
    added = sign_request("POST", URL, None, BODY, KEY_ID, sender.private_pem, now=SIGNED_AT)
    claimed = "https://gamma.test/users/carol#main-key"
    request = _retarget(
        received(added),
        headers={"signature": added["Signature"].replace(KEY_ID, claimed)},
    )
    parsed = parse_signature(request)
    assert parsed.key_id == claimed

    with pytest.raises(SignatureMismatch):
        verify_signature(request, parsed, load_public_key(stranger.public_pem), now=SIGNED_AT)


@pytest.mark.parametrize(
    "now, reason",
    [
        (SIGNED_AT - 3601, "more than an hour in the future"),
        (SIGNED_AT + 300 + 3601, "has expired"),
    ],
)
def test_a_date_outside_the_window_is_refused(sender, now, reason):
    added = sign_request("POST", URL, None, BODY, KEY_ID, sender.private_pem, now=SIGNED_AT)
    request = received(added)
    key = load_public_key(sender.public_pem)
    for inside in (SIGNED_AT - 3600, SIGNED_AT + 300 + 3600):
        assert verify_signature(request, parse_signature(request), key, now=inside)

    with pytest.raises(SignatureError, match=reason):
        verify_signature(request, parse_signature(request), key, now=now)


# --- Signatures made by hand: other servers' choices, and what we refuse ------------------


def hand_signed(private_pem, request, params, lines):
    """Return request with a draft Signature header of params, signed over lines."""
    key = serialization.load_pem_private_key(private_pem.encode(), password=None)
    raw = key.sign("\n".join(lines).encode(), padding.PKCS1v15(), hashes.SHA256())
    header = params + f',signature="{base64.b64encode(raw).decode()}"'
    return _retarget(request, headers={"signature": header})


def base_request(date=SIGNED_AT, body=BODY):
    """Return a POST to /inbox at beta.test dated date, with body and its Digest."""
    headers = {"Host": "beta.test", "Date": formatdate(date, usegmt=True)}
    if body:
        headers["Digest"] = digest_header(body)
    return RequestParts.of("POST", "/inbox", headers, body)


@pytest.mark.parametrize("algorithm", ['algorithm="hs2019",', ""])
def test_hs2019_or_no_algorithm_with_created_and_expires_verifies(sender, algorithm):
    request = hand_signed(
        sender.private_pem,
        base_request(date=0),  # a wrong Date, not covered: (created) is
        f'keyId="k",{algorithm}created={SIGNED_AT},expires={SIGNED_AT + 6 * 3600},'
        'headers="(request-target) (created) (expires) host digest"',
        [
            "(request-target): post /inbox",
            f"(created): {SIGNED_AT}",
            f"(expires): {SIGNED_AT + 6 * 3600}",
            "host: beta.test",
            f"digest: {digest_header(BODY)}",
        ],
    )
    key = load_public_key(sender.public_pem)

    verified = verify_signature(request, parse_signature(request), key, now=SIGNED_AT + 7 * 3600)

    assert verified.algorithm == "rsa-sha256" and verified.created == SIGNED_AT
    with pytest.raises(SignatureError, match="has expired"):
        verify_signature(request, parse_signature(request), key, now=SIGNED_AT + 7 * 3600 + 1)


def test_a_longer_expiry_than_twelve_hours_is_cut_to_twelve(sender):
    expires = SIGNED_AT + 48 * 3600
    request = hand_signed(
        sender.private_pem,
        base_request(),
        f'keyId="k",algorithm="hs2019",created={SIGNED_AT},expires={expires},'
        'headers="(request-target) (created) (expires) host digest"',
        [
            "(request-target): post /inbox",
            f"(created): {SIGNED_AT}",
            f"(expires): {expires}",
            "host: beta.test",
            f"digest: {digest_header(BODY)}",
        ],
    )
    key = load_public_key(sender.public_pem)
    assert verify_signature(request, parse_signature(request), key, now=SIGNED_AT + 13 * 3600)

    with pytest.raises(SignatureError, match="has expired"):
        verify_signature(request, parse_signature(request), key, now=SIGNED_AT + 13 * 3600 + 1)


def test_an_unsigned_created_parameter_does_not_move_the_window(sender):
    # created= sent but (created) not signed: the Date counts, as an attacker could edit it.
    request = hand_signed(
        sender.private_pem,
        base_request(),
        f'keyId="k",algorithm="hs2019",created={SIGNED_AT + 7200},expires={SIGNED_AT + 9999},'
        'headers="(request-target) host date digest"',
        [
            "(request-target): post /inbox",
            "host: beta.test",
            f"date: {base_request().headers['date']}",
            f"digest: {digest_header(BODY)}",
        ],
    )
    parsed = parse_signature(request)
    assert parsed.created is None and parsed.expires is None

    with pytest.raises(SignatureError, match="has expired"):
        check_signature(request, parsed, now=SIGNED_AT + 5000)


@pytest.mark.parametrize(
    "names, reason",
    [
        ("host date digest", "must cover \\(request-target\\)"),
        ("(request-target) date digest", "must cover host"),
        ("(request-target) host digest", "must cover date or \\(created\\)"),
        ("(request-target) host date", "must cover digest on a request with a body"),
    ],
)
def test_a_signature_that_covers_too_little_is_refused(sender, names, reason):
    request = base_request()
    values = {
        "(request-target)": "post /inbox",
        "host": "beta.test",
        "date": request.headers["date"],
        "digest": request.headers["digest"],
    }
    request = hand_signed(
        sender.private_pem,
        request,
        f'keyId="k",algorithm="rsa-sha256",headers="{names}"',
        [f"{name}: {values[name]}" for name in names.split()],
    )

    with pytest.raises(SignatureError, match=reason):
        verify_signature(
            request,
            parse_signature(request),
            load_public_key(sender.public_pem),
            now=SIGNED_AT,
        )


def test_a_post_without_a_digest_header_is_refused_even_with_an_empty_body(sender):
    request = base_request(body=b"")
    request = hand_signed(
        sender.private_pem,
        request,
        'keyId="k",headers="(request-target) host date digest",algorithm="rsa-sha256"',
        ["(request-target): post /inbox", "host: beta.test", "date: x", "digest: x"],
    )

    with pytest.raises(SignatureError, match="the signed header digest is missing"):
        check_signature(request, parse_signature(request), now=SIGNED_AT)


@pytest.mark.parametrize(
    "header, reason",
    [
        ('keyId="k",signature="AAAA"' + "," + 'x="' + "y" * 4096 + '"', "too long"),
        ('keyId="k",signature="AAAA",headers="' + "a " * 21 + '"', "too many headers"),
        ('keyId="k",keyId="j",signature="AAAA"', "names keyId twice"),
        ('signature="AAAA"', "needs a keyId and a signature"),
        ('keyId="k",signature="AA$A"', "signature is not valid base64"),
        ('keyId="k",signature="AAAA",algorithm="hmac-sha256"', "hmac-sha256 is not supported"),
        ('keyId="k",signature="AAAA",headers="(request-target) (nonce)"', "(nonce) is not"),
        ('keyId="k",signature="AAAA",headers="host host"', "lists a header twice"),
        ('keyId="k",signature="AAAA",headers="(created)",algorithm="rsa-sha256"', "rsa-sha256"),
        ('keyId="k",signature="AAAA",headers="(created)"', "(created) is signed but"),
        ('keyId="k" signature="AAAA"', "malformed"),
        ('keyId="k",signature="AAAA",', "malformed"),
        ('keyId="ké",signature="AAAA"', "not printable ASCII"),
    ],
)
def test_a_malformed_or_unbounded_signature_header_is_refused_when_parsed(header, reason):
    request = _retarget(base_request(), headers={"signature": header})

    with pytest.raises(SignatureError, match=re.escape(reason) if "(" in reason else reason):
        parse_signature(request)


def test_unknown_parameters_and_an_old_signature_prefix_are_tolerated(sender):
    request = base_request()
    lines = [
        "(request-target): post /inbox",
        "host: beta.test",
        f"date: {request.headers['date']}",
        f"digest: {request.headers['digest']}",
    ]
    request = hand_signed(
        sender.private_pem,
        request,
        'Signature keyId = "k", nonce=abc,algorithm="rsa-sha256",'
        'headers="(request-target) host date digest",tag="a\\"b"',
        lines,
    )

    parsed = parse_signature(request)

    assert parsed.key_id == "k"
    assert verify_signature(request, parsed, load_public_key(sender.public_pem), now=SIGNED_AT)


def test_a_signed_date_that_is_not_an_http_date_is_refused(sender):
    for date in ("yesterday", "Tue, 14 Nov 2023 22:13:20 -0000", "Tue, 14 Nov 2023 " + "1" * 60):
        request = _retarget(base_request(), headers={"date": date})
        request = hand_signed(
            sender.private_pem,
            request,
            'keyId="k",algorithm="rsa-sha256",headers="(request-target) host date digest"',
            [
                "(request-target): post /inbox",
                "host: beta.test",
                f"date: {date}",
                f"digest: {request.headers['digest']}",
            ],
        )

        with pytest.raises(SignatureError, match="the Date header is not an HTTP date"):
            check_signature(request, parse_signature(request), now=SIGNED_AT)


def test_an_unsigned_request_is_refused():
    with pytest.raises(SignatureError, match="not signed"):
        parse_signature(base_request())


def test_signing_refuses_our_own_bad_input(sender):
    for method, url, key_id in [
        ("post", URL, KEY_ID),
        ("POST", "ftp://beta.test/inbox", KEY_ID),
        ("POST", "https://user@beta.test/inbox", KEY_ID),
        ("POST", URL, 'a"b'),
    ]:
        with pytest.raises(ValueError):
            sign_request(method, url, None, BODY, key_id, sender.private_pem)
    small = rsa.generate_private_key(public_exponent=65537, key_size=1024).private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    for pem in ("garbage", small.decode(), sender.public_pem):
        with pytest.raises(ValueError):
            sign_request("POST", URL, None, BODY, KEY_ID, pem)


# --- Published examples: draft-cavage-http-signatures-12, Appendix C -----------------------

CAVAGE_DATE = 1388957500  # Sun, 05 Jan 2014 21:31:40 GMT, the Date of every example


def cavage_request(signature: str) -> RequestParts:
    """Return Appendix C's request ("All examples use this request") with a Signature."""
    return RequestParts.of(
        "POST",
        "/foo?param=value&pet=dog",
        {
            "Host": "example.com",
            "Date": "Sun, 05 Jan 2014 21:31:40 GMT",
            "Content-Type": "application/json",
            "Digest": "SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=",
            "Content-Length": "18",
            "Signature": signature,
        },
        BODY,
    )


def cavage_key():
    """Return Appendix C's key, loaded without our 2048-bit floor (it has 1024 bits)."""
    return serialization.load_pem_public_key(CAVAGE_TEST_KEY.encode())


def test_cavage_c1_default_test_signs_the_date_alone_which_is_too_little_for_us():
    request = cavage_request(
        'keyId="Test",algorithm="rsa-sha256",'
        'signature="SjWJWbWN7i0wzBvtPl8rbASWz5xQW6mcJmn+ibttBqtifLN7Sazz'
        "6m79cNfwwb8DMJ5cou1s7uEGKKCs+FLEEaDV5lp7q25WqS+lavg7T8hc0GppauB"
        '6hbgEKTwblDHYGEtbGmtdHgVCk9SuS13F0hZ8FD0k/5OxEPXe5WozsbM="'
    )
    parsed = parse_signature(request)

    assert signature_base(request, parsed) == b"date: Sun, 05 Jan 2014 21:31:40 GMT"
    assert crypto_verifies(request, parsed, cavage_key())
    with pytest.raises(SignatureError, match="must cover \\(request-target\\)"):
        verify_signature(request, parsed, cavage_key(), now=CAVAGE_DATE)


def test_cavage_c2_basic_test_verifies_but_lacks_the_digest_its_body_needs():
    # C.2 prints only its Authorization header; its parameters are a Signature header's.
    request = cavage_request(
        'Signature keyId="Test",algorithm="rsa-sha256",'
        'headers="(request-target) host date",'
        'signature="qdx+H7PHHDZgy4y/Ahn9Tny9V3GP6YgBPyUXMmoxWtLbHpUnXS'
        "2mg2+SbrQDMCJypxBLSPQR2aAjn7ndmw2iicw3HMbe8VfEdKFYRqzic+efkb3"
        'nndiv/x1xSHDJWeSWkx3ButlYSuBskLu6kd9Fswtemr3lgdDEmn04swr2Os0="'
    )
    parsed = parse_signature(request)

    assert signature_base(request, parsed) == (
        b"(request-target): post /foo?param=value&pet=dog\n"
        b"host: example.com\n"
        b"date: Sun, 05 Jan 2014 21:31:40 GMT"
    )
    assert crypto_verifies(request, parsed, cavage_key())
    with pytest.raises(SignatureError, match="must cover digest"):
        verify_signature(request, parsed, cavage_key(), now=CAVAGE_DATE)


C3_SIGNATURE = (
    "vSdrb+dS3EceC9bcwHSo4MlyKS59iFIrhgYkz8+oVLEEzmYZZvRs"
    "8rgOp+63LEM3v+MFHB32NfpB2bEKBIvB1q52LaEUHFv120V01IL+TAD48XaERZF"
    "ukWgHoBTLMhYS2Gb51gWxpeIq8knRmPnYePbF5MOkR0Zkly4zKH7s1dE="
)


def test_cavage_c3_all_headers_test_verifies_over_its_printed_signing_string():
    # C.3's header lists (created) (expires) with rsa-sha256, which its own section 2.3
    # forbids (the appendix warns its vectors are "OLD AND POSSIBLY WRONG"); its signature
    # is over the signing string it prints, whose header list is this one.
    request = cavage_request(
        'keyId="Test",algorithm="rsa-sha256",'
        'headers="(request-target) host date content-type digest content-length",'
        f'signature="{C3_SIGNATURE}"'
    )
    parsed = parse_signature(request)
    assert signature_base(request, parsed) == (
        b"(request-target): post /foo?param=value&pet=dog\n"
        b"host: example.com\n"
        b"date: Sun, 05 Jan 2014 21:31:40 GMT\n"
        b"content-type: application/json\n"
        b"digest: SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=\n"
        b"content-length: 18"
    )

    verified = verify_signature(request, parsed, cavage_key(), now=CAVAGE_DATE)

    assert (verified.key_id, verified.scheme, verified.created) == ("Test", DRAFT, CAVAGE_DATE)
    assert verified.components[-1] == "content-length"


def test_cavage_c3_as_printed_is_refused_for_signing_created_with_rsa_sha256():
    request = cavage_request(
        'keyId="Test",algorithm="rsa-sha256",'
        "created=1402170695, expires=1402170699,"
        'headers="(request-target) (created) (expires) '
        'host date content-type digest content-length",'
        f'signature="{C3_SIGNATURE}"'
    )

    with pytest.raises(SignatureError, match="\\(created\\) cannot be signed with rsa-sha256"):
        parse_signature(request)


# --- Published examples: RFC 9421 -------------------------------------------------------

RFC_CREATED = 1618884473


def rfc_request(**more: str) -> RequestParts:
    """Return RFC 9421's `test-request` (section B.2), with more headers."""
    headers = {
        "Host": "example.com",
        "Date": "Tue, 20 Apr 2021 02:07:55 GMT",
        "Content-Type": "application/json",
        "Content-Digest": unfold(
            r"""
sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+T\
  aPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:
"""
        ),
        "Content-Length": "18",
    }
    headers.update({name.replace("_", "-"): unfold(value) for name, value in more.items()})
    return RequestParts.of("POST", "/foo?param=Value&Pet=dog", headers, BODY)


def test_rfc9421_b21_minimal_signature_verifies_but_covers_nothing_we_need():
    request = rfc_request(
        Signature_Input=r"""
sig-b21=();created=1618884473\
  ;keyid="test-key-rsa-pss";nonce="b3k2pp5k7z-50gnwp.yemd"
""",
        Signature=r"""
sig-b21=:d2pmTvmbncD3xQm8E9ZV2828BjQWGgiwAaw5bAkgibUopem\
  LJcWDy/lkbbHAve4cRAtx31Iq786U7it++wgGxbtRxf8Udx7zFZsckzXaJMkA7ChG\
  52eSkFxykJeNqsrWH5S+oxNFlD4dzVuwe8DhTSja8xxbR/Z2cOGdCbzR72rgFWhzx\
  2VjBqJzsPLMIQKhO4DGezXehhWwE56YCE+O6c0mKZsfxVrogUvA4HELjVKWmAvtl6\
  UnCh8jYzuVG5WSb/QEVPnP5TmcAnLH1g+s++v6d4s8m0gCw1fV5/SITLq9mhho8K3\
  +7EPYTU8IU1bLhdxO5Nyt8C8ssinQ98Xw9Q==:
""",
    )
    parsed = parse_signature(request)
    key = load_public_key(TEST_KEY_RSA_PSS)

    assert (parsed.scheme, parsed.key_id, parsed.label) == (RFC9421, "test-key-rsa-pss", "sig-b21")
    assert signature_base(request, parsed).decode() == unfold(
        r"""
"@signature-params": ();created=1618884473;keyid="test-key-rsa-pss"\
  ;nonce="b3k2pp5k7z-50gnwp.yemd"
"""
    )
    assert crypto_verifies(request, parsed, key)
    with pytest.raises(SignatureError, match="must cover @method"):
        verify_signature(request, parsed, key, now=RFC_CREATED)


def test_rfc9421_b22_selective_components_with_a_query_parameter_verify():
    request = rfc_request(
        Signature_Input=r"""
sig-b22=("@authority" "content-digest" \
  "@query-param";name="Pet");created=1618884473\
  ;keyid="test-key-rsa-pss";tag="header-example"
""",
        Signature=r"""
sig-b22=:LjbtqUbfmvjj5C5kr1Ugj4PmLYvx9wVjZvD9GsTT4F7GrcQ\
  EdJzgI9qHxICagShLRiLMlAJjtq6N4CDfKtjvuJyE5qH7KT8UCMkSowOB4+ECxCmT\
  8rtAmj/0PIXxi0A0nxKyB09RNrCQibbUjsLS/2YyFYXEu4TRJQzRw1rLEuEfY17SA\
  RYhpTlaqwZVtR8NV7+4UKkjqpcAoFqWFQh62s7Cl+H2fjBSpqfZUJcsIk4N6wiKYd\
  4je2U/lankenQ99PZfB4jY3I5rSV2DSBVkSFsURIjYErOs0tFTQosMTAoxk//0RoK\
  UqiYY8Bh0aaUEb0rQl3/XaVe4bXTugEjHSw==:
""",
    )
    parsed = parse_signature(request)

    assert signature_base(request, parsed).decode() == unfold(
        r"""
"@authority": example.com
"content-digest": sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX\
  +TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:
"@query-param";name="Pet": dog
"@signature-params": ("@authority" "content-digest" \
  "@query-param";name="Pet")\
  ;created=1618884473;keyid="test-key-rsa-pss"\
  ;tag="header-example"
"""
    )
    assert crypto_verifies(request, parsed, load_public_key(TEST_KEY_RSA_PSS))


B23_INPUT = r"""
sig-b23=("date" "@method" "@path" "@query" \
  "@authority" "content-type" "content-digest" "content-length")\
  ;created=1618884473;keyid="test-key-rsa-pss"
"""
B23_SIGNATURE = r"""
sig-b23=:bbN8oArOxYoyylQQUU6QYwrTuaxLwjAC9fbY2F6SVWvh0yB\
  iMIRGOnMYwZ/5MR6fb0Kh1rIRASVxFkeGt683+qRpRRU5p2voTp768ZrCUb38K0fU\
  xN0O0iC59DzYx8DFll5GmydPxSmme9v6ULbMFkl+V5B1TP/yPViV7KsLNmvKiLJH1\
  pFkh/aYA2HXXZzNBXmIkoQoLd7YfW91kE9o/CCoC1xMy7JA1ipwvKvfrs65ldmlu9\
  bpG6A9BmzhuzF8Eim5f8ui9eH8LZH896+QIF61ka39VBrohr9iyMUJpvRX2Zbhl5Z\
  JzSRxpJyoEZAFL2FUo5fTIztsDZKEgM4cUA==:
"""


def test_rfc9421_b23_full_coverage_passes_every_rule_and_verifies():
    request = rfc_request(Signature_Input=B23_INPUT, Signature=B23_SIGNATURE)
    parsed = parse_signature(request)
    assert signature_base(request, parsed).decode() == unfold(
        r"""
"date": Tue, 20 Apr 2021 02:07:55 GMT
"@method": POST
"@path": /foo
"@query": ?param=Value&Pet=dog
"@authority": example.com
"content-type": application/json
"content-digest": sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX\
  +TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:
"content-length": 18
"@signature-params": ("date" "@method" "@path" "@query" \
  "@authority" "content-type" "content-digest" "content-length")\
  ;created=1618884473;keyid="test-key-rsa-pss"
"""
    )

    verified = verify_signature(
        request, parsed, load_public_key(TEST_KEY_RSA_PSS), now=RFC_CREATED + 60
    )

    assert (verified.scheme, verified.algorithm, verified.key_id) == (
        RFC9421,
        "rsa-pss-sha512",
        "test-key-rsa-pss",
    )
    assert verified.components[:2] == ('"date"', '"@method"')
    assert verified.created == RFC_CREATED


@pytest.mark.parametrize(
    "change",
    [
        {"method": "PUT"},
        {"target": "/foo?param=Value&Pet=cat"},
        {"target": "/bar?param=Value&Pet=dog"},
        {"headers": {"host": "example.org"}},
        {"headers": {"content-type": "text/plain"}},
    ],
)
def test_rfc9421_b23_changed_in_a_covered_part_fails(change):
    request = _retarget(rfc_request(Signature_Input=B23_INPUT, Signature=B23_SIGNATURE), **change)

    with pytest.raises(SignatureMismatch):
        verify_signature(
            request,
            parse_signature(request),
            load_public_key(TEST_KEY_RSA_PSS),
            now=RFC_CREATED,
        )


def test_rfc9421_b23_with_another_algorithm_named_or_late_is_refused():
    key = load_public_key(TEST_KEY_RSA_PSS)
    named = rfc_request(
        Signature_Input=B23_INPUT.rstrip() + ';alg="rsa-v1_5-sha256"', Signature=B23_SIGNATURE
    )
    with pytest.raises(SignatureMismatch):
        verify_signature(named, parse_signature(named), key, now=RFC_CREATED)
    request = rfc_request(Signature_Input=B23_INPUT, Signature=B23_SIGNATURE)
    with pytest.raises(SignatureError, match="has expired"):
        verify_signature(request, parse_signature(request), key, now=RFC_CREATED + 3901)
    with pytest.raises(SignatureMismatch, match="not of the signature's algorithm"):
        verify_signature(
            named, parse_signature(named), load_public_key(TEST_KEY_ED25519), now=RFC_CREATED
        )


def test_rfc9421_b26_ed25519_verifies_but_leaves_the_query_and_digest_uncovered():
    request = rfc_request(
        Signature_Input=r"""
sig-b26=("date" "@method" "@path" "@authority" \
  "content-type" "content-length");created=1618884473\
  ;keyid="test-key-ed25519"
""",
        Signature=r"""
sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1\
  u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:
""",
    )
    parsed = parse_signature(request)
    key = load_public_key(TEST_KEY_ED25519)

    assert signature_base(request, parsed).decode() == unfold(
        r"""
"date": Tue, 20 Apr 2021 02:07:55 GMT
"@method": POST
"@path": /foo
"@authority": example.com
"content-type": application/json
"content-length": 18
"@signature-params": ("date" "@method" "@path" "@authority" \
  "content-type" "content-length");created=1618884473\
  ;keyid="test-key-ed25519"
"""
    )
    assert crypto_verifies(request, parsed, key)
    with pytest.raises(SignatureError, match="must cover the target URI"):
        verify_signature(request, parsed, key, now=RFC_CREATED)
    unqueried = _retarget(request, target="/foo")
    with pytest.raises(SignatureError, match="must cover content-digest"):
        verify_signature(unqueried, parse_signature(unqueried), key, now=RFC_CREATED)


def test_rfc9421_section_3_2_verification_example_verifies():
    request = rfc_request(
        Signature_Input=r"""
sig1=("@method" "@authority" "@path" \
  "content-digest" "content-length" "content-type")\
  ;created=1618884473;keyid="test-key-rsa-pss"
""",
        Signature=r"""
sig1=:HIbjHC5rS0BYaa9v4QfD4193TORw7u9edguPh0AW3dMq9WImrl\
  FrCGUDih47vAxi4L2YRZ3XMJc1uOKk/J0ZmZ+wcta4nKIgBkKq0rM9hs3CQyxXGxH\
  LMCy8uqK488o+9jrptQ+xFPHK7a9sRL1IXNaagCNN3ZxJsYapFj+JXbmaI5rtAdSf\
  SvzPuBCh+ARHBmWuNo1UzVVdHXrl8ePL4cccqlazIJdC4QEjrF+Sn4IxBQzTZsL9y\
  9TP5FsZYzHvDqbInkTNigBcE9cKOYNFCn4D/WM7F6TNuZO9EgtzepLWcjTymlHzK7\
  aXq6Am6sfOrpIC49yXjj3ae6HRalVc/g==:
""",
    )
    parsed = parse_signature(request)
    key = load_public_key(TEST_KEY_RSA_PSS)

    assert crypto_verifies(request, parsed, key)
    assert not crypto_verifies(_retarget(request, target="/fooo"), parsed, key)


def test_rfc9421_section_4_3_proxy_signature_rsa_v1_5_is_picked_by_its_label():
    request = RequestParts.of(
        "POST",
        "/foo?param=Value&Pet=dog",
        {
            "Host": "origin.host.internal.example",
            "Date": "Tue, 20 Apr 2021 02:07:56 GMT",
            "Content-Type": "application/json",
            "Content-Length": "18",
            "Forwarded": "for=192.0.2.123;host=example.com;proto=https",
            "Content-Digest": rfc_request().headers["content-digest"],
            "Signature-Input": unfold(
                r"""
sig1=("@method" "@authority" "@path" \
    "content-digest" "content-type" "content-length")\
    ;created=1618884475;keyid="test-key-ecc-p256", \
  proxy_sig=("@method" "@authority" "@path" "content-digest" \
    "content-type" "content-length" "forwarded")\
    ;created=1618884480;keyid="test-key-rsa";alg="rsa-v1_5-sha256"\
    ;expires=1618884540
"""
            ),
            "Signature": unfold(
                r"""
sig1=:X5spyd6CFnAG5QnDyHfqoSNICd+BUP4LYMz2Q0JXlb//4Ijpzp\
    +kve2w4NIyqeAuM7jTDX+sNalzA8ESSaHD3A==:, \
  proxy_sig=:S6ZzPXSdAMOPjN/6KXfXWNO/f7V6cHm7BXYUh3YD/fRad4BCaRZxP+\
    JH+8XY1I6+8Cy+CM5g92iHgxtRPz+MjniOaYmdkDcnL9cCpXJleXsOckpURl49G\
    wiyUpZ10KHgOEe11sx3G2gxI8S0jnxQB+Pu68U9vVcasqOWAEObtNKKZd8tSFu7\
    LB5YAv0RAGhB8tmpv7sFnIm9y+7X5kXQfi8NMaZaA8i2ZHwpBdg7a6CMfwnnrtf\
    lzvZdXAsD3LH2TwevU+/PBPv0B6NMNk93wUs/vfJvye+YuI87HU38lZHowtznbL\
    Vdp770I6VHR6WfgS9ddzirrswsE1w5o0LV/g==:
"""
            ),
        },
        BODY,
    )
    assert parse_signature(request).label == "sig1"
    parsed = parse_signature(request, label="proxy_sig")
    key = load_public_key(TEST_KEY_RSA)

    assert (parsed.algorithm, parsed.created, parsed.expires) == (
        "rsa-v1_5-sha256",
        1618884480,
        1618884540,
    )
    assert signature_base(request, parsed).decode() == unfold(
        r"""
"@method": POST
"@authority": origin.host.internal.example
"@path": /foo
"content-digest": sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX\
  +TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:
"content-type": application/json
"content-length": 18
"forwarded": for=192.0.2.123;host=example.com;proto=https
"@signature-params": ("@method" "@authority" "@path" \
  "content-digest" "content-type" "content-length" "forwarded")\
  ;created=1618884480;keyid="test-key-rsa";alg="rsa-v1_5-sha256"\
  ;expires=1618884540
"""
    )
    assert crypto_verifies(request, parsed, key)
    with pytest.raises(SignatureError, match="must cover the target URI"):
        verify_signature(request, parsed, key, now=1618884480)
    with pytest.raises(SignatureError, match="no signature labelled proxy"):
        parse_signature(request, label="proxy")


@pytest.mark.parametrize(
    "accepts, verifies",
    [
        ([("Accept", "application/json"), ("Accept", "*/*")], True),
        ([("Accept", "application/json, */*")], True),
        ([("Accept", "*/*"), ("Accept", "application/json")], False),
    ],
)
def test_rfc9421_b4_repeated_fields_are_joined_in_order(accepts, verifies):
    request = RequestParts.of(
        "GET",
        "/demo?name1=Value1&Name2=value2",
        [("Host", "example.org"), *accepts]
        + [
            (
                "Signature-Input",
                unfold(
                    r"""
transform=("@method" "@path" "@authority" \
  "accept");created=1618884473;keyid="test-key-ed25519"
"""
                ),
            ),
            (
                "Signature",
                unfold(
                    r"""
transform=:ZT1kooQsEHpZ0I1IjCqtQppOmIqlJPeo7DHR3SoMn0s5J\
  Z1eRGS0A+vyYP9t/LXlh5QMFFQ6cpLt2m0pmj3NDA==:
"""
                ),
            ),
        ],
    )
    parsed = parse_signature(request)

    assert crypto_verifies(request, parsed, load_public_key(TEST_KEY_ED25519)) is verifies


def test_rfc9421_query_parameters_are_encoded_as_the_rfc_shows():
    # Section 2.2.8's example of awkward query parameters.
    request = RequestParts.of(
        "GET",
        "/parameters?var=this%20is%20a%20big%0Amultiline%20value&"
        "bar=with+plus+whitespace&fa%C3%A7ade%22%3A%20=something",
        {
            "Host": "www.example.com",
            "Signature-Input": 'a=("@query-param";name="var" "@query-param";name="bar" '
            '"@query-param";name="fa%C3%A7ade%22%3A%20");keyid="k"',
            "Signature": "a=:AAAA:",
        },
    )

    assert signature_base(request, parse_signature(request)).decode().splitlines()[:3] == [
        '"@query-param";name="var": this%20is%20a%20big%0Amultiline%20value',
        '"@query-param";name="bar": with%20plus%20whitespace',
        '"@query-param";name="fa%C3%A7ade%22%3A%20": something',
    ]


# --- RFC 9421: our own signatures, and what we refuse ----------------------------------------


def test_an_rfc9421_signed_post_verifies_and_a_changed_one_does_not(sender, stranger):
    added = sign_request_rfc9421("POST", URL, BODY, KEY_ID, sender.private_pem, now=SIGNED_AT)
    assert added["Signature-Input"] == (
        f'sig1=("@method" "@target-uri" "content-digest");created={SIGNED_AT}'
        f';keyid="{KEY_ID}";alg="rsa-v1_5-sha256"'
    )
    request = received(added)
    key = load_public_key(sender.public_pem)

    verified = verify_signature(request, parse_signature(request), key, now=SIGNED_AT)

    assert (verified.scheme, verified.algorithm) == (RFC9421, "rsa-v1_5-sha256")
    assert verified.components == ('"@method"', '"@target-uri"', '"content-digest"')
    for changed in (
        _retarget(request, target="/users/carol/inbox"),
        _retarget(request, method="PUT"),
        _retarget(request, headers={"host": "gamma.test"}),
        _retarget(
            request,
            body=b"{}",
            headers={"content-digest": content_digest_header(b"{}")},
        ),
        _retarget(
            request,
            headers={"signature-input": added["Signature-Input"].replace(KEY_ID, "other")},
        ),
    ):
        with pytest.raises(SignatureMismatch):
            verify_signature(changed, parse_signature(changed), key, now=SIGNED_AT)
    with pytest.raises(SignatureMismatch):
        verify_signature(
            request, parse_signature(request), load_public_key(stranger.public_pem), now=SIGNED_AT
        )
    with pytest.raises(SignatureError, match="digest does not match the body"):
        tampered = _retarget(request, body=b"{}")
        verify_signature(tampered, parse_signature(tampered), key, now=SIGNED_AT)


def test_an_rfc9421_ed25519_signed_get_verifies():
    private = ed25519.Ed25519PrivateKey.generate()
    private_pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    added = sign_request_rfc9421("GET", URL, None, KEY_ID, private_pem, now=SIGNED_AT)
    request = received(added, method="GET", body=b"")

    verified = verify_signature(
        request, parse_signature(request), private.public_key(), now=SIGNED_AT
    )

    assert verified.algorithm == "ed25519" and verified.components[-1] == '"@target-uri"'


RFC_SIGNATURE = "s=:AAAA:"


@pytest.mark.parametrize(
    "signature_input, signature, reason",
    [
        ('s=("@method");keyid="k"', RFC_SIGNATURE, None),
        ('s=("@method");created=1', RFC_SIGNATURE, "needs a keyid"),
        ('s=("@method");created=1;keyid="k"', "t=:AAAA:", "no signature label is in both"),
        ('s=("@method";req);created=1;keyid="k"', RFC_SIGNATURE, "parameters of @method"),
        ('s=("@status");created=1;keyid="k"', RFC_SIGNATURE, "@status is not supported"),
        ('s=("@method" "@method");created=1;keyid="k"', RFC_SIGNATURE, "component twice"),
        ('s=(method);created=1;keyid="k"', RFC_SIGNATURE, "not a string"),
        ('s=("Host");created=1;keyid="k"', RFC_SIGNATURE, "header name is malformed"),
        ('s=("@method");created=1;keyid="k";alg="rsa-sha1"', RFC_SIGNATURE, "not supported"),
        ('s=("@method");created=-1;keyid="k"', RFC_SIGNATURE, "not a time"),
        ('s=("@method");created=1;keyid="k"', "s=:AA$A:", "malformed"),
        ('s=("@method");created=1;keyid="k"', "s=abc", "does not hold a signature"),
        ('s=("@method";created=1;keyid="k"', RFC_SIGNATURE, "malformed"),
        ('s=("@method");created=1;keyid="k",', RFC_SIGNATURE, "malformed"),
        ('s=("@method");keyid="k";keyid="j"', RFC_SIGNATURE, "repeated or extra parameter"),
        ("s=(" + '"a" ' * 21 + ');keyid="k"', RFC_SIGNATURE, "too many components"),
        (",".join(f"s{i}=()" for i in range(9)), RFC_SIGNATURE, "repeated or extra member"),
        ('s=("@method");keyid="' + "k" * 4096 + '"', RFC_SIGNATURE, "too long"),
    ],
)
def test_rfc9421_headers_are_parsed_strictly_and_within_bounds(signature_input, signature, reason):
    request = RequestParts.of(
        "GET", "/", {"Host": "a.test", "Signature-Input": signature_input, "Signature": signature}
    )
    if reason is None:
        parsed = parse_signature(request)
        assert parsed.created is None
        with pytest.raises(SignatureError, match="must have a created parameter"):
            check_signature(request, parsed, now=SIGNED_AT)
        return

    with pytest.raises(SignatureError, match=reason):
        parse_signature(request)
