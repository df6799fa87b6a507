"""HTTP signatures: keys, body digests, signing what we send and verifying what we receive.

A pure library (`cryptography` and the standard library; no Redis, no Django). What it does
is what Mastodon does (`app/lib/request.rb`, `app/lib/signed_request.rb`):

- **Keys.** `generate_key_pair()` makes an RSA-2048 pair as PEM (private PKCS#8, public
  SubjectPublicKeyInfo). `load_public_key()` reads another server's PEM (SPKI, or PKCS#1
  `RSA PUBLIC KEY` as some servers send) within 16 KiB, and takes RSA of 2048 to 8192 bits
  or Ed25519. A `KeyPair`'s repr never shows the private key.
- **Signing.** `sign_request()` signs as Mastodon does (draft-cavage-http-signatures-12,
  `rsa-sha256`): `(request-target) host date`, plus `digest` when there is a body and
  `accept` when given. It returns the headers to send (Host, Date, Digest, Signature).
  `sign_request_rfc9421()` signs the RFC 9421 way (`@method @target-uri content-digest`).
- **Verifying**, in two steps so that the key is fetched only when worth it:
  1. `parse_signature(request)` reads the `Signature` header (draft-cavage), or
     `Signature-Input` + `Signature` (RFC 9421), and gives the `key_id` to fetch; then
     `check_signature(request, parsed, now=)` (optional at that point) applies the cheap
     rules: what must be covered, the digest of the body, the time window.
  2. `verify_signature(request, parsed, key, now=)` applies those rules again, then the
     cryptography, and returns a `VerifiedSignature` (key id, scheme, algorithm, covered
     components, creation time).
  Every refusal is a `SignatureError` whose `reason` is a sentence for the 401 and the log.
  Only `SignatureMismatch` (bytes that do not verify with the key given) is worth fetching
  the key again for; a stale date or a missing digest is not.

What a signature must cover (Mastodon's rules, made a little stricter):
- draft-cavage: `(request-target)`, `host`, `date` or `(created)`, and `digest` on a request
  with a body (any POST); algorithms `rsa-sha256`, `hs2019` or none (hs2019 and none are
  RSASSA-PKCS1-v1_5 with SHA-256 for an RSA key, as Mastodon treats them; Ed25519 for an
  Ed25519 key). `(created)` and `(expires)` count only when signed, and only without
  `rsa-sha256` (draft 12, section 2.3). Mastodon also accepts a `(request-target)` signed
  without the query string (old Mastodon); we do not.
- RFC 9421: a `created` parameter, `@method`, the target (`@target-uri`, `@request-target`,
  or `@authority`/`host` with `@path`, and `@query` when the request has one), and
  `content-digest` (or `digest`) with a body. Algorithms `rsa-v1_5-sha256`,
  `rsa-pss-sha512` and `ed25519`; without `alg`, an RSA key may have made either RSA kind.
  Derived components `@method @target-uri @authority @scheme @request-target @path @query
  @query-param`; component parameters other than `@query-param`'s `name` are refused.
- The window (`SignedRequest#matches_time_window?`): signed at most an hour ahead of `now`;
  valid until its `expires` (5 minutes after creation when none is signed, 12 hours at
  most), with an hour's grace for clocks. A job verified later than it arrived passes the
  time it arrived as `now`.

Bounds, counted before the work: each signature header 4 KiB, 20 covered components, 8
labels, 16 parameters, a covered field 8 KiB, a key id 2 KiB, a PEM 16 KiB, a Digest header
1 KiB; base64 is decoded strictly.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal
from email.utils import formatdate, parsedate_to_datetime
from functools import lru_cache
from typing import NoReturn
from urllib.parse import parse_qsl, quote, urlsplit

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, padding, rsa

PublicKey = rsa.RSAPublicKey | ed25519.Ed25519PublicKey
PrivateKey = rsa.RSAPrivateKey | ed25519.Ed25519PrivateKey

DRAFT = "draft-cavage-12"  # the Signature header of draft-cavage-http-signatures
RFC9421 = "rfc9421"  # HTTP Message Signatures: Signature-Input + Signature

MAX_SIGNATURE_HEADER = 4096  # characters of Signature, or of Signature-Input
MAX_COMPONENTS = 20  # headers or components one signature may cover
MAX_LABELS = 8  # signatures in one RFC 9421 message
MAX_PARAMETERS = 16  # parameters of one signature (or of one component)
MAX_FIELD_VALUE = 8192  # characters of one covered header's value
MAX_KEY_ID = 2048  # characters of a key id (a URL)
MAX_KEY_PEM = 16 * 1024  # characters of a PEM public or private key
MIN_RSA_BITS, MAX_RSA_BITS = 2048, 8192
MAX_DIGEST_HEADER = 1024  # characters of Digest or Content-Digest
MAX_DIGEST_ENTRIES = 8

CLOCK_SKEW = 3600  # seconds a sender's clock may be off (Mastodon's CLOCK_SKEW_MARGIN)
DEFAULT_LIFETIME = 300  # a signature without a signed expiry expires 5 minutes after creation
MAX_LIFETIME = 12 * 3600  # and one with a later expiry, 12 hours after (EXPIRATION_WINDOW_LIMIT)

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
_DIGESTS: dict[str, Callable[[bytes], hashlib._Hash]] = {
    "sha-256": hashlib.sha256,
    "sha-512": hashlib.sha512,
}


class SignatureError(Exception):
    """A signature, digest or key refused; `reason` says why, fit for a 401 and a log."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class SignatureMismatch(SignatureError):
    """The signature does not verify with the key given: the one refusal a fresher key may
    cure (fetch the key again once, then give up)."""


# --- Keys -------------------------------------------------------------------------------


@dataclass(frozen=True)
class KeyPair:
    """An RSA key pair as PEM; the private half never appears in a repr or a log."""

    public_pem: str
    private_pem: str = field(repr=False)


def generate_key_pair() -> KeyPair:
    """Return a new RSA-2048 key pair (private PKCS#8, public SubjectPublicKeyInfo)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    public_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return KeyPair(public_pem=public_pem.decode("ascii"), private_pem=private_pem.decode("ascii"))


@lru_cache(maxsize=256)
def load_public_key(pem: str) -> PublicKey:
    """Return the public key in pem (SPKI or PKCS#1), or raise SignatureError: RSA of 2048
    to 8192 bits or Ed25519 only. Cached: a busy inbox sees the same few keys again."""
    if len(pem) > MAX_KEY_PEM:
        raise SignatureError("the public key is too long")
    try:
        key = serialization.load_pem_public_key(pem.encode("ascii"))
    except (ValueError, UnsupportedAlgorithm):
        raise SignatureError("the public key is not a PEM public key") from None
    if isinstance(key, rsa.RSAPublicKey):
        if not MIN_RSA_BITS <= key.key_size <= MAX_RSA_BITS:
            raise SignatureError(
                f"the RSA key has {key.key_size} bits (from {MIN_RSA_BITS} to {MAX_RSA_BITS})"
            )
        return key
    if isinstance(key, ed25519.Ed25519PublicKey):
        return key
    raise SignatureError("the public key is neither RSA nor Ed25519")


@lru_cache(maxsize=64)
def _load_private_key(pem: str) -> PrivateKey:
    """Return our own private key in pem (cached: every delivery signs), or raise ValueError."""
    if len(pem) > MAX_KEY_PEM:
        raise ValueError("the private key is too long")
    try:
        key = serialization.load_pem_private_key(pem.encode("ascii"), password=None)
    except (TypeError, ValueError, UnsupportedAlgorithm):
        raise ValueError("not an unencrypted PEM private key") from None
    if isinstance(key, rsa.RSAPrivateKey) and key.key_size >= MIN_RSA_BITS:
        return key
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return key
    raise ValueError("signing needs an RSA key of 2048 bits or more, or an Ed25519 key")


# --- Digests ----------------------------------------------------------------------------


def digest_header(body: bytes) -> str:
    """Return the Digest header of body as Mastodon sends it: `SHA-256=<base64>`."""
    return "SHA-256=" + base64.b64encode(hashlib.sha256(body).digest()).decode("ascii")


def content_digest_header(body: bytes) -> str:
    """Return the RFC 9530 Content-Digest header of body: `sha-256=:<base64>:`."""
    return "sha-256=:" + base64.b64encode(hashlib.sha256(body).digest()).decode("ascii") + ":"


def check_digest(value: str, body: bytes) -> None:
    """Check a Digest header (`SHA-256=<b64>`, several comma-separated) against body, or
    raise SignatureError. SHA-256 and SHA-512 count (names in any case), others are skipped;
    at least one must be there, and every one there must match."""
    if len(value) > MAX_DIGEST_HEADER:
        raise SignatureError("the Digest header is too long")
    entries = value.split(",")
    if len(entries) > MAX_DIGEST_ENTRIES:
        raise SignatureError("the Digest header has too many digests")
    checked = 0
    for entry in entries:
        name, equals, encoded = entry.strip().partition("=")
        if not equals:
            raise SignatureError("the Digest header is malformed")
        hasher = _DIGESTS.get(name.strip().lower())
        if hasher is not None:
            _match_digest(hasher, _strict_b64(encoded.strip(), "Digest header"), body)
            checked += 1
    if not checked:
        raise SignatureError("the Digest header has no SHA-256 or SHA-512 digest")


def check_content_digest(value: str, body: bytes) -> None:
    """Check an RFC 9530 Content-Digest header (`sha-256=:<b64>:`, `sha-512=...`) against
    body, or raise SignatureError; the same rules as check_digest."""
    if len(value) > MAX_DIGEST_HEADER:
        raise SignatureError("the Content-Digest header is too long")
    checked = 0
    for name, (item, _params) in _Fields(value, "Content-Digest").dictionary(MAX_DIGEST_ENTRIES):
        hasher = _DIGESTS.get(name)
        if hasher is None:
            continue
        if not isinstance(item, bytes):
            raise SignatureError("the Content-Digest header is malformed")
        _match_digest(hasher, item, body)
        checked += 1
    if not checked:
        raise SignatureError("the Content-Digest header has no sha-256 or sha-512 digest")


def _match_digest(hasher: Callable[[bytes], hashlib._Hash], given: bytes, body: bytes) -> None:
    expected = hasher(body).digest()
    if len(given) != len(expected):
        raise SignatureError(f"the digest is not a {hasher(b'').name} digest")
    if not hmac.compare_digest(given, expected):
        raise SignatureError("the digest does not match the body")


def _strict_b64(text: str, what: str) -> bytes:
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, ValueError):
        raise SignatureError(f"the {what} is not valid base64") from None


# --- The request, as a signature sees it -----------------------------------------------


@dataclass(frozen=True)
class RequestParts:
    """What a signature may cover of a received request. target is the request target as
    it came (path and query, percent-encoding untouched); headers have lowercase names and
    repeated fields joined by ", "; scheme is the one the sender used (ours, SITE_URL's)."""

    method: str
    target: str
    headers: Mapping[str, str]
    body: bytes = b""
    scheme: str = "https"

    @classmethod
    def of(
        cls,
        method: str,
        target: str,
        headers: Mapping[str, str] | Iterable[tuple[str, str]],
        body: bytes = b"",
        scheme: str = "https",
    ) -> RequestParts:
        """Return the parts of a request whose headers are a mapping or (name, value) pairs."""
        pairs = headers.items() if isinstance(headers, Mapping) else headers
        joined: dict[str, list[str]] = {}
        for name, value in pairs:
            joined.setdefault(name.lower(), []).append(value.strip())
        return cls(
            method, target, {k: ", ".join(v) for k, v in joined.items()}, body, scheme.lower()
        )

    def has_body(self) -> bool:
        """Return whether the request carries a body a signature must cover."""
        return bool(self.body) or self.method.upper() in _BODY_METHODS

    def header(self, name: str) -> str:
        """Return a covered header's value, or raise SignatureError when absent or too long."""
        value = self.headers.get(name)
        if value is None:
            raise SignatureError(f"the signed header {name} is missing")
        if len(value) > MAX_FIELD_VALUE or "\n" in value:
            raise SignatureError(f"the signed header {name} is too long")
        return value

    def authority(self) -> str:
        """Return the Host, lowercased and without the scheme's default port."""
        host = self.header("host").lower()
        default = {"https": ":443", "http": ":80"}.get(self.scheme, "")
        return host.removesuffix(default) if default else host


# --- Parsing ----------------------------------------------------------------------------

_Bare = bool | int | Decimal | str | bytes  # an RFC 8941 bare item (a _Token is a str)
_Params = tuple[tuple[str, _Bare], ...]
_Item = tuple[_Bare, _Params]
_Member = tuple[_Bare | list[_Item], _Params]


@dataclass(frozen=True)
class ParsedSignature:
    """A signature as read from a request, before any key: enough to fetch the key."""

    scheme: str  # DRAFT or RFC9421
    key_id: str
    algorithm: str | None  # as the sender named it (`algorithm` or `alg`), None when absent
    components: tuple[str, ...]  # draft: header names; RFC 9421: component identifiers
    signature: bytes = field(repr=False)
    created: int | None = None  # draft: only when (created) is signed
    expires: int | None = None  # draft: only when (expires) is signed
    label: str = ""  # RFC 9421: the signature's label
    signature_params: str = ""  # RFC 9421: the @signature-params line's value
    created_text: str = field(default="", repr=False)  # draft: (created) as sent
    expires_text: str = field(default="", repr=False)  # draft: (expires) as sent
    items: tuple[tuple[str, _Params], ...] = field(default=(), repr=False)  # RFC 9421


def parse_signature(request: RequestParts, *, label: str | None = None) -> ParsedSignature:
    """Return the request's signature (RFC 9421 when Signature-Input is there, draft-cavage
    otherwise; label picks one of several RFC 9421 signatures, else the first), or raise
    SignatureError. Cheap: syntax and bounds only, no key, no digest."""
    signature = request.headers.get("signature")
    signature_input = request.headers.get("signature-input")
    if signature is None:
        raise SignatureError("the request is not signed")
    for value in (signature, signature_input or ""):
        if len(value) > MAX_SIGNATURE_HEADER:
            raise SignatureError("the signature header is too long")
        if not _PRINTABLE.fullmatch(value):
            raise SignatureError("the signature header is not printable ASCII")
    if signature_input is not None:
        return _parse_rfc9421(signature_input, signature, label)
    return _parse_draft(signature)


_PRINTABLE = re.compile(r"[\x20-\x7e\t]*")
_DRAFT_PARAM = re.compile(
    r"([!#$%&'*+.^_`|~0-9A-Za-z-]+)[ \t]*=[ \t]*"
    r"""(?:"((?:[^"\\]|\\.)*)"|([!#$%&'*+.^_`|~0-9A-Za-z-]+))"""
)
_DRAFT_COMMA = re.compile(r"[ \t]*,[ \t]*")
_DRAFT_KNOWN = frozenset({"keyId", "signature", "algorithm", "created", "expires", "headers"})
_DRAFT_ALGORITHMS = frozenset({"rsa-sha256", "hs2019"})
_DRAFT_PSEUDO = frozenset({"(request-target)", "(created)", "(expires)"})
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9a-z-]+")
_CREATED = re.compile(r"[0-9]{1,12}")
_EXPIRES = re.compile(r"([0-9]{1,12})(?:\.[0-9]{1,9})?")


def _draft_params(value: str) -> dict[str, str]:
    """Return the known parameters of a draft Signature header (unknown ones are skipped,
    a known one twice is refused, as draft 12 section 2.2 asks)."""
    text = value.strip().removeprefix("Signature ")  # old node-http-signature's prefix
    params: dict[str, str] = {}
    position, count = 0, 0
    while True:
        match = _DRAFT_PARAM.match(text, position)
        count += 1
        if match is None or count > MAX_PARAMETERS:
            raise SignatureError("the Signature header is malformed")
        name, quoted, token = match.groups()
        if name in _DRAFT_KNOWN:
            if name in params:
                raise SignatureError(f"the Signature header names {name} twice")
            params[name] = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else token
        position = match.end()
        if position == len(text):
            return params
        comma = _DRAFT_COMMA.match(text, position)
        if comma is None:
            raise SignatureError("the Signature header is malformed")
        position = comma.end()


def _parse_draft(value: str) -> ParsedSignature:
    params = _draft_params(value)
    key_id, encoded = params.get("keyId"), params.get("signature")
    if not key_id or not encoded:
        raise SignatureError("the Signature header needs a keyId and a signature")
    if len(key_id) > MAX_KEY_ID:
        raise SignatureError("the keyId is too long")
    signature = _signature_bytes(encoded)
    algorithm = params.get("algorithm")
    if algorithm is not None and algorithm not in _DRAFT_ALGORITHMS:
        raise SignatureError(f"the algorithm {algorithm} is not supported (rsa-sha256, hs2019)")
    default = "date" if algorithm == "rsa-sha256" else "(created)"  # draft 12 / Mastodon
    names = tuple(params.get("headers", default).lower().split())
    if not names:
        raise SignatureError("the signature covers no header")
    if len(names) > MAX_COMPONENTS:
        raise SignatureError("the signature covers too many headers")
    if len(set(names)) != len(names):
        raise SignatureError("the signature lists a header twice")
    for name in names:
        if name.startswith("(") and name not in _DRAFT_PSEUDO:
            raise SignatureError(f"the pseudo-header {name} is not supported")
        if not name.startswith("(") and not _HEADER_NAME.fullmatch(name):
            raise SignatureError("the signature lists a malformed header name")
    created_text, expires_text = params.get("created", ""), params.get("expires", "")
    created = _draft_time("(created)", names, algorithm, created_text, _CREATED)
    expires = _draft_time("(expires)", names, algorithm, expires_text, _EXPIRES)
    return ParsedSignature(
        scheme=DRAFT,
        key_id=key_id,
        algorithm=algorithm,
        components=names,
        signature=signature,
        created=created,
        expires=expires,
        created_text=created_text,
        expires_text=expires_text,
    )


def _draft_time(
    pseudo: str, names: tuple[str, ...], algorithm: str | None, text: str, form: re.Pattern[str]
) -> int | None:
    """Return the signed (created) or (expires) time, None when not signed, or raise."""
    if pseudo not in names:
        return None
    if algorithm == "rsa-sha256":
        raise SignatureError(f"{pseudo} cannot be signed with rsa-sha256")
    match = form.fullmatch(text)
    if match is None:
        raise SignatureError(f"{pseudo} is signed but its parameter is missing or malformed")
    return int(match.group(1) if match.groups() else match.group(0))


def _signature_bytes(encoded: str) -> bytes:
    signature = _strict_b64(encoded, "signature")
    if not signature:
        raise SignatureError("the signature is empty")
    return signature


_RFC9421_ALGORITHMS = frozenset({"rsa-v1_5-sha256", "rsa-pss-sha512", "ed25519"})
_DERIVED = frozenset(
    {
        "@method",
        "@target-uri",
        "@authority",
        "@scheme",
        "@request-target",
        "@path",
        "@query",
        "@query-param",
    }
)


def _parse_rfc9421(inputs_value: str, signatures_value: str, label: str | None) -> ParsedSignature:
    inputs = dict(_Fields(inputs_value, "Signature-Input").dictionary(MAX_LABELS))
    signatures = dict(_Fields(signatures_value, "Signature").dictionary(MAX_LABELS))
    if label is None:
        label = next((name for name in inputs if name in signatures), None)
        if label is None:
            raise SignatureError("no signature label is in both Signature-Input and Signature")
    elif label not in inputs or label not in signatures:
        raise SignatureError(f"there is no signature labelled {label}")
    (covered, params), (signature, _) = inputs[label], signatures[label]
    if not isinstance(covered, list):
        raise SignatureError("the Signature-Input header is malformed")
    if not isinstance(signature, bytes) or not signature:
        raise SignatureError("the Signature header does not hold a signature")
    items = tuple(_component(value, component_params) for value, component_params in covered)
    if len({(name, frozenset(p)) for name, p in items}) != len(items):
        raise SignatureError("the signature covers a component twice")
    found = dict(params)
    key_id, algorithm = found.get("keyid"), found.get("alg")
    if not isinstance(key_id, str) or not key_id:
        raise SignatureError("the signature needs a keyid")
    if len(key_id) > MAX_KEY_ID:
        raise SignatureError("the keyid is too long")
    if algorithm is not None and (
        not isinstance(algorithm, str) or algorithm not in _RFC9421_ALGORITHMS
    ):
        raise SignatureError(f"the algorithm {_serialize_bare(algorithm)} is not supported")
    return ParsedSignature(
        scheme=RFC9421,
        key_id=key_id,
        algorithm=algorithm,
        components=tuple(_serialize_string(n) + _serialize_params(p) for n, p in items),
        signature=signature,
        created=_integer(found, "created"),
        expires=_integer(found, "expires"),
        label=label,
        signature_params=_serialize_inner_list(covered, params),
        items=items,
    )


def _component(value: _Bare, params: _Params) -> tuple[str, _Params]:
    """Return a covered component (name, parameters), or raise for one we cannot derive."""
    if not isinstance(value, str) or isinstance(value, _Token):
        raise SignatureError("a covered component is not a string")
    if value.startswith("@"):
        if value not in _DERIVED:
            raise SignatureError(f"the component {value} is not supported")
        wanted = {"name"} if value == "@query-param" else set()
        if {name for name, _ in params} != wanted or not all(isinstance(v, str) for _, v in params):
            raise SignatureError(f"the parameters of {value} are not supported")
    elif params:
        raise SignatureError(f"the parameters of {value} are not supported")
    elif not _HEADER_NAME.fullmatch(value):
        raise SignatureError("a covered header name is malformed")
    return value, params


def _integer(params: Mapping[str, _Bare], name: str) -> int | None:
    value = params.get(name)
    if value is None:
        return None
    if type(value) is not int or value < 0:
        raise SignatureError(f"the {name} parameter is not a time")
    return value


class _Token(str):
    """An RFC 8941 token, kept apart from a string because it serialises unquoted."""


class _Fields:
    """A strict RFC 8941 reader of what signatures need: dictionaries of items and inner
    lists, with parameters (bounded counts; a key twice is refused, not overwritten)."""

    _KEY = re.compile(r"[a-z*][a-z0-9_\-.*]*")
    _STRING = re.compile(r'"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"')
    _TOKEN = re.compile(r"[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*")
    _BYTES = re.compile(r":([A-Za-z0-9+/=]*):")
    _NUMBER = re.compile(r"-?([0-9]{1,15})(\.[0-9]{1,3})?(?![0-9.])")

    def __init__(self, text: str, what: str) -> None:
        self.text, self.position, self.what = text.strip(" "), 0, what

    def fail(self) -> NoReturn:
        raise SignatureError(f"the {self.what} header is malformed")

    def peek(self) -> str:
        return self.text[self.position : self.position + 1]

    def skip(self, characters: str) -> None:
        while self.peek() and self.peek() in characters:
            self.position += 1

    def match(self, pattern: re.Pattern[str]) -> re.Match[str]:
        found = pattern.match(self.text, self.position)
        if found is None:
            self.fail()
        self.position = found.end()
        return found

    def dictionary(self, most: int) -> list[tuple[str, _Member]]:
        members: dict[str, _Member] = {}
        while True:
            key = self.match(self._KEY).group(0)
            member: _Member
            if self.peek() == "=":
                self.position += 1
                member = self.inner_list() if self.peek() == "(" else self.item()
            else:
                member = (True, self.params())
            if key in members or len(members) == most:
                raise SignatureError(f"the {self.what} header has a repeated or extra member")
            members[key] = member
            self.skip(" \t")
            if not self.peek():
                return list(members.items())
            if self.peek() != ",":
                self.fail()
            self.position += 1
            self.skip(" \t")
            if not self.peek():
                self.fail()

    def inner_list(self) -> _Member:
        self.position += 1
        items: list[_Item] = []
        while True:
            self.skip(" ")
            if self.peek() == ")":
                self.position += 1
                return items, self.params()
            if len(items) == MAX_COMPONENTS:
                raise SignatureError("the signature covers too many components")
            items.append(self.item())
            if self.peek() not in (" ", ")"):
                self.fail()

    def item(self) -> _Item:
        return self.bare(), self.params()

    def params(self) -> _Params:
        params: dict[str, _Bare] = {}
        while self.peek() == ";":
            self.position += 1
            self.skip(" ")
            key = self.match(self._KEY).group(0)
            value: _Bare = True
            if self.peek() == "=":
                self.position += 1
                value = self.bare()
            if key in params or len(params) == MAX_PARAMETERS:
                raise SignatureError(f"the {self.what} header has a repeated or extra parameter")
            params[key] = value
        return tuple(params.items())

    def bare(self) -> _Bare:
        first = self.peek()
        if first == '"':
            return re.sub(r'\\(["\\])', r"\1", self.match(self._STRING).group(1))
        if first == ":":
            return _strict_b64(self.match(self._BYTES).group(1), f"{self.what} header")
        if first == "?" and self.text[self.position + 1 : self.position + 2] in ("0", "1"):
            self.position += 2
            return self.text[self.position - 1] == "1"
        if first == "-" or first.isdigit():
            found = self.match(self._NUMBER)
            if found.group(2) is None:
                return int(found.group(0))
            if len(found.group(1)) > 12:
                self.fail()
            return Decimal(found.group(0))
        return _Token(self.match(self._TOKEN).group(0))


def _serialize_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _serialize_bare(value: _Bare) -> str:
    """Return an RFC 8941 bare item serialised strictly (section 4.1)."""
    if isinstance(value, bool):
        return "?1" if value else "?0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        rounded = format(value.quantize(Decimal("0.001"), ROUND_HALF_EVEN), "f")
        whole, _, fraction = rounded.partition(".")
        return f"{whole}.{fraction.rstrip('0') or '0'}"
    if isinstance(value, bytes):
        return ":" + base64.b64encode(value).decode("ascii") + ":"
    if isinstance(value, _Token):
        return str(value)
    return _serialize_string(value)


def _serialize_params(params: _Params) -> str:
    return "".join(f";{k}" if v is True else f";{k}={_serialize_bare(v)}" for k, v in params)


def _serialize_inner_list(
    items: Iterable[_Item] | Iterable[tuple[str, _Params]], params: _Params
) -> str:
    inner = " ".join(_serialize_bare(value) + _serialize_params(p) for value, p in items)
    return f"({inner}){_serialize_params(params)}"


# --- The rules a signature must meet -------------------------------------------------------


def check_signature(
    request: RequestParts, parsed: ParsedSignature, *, now: float | None = None
) -> None:
    """Raise SignatureError unless the signature covers what it must, the body matches its
    digest and the signature is within its time window at now (default: the clock). Cheap:
    an inbox can refuse with it before fetching any key; verify_signature calls it again."""
    now = time.time() if now is None else now
    if parsed.scheme == DRAFT:
        created, expires = _check_draft_coverage(request, parsed)
    else:
        created, expires = _check_rfc9421_coverage(request, parsed)
    if created > now + CLOCK_SKEW:
        raise SignatureError("the signature was made more than an hour in the future")
    deadline = created + DEFAULT_LIFETIME if expires is None else expires
    if now > min(deadline, created + MAX_LIFETIME) + CLOCK_SKEW:
        raise SignatureError("the signature has expired (its date is too old)")


def _check_draft_coverage(request: RequestParts, parsed: ParsedSignature) -> tuple[int, int | None]:
    """Check what a draft signature covers and the digest; return its created and expires."""
    names = parsed.components
    for needed in ("(request-target)", "host"):
        if needed not in names:
            raise SignatureError(f"the signature must cover {needed}")
    if "date" not in names and "(created)" not in names:
        raise SignatureError("the signature must cover date or (created)")
    if request.has_body() and "digest" not in names:
        raise SignatureError("the signature must cover digest on a request with a body")
    if "digest" in names:
        check_digest(request.header("digest"), request.body)
    created = parsed.created if parsed.created is not None else _http_date(request.header("date"))
    return created, parsed.expires


def _check_rfc9421_coverage(
    request: RequestParts, parsed: ParsedSignature
) -> tuple[int, int | None]:
    """Check what an RFC 9421 signature covers and the digest; return created and expires."""
    names = {name for name, _ in parsed.items}
    if parsed.created is None:
        raise SignatureError("the signature must have a created parameter")
    if "@method" not in names:
        raise SignatureError("the signature must cover @method")
    split = request.target.partition("?")
    target = bool(names & {"@target-uri", "@request-target"}) or (
        bool(names & {"@authority", "host"})
        and "@path" in names
        and ("@query" in names or not split[1])
    )
    if not target:
        raise SignatureError("the signature must cover the target URI (or authority, path, query)")
    if request.has_body() and not names & {"content-digest", "digest"}:
        raise SignatureError("the signature must cover content-digest on a request with a body")
    if "content-digest" in names:
        check_content_digest(request.header("content-digest"), request.body)
    if "digest" in names:
        check_digest(request.header("digest"), request.body)
    return parsed.created, parsed.expires


def _http_date(value: str) -> int:
    """Return the Unix time of an HTTP Date header, or raise SignatureError."""
    try:
        when = parsedate_to_datetime(value) if len(value) <= 64 else None
    except (TypeError, ValueError, IndexError):
        when = None
    if when is None or when.tzinfo is None:
        raise SignatureError("the Date header is not an HTTP date")
    return int(when.timestamp())


# --- What is signed ---------------------------------------------------------------------


def signature_base(request: RequestParts, parsed: ParsedSignature) -> bytes:
    """Return the bytes the signature is over (draft-cavage's signing string, RFC 9421's
    signature base), or raise SignatureError when the request lacks a covered part."""
    if parsed.scheme == DRAFT:
        lines = [f"{name}: {_draft_value(request, parsed, name)}" for name in parsed.components]
    else:
        lines = [
            f"{identifier}: {_component_value(request, name, params)}"
            for identifier, (name, params) in zip(parsed.components, parsed.items)
        ]
        lines.append(f'"@signature-params": {parsed.signature_params}')
    base = "\n".join(lines)
    if not base.isascii():
        raise SignatureError("a signed header is not ASCII")
    return base.encode("ascii")


def _draft_value(request: RequestParts, parsed: ParsedSignature, name: str) -> str:
    if name == "(request-target)":
        return f"{request.method.lower()} {request.target}"
    if name == "(created)":
        return parsed.created_text
    if name == "(expires)":
        return parsed.expires_text
    return request.header(name)


def _component_value(request: RequestParts, name: str, params: _Params) -> str:
    """Return an RFC 9421 component's value (section 2), or raise SignatureError."""
    path, question, query = request.target.partition("?")
    if name == "@method":
        return request.method
    if name == "@target-uri":
        return f"{request.scheme}://{request.authority()}{request.target}"
    if name == "@authority":
        return request.authority()
    if name == "@scheme":
        return request.scheme
    if name == "@request-target":
        return request.target
    if name == "@path":
        return path or "/"
    if name == "@query":
        return "?" + query
    if name == "@query-param":
        return _query_param(query, str(dict(params)["name"]))
    return request.header(name)


def _form_encode(text: str) -> str:
    """Percent-encode as application/x-www-form-urlencoded does, a space as %20 (RFC 9421
    section 2.2.8): only ASCII letters, digits and `*-._` stay as they are."""
    return quote(text, safe="*-._").replace("~", "%7E")


def _query_param(query: str, name: str) -> str:
    try:
        pairs = parse_qsl(query, keep_blank_values=True, max_num_fields=MAX_FIELD_VALUE // 8)
    except ValueError:
        raise SignatureError("the query has too many parameters") from None
    values = [_form_encode(value) for key, value in pairs if _form_encode(key) == name]
    if len(values) != 1:
        raise SignatureError(f"the signed query parameter {name} is missing or repeated")
    return values[0]


# --- Verifying --------------------------------------------------------------------------


@dataclass(frozen=True)
class VerifiedSignature:
    """A signature that verified: whose key, which scheme and algorithm, what it covers."""

    key_id: str
    scheme: str  # DRAFT or RFC9421
    algorithm: str  # rsa-sha256 (PKCS#1 v1.5, SHA-256), rsa-v1_5-sha256, rsa-pss-sha512, ed25519
    components: tuple[str, ...]
    created: int  # when the signature says it was made (Unix time)


def verify_signature(
    request: RequestParts, parsed: ParsedSignature, key: PublicKey, *, now: float | None = None
) -> VerifiedSignature:
    """Return the verified signature of request with key (from load_public_key), or raise
    SignatureError; SignatureMismatch when only the cryptography fails (a stale key?)."""
    check_signature(request, parsed, now=now)
    base = signature_base(request, parsed)
    for algorithm in _algorithms(parsed, key):
        if _verifies(key, algorithm, parsed.signature, base):
            created = parsed.created
            if created is None:
                created = _http_date(request.header("date"))
            return VerifiedSignature(
                parsed.key_id, parsed.scheme, algorithm, parsed.components, created
            )
    raise SignatureMismatch(f"the signature does not verify with the key {parsed.key_id}")


def _algorithms(parsed: ParsedSignature, key: PublicKey) -> tuple[str, ...]:
    """Return the algorithms the signature may use with key, or raise SignatureMismatch."""
    is_rsa = isinstance(key, rsa.RSAPublicKey)
    if parsed.scheme == DRAFT:
        if is_rsa:
            return ("rsa-sha256",)  # hs2019 too, as Mastodon does
        if parsed.algorithm != "rsa-sha256":
            return ("ed25519",)
    elif parsed.algorithm is None:
        return ("rsa-v1_5-sha256", "rsa-pss-sha512") if is_rsa else ("ed25519",)
    elif parsed.algorithm.startswith("rsa-") == is_rsa:
        return (parsed.algorithm,)
    raise SignatureMismatch(f"the key {parsed.key_id} is not of the signature's algorithm")


def _verifies(key: PublicKey, algorithm: str, signature: bytes, base: bytes) -> bool:
    try:
        if isinstance(key, ed25519.Ed25519PublicKey):
            key.verify(signature, base)
        elif algorithm == "rsa-pss-sha512":
            pss = padding.PSS(mgf=padding.MGF1(hashes.SHA512()), salt_length=64)
            key.verify(signature, base, pss, hashes.SHA512())
        else:
            key.verify(signature, base, padding.PKCS1v15(), hashes.SHA256())
    except InvalidSignature:
        return False
    return True


# --- Signing ----------------------------------------------------------------------------

_METHOD = re.compile(r"[A-Z]{1,16}")
_KEY_ID = re.compile(rf"[\x21\x23-\x5b\x5d-\x7e]{{1,{MAX_KEY_ID}}}")  # no quote, backslash


def sign_request(
    method: str,
    url: str,
    headers: Mapping[str, str] | None,
    body: bytes | None,
    key_id: str,
    private_pem: str,
    *,
    now: float | None = None,
) -> dict[str, str]:
    """Return the headers that sign a request as Mastodon does (draft-cavage, rsa-sha256):
    Host, Date, Digest when body is not None, and Signature, over `(request-target) host
    date [digest] [accept]` (accept when headers has one). Send them as they are; raise
    ValueError for a bad method, URL, key id or key (our own data, not a stranger's)."""
    key = _load_private_key(private_pem)
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ValueError("draft-cavage signing needs an RSA key")
    host, target = _host_and_target(method, url, key_id)
    added = {"Host": host, "Date": formatdate(time.time() if now is None else now, usegmt=True)}
    covered = [("(request-target)", f"{method.lower()} {target}"), ("host", host)]
    covered.append(("date", added["Date"]))
    if body is not None:
        added["Digest"] = digest_header(body)
        covered.append(("digest", added["Digest"]))
    accept = {name.lower(): value for name, value in (headers or {}).items()}.get("accept")
    if accept is not None:
        covered.append(("accept", accept.strip()))
    signing_string = "\n".join(f"{name}: {value}" for name, value in covered).encode("utf-8")
    signature = key.sign(signing_string, padding.PKCS1v15(), hashes.SHA256())
    added["Signature"] = (
        f'keyId="{key_id}",algorithm="rsa-sha256",'
        f'headers="{" ".join(name for name, _ in covered)}",'
        f'signature="{base64.b64encode(signature).decode("ascii")}"'
    )
    return added


def sign_request_rfc9421(
    method: str,
    url: str,
    body: bytes | None,
    key_id: str,
    private_pem: str,
    *,
    label: str = "sig1",
    now: float | None = None,
) -> dict[str, str]:
    """Return the headers that sign a request the RFC 9421 way: Host, Content-Digest when
    body is not None, Signature-Input and Signature over `@method @target-uri
    [content-digest]`, created and keyid (rsa-v1_5-sha256 for an RSA key, ed25519 for an
    Ed25519 one, named in alg). Raise ValueError for a bad method, URL, key id or label."""
    key = _load_private_key(private_pem)
    host, target = _host_and_target(method, url, key_id)
    if not _Fields._KEY.fullmatch(label):
        raise ValueError("a signature label is lowercase letters, digits and _-.*")
    algorithm = "rsa-v1_5-sha256" if isinstance(key, rsa.RSAPrivateKey) else "ed25519"
    added = {"Host": host}
    covered: list[tuple[str, _Params]] = [("@method", ()), ("@target-uri", ())]
    if body is not None:
        added["Content-Digest"] = content_digest_header(body)
        covered.append(("content-digest", ()))
    created = int(time.time() if now is None else now)
    params: _Params = (("created", created), ("keyid", key_id), ("alg", algorithm))
    request = RequestParts.of(method, target, added, body or b"", urlsplit(url).scheme)
    parsed = ParsedSignature(
        scheme=RFC9421,
        key_id=key_id,
        algorithm=algorithm,
        components=tuple(_serialize_string(name) for name, _ in covered),
        signature=b"",
        created=created,
        label=label,
        signature_params=_serialize_inner_list(covered, params),
        items=tuple(covered),
    )
    base = signature_base(request, parsed)
    if isinstance(key, rsa.RSAPrivateKey):
        signature = key.sign(base, padding.PKCS1v15(), hashes.SHA256())
    else:
        signature = key.sign(base)
    added["Signature-Input"] = f"{label}={parsed.signature_params}"
    added["Signature"] = f"{label}=:{base64.b64encode(signature).decode('ascii')}:"
    return added


def _host_and_target(method: str, url: str, key_id: str) -> tuple[str, str]:
    """Return the Host header and request target of an http(s) url, or raise ValueError."""
    if not _METHOD.fullmatch(method):
        raise ValueError(f"not an HTTP method: {method!r}")
    if not _KEY_ID.fullmatch(key_id):
        raise ValueError("a key id is printable ASCII without quotes or backslashes")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or "@" in parts.netloc:
        raise ValueError(f"not an http(s) URL: {url!r}")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    if parts.port is not None and parts.port != {"https": 443, "http": 80}[parts.scheme]:
        host = f"{host}:{parts.port}"
    return host, (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
