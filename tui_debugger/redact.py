"""Secret redaction for output and values that reach a transcript (seeds/004).

On by default; `TUI_DEBUGGER_REDACT=0` (or the config file) turns it off."""

from __future__ import annotations

import functools
import re
from typing import Any

# A key's quote, also escaped as it is inside a C or Go string the debugger shows
# ({\"db_password\":\"x\"}), and the value after it: up to a quote, escaped or
# not, a space or a separator (a backslash that escapes something else is part of it).
_SEP = r"""(\s*\\?["']?\s*[:=]\s*\\?["']?)"""
_VALUE = r"""((?:[^\s"',;}\\]|\\(?!["'])){3,})"""
_PRIVATE_KEY = r"PRIVATE KEY(?: BLOCK)?-----"

#: (pattern, replacement), compiled at their first use (`patterns`)
_PATTERN_SOURCES: list[tuple[str, str]] = [
    (r"(?i)\b(bearer)\s+[A-Za-z0-9\-._~+/]{8,}=*", r"\1 [REDACTED]"),
    # Authorization: Basic dXNlcjpwYXNz (and any other scheme's credentials)
    (r"(?i)\b((?:proxy-)?authorization\s*\\?[\"']?\s*[:=]\s*\\?[\"']?)"
     r"(?!bearer\b)((?:basic|digest|token|negotiate|ntlm)\s+)?[^\s\"',;}\\]{3,}",
     r"\1\2[REDACTED]"),
    # Cookie: sid=...; theme=... and Set-Cookie: whole header values
    (r"(?i)\b((?:set-)?cookie\s*\\?[\"']?\s*:\s*)[^\r\n\"\\]+", r"\1[REDACTED]"),
    (
        (
            r"(?i)\b([A-Za-z0-9_\-]*(?:api[_-]?key|secret|token|passw(?:or)?d|passwd|pwd|"
            r"access[_-]?key|private[_-]?key|auth)[A-Za-z0-9_\-]*)"
            + _SEP + r"(?!(?:Bearer|Basic|\[REDACTED)\b)" + _VALUE
        ),
        r"\1\2[REDACTED]",
    ),
    # Short names: pw=..., pass: ... (whole words only: not "bypass", not "pass" alone)
    (
        r"(?i)(?<![A-Za-z0-9])((?:[A-Za-z0-9]+[_-])*(?:pw|pass|passphrase))" + _SEP + _VALUE,
        r"\1\2[REDACTED]",
    ),
    # Credentials inside URLs: postgres://admin:s3cr3t@db, https://user:token@host; a
    # password may hold an @ itself (p@ss@db): up to the last @ before the host
    (
        r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/@'\"]+:)([^\s/'\"]+)(@)",
        r"\1[REDACTED]\3",
    ),
    # JSON Web Tokens: header.payload.signature, the first two base64url JSON
    (r"\beyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*",
     "[REDACTED-JWT]"),
    (r"\b(AKIA|ASIA)[A-Z0-9]{16}\b", "[REDACTED-AWS-KEY]"),
    (r"\bgh[pousr]_[A-Za-z0-9]{30,}\b", "[REDACTED-GITHUB-TOKEN]"),
    (r"\bsk-[A-Za-z0-9_\-]{20,}\b", "[REDACTED-KEY]"),
    (r"\bxox[baprs]-[A-Za-z0-9\-]{10,}\b", "[REDACTED-SLACK-TOKEN]"),
    # PEM and PGP private keys; one cut short (a capped value, output read in
    # pieces) loses its END or its BEGIN, and what remains of it is hidden too.
    (
        r"(?s)-----BEGIN [A-Z0-9 ]*" + _PRIVATE_KEY + r".*?-----END [A-Z0-9 ]*" + _PRIVATE_KEY,
        "[REDACTED-PRIVATE-KEY]",
    ),
    (r"(?s)-----BEGIN [A-Z0-9 ]*" + _PRIVATE_KEY + r".*\Z",
     "[REDACTED-PRIVATE-KEY]"),
    (r"(?s)\A.*?-----END [A-Z0-9 ]*" + _PRIVATE_KEY, "[REDACTED-PRIVATE-KEY]"),
    (r"(?i)(Signing Identity:\s*)\"[^\"]+\"", r'\1"[REDACTED]"'),
    (r"(?i)(Provisioning Profile:\s*)\"[^\"]+\"", r'\1"[REDACTED]"'),
]


#: What every pattern above needs somewhere in a text to match (a key word, a
#: scheme's "://", a token's prefix, a PEM's dashes), case aside: a text
#: without any is left as it is after one search instead of a pass of each
#: pattern (a step's answer redacts each source line and value it shows).
#: A pattern added above must have its trigger here; tests/test_output_and_
#: redaction.py checks each pattern's examples pass it.
_TRIGGERS = re.compile(
    r"(?i)bearer|auth|cookie|api|secret|token|pass|pw|access|private|://|eyj|akia|asia|"
    r"gh[pousr]_|sk-|xox|-----|signing|provisioning")


@functools.cache
def patterns() -> list[tuple[re.Pattern[str], str]]:
    """The patterns, compiled at their first use: a process whose texts have
    had no trigger (a start's, most) does not pay their compiling (~5 ms)."""
    return [(re.compile(source), replacement) for source, replacement in _PATTERN_SOURCES]


def redact(text: str) -> str:
    if not text or _TRIGGERS.search(text) is None:
        return text
    for pattern, replacement in patterns():
        text = pattern.sub(replacement, text)
    return text


_SECRET_NAME = re.compile(
    r"(?i)(api[_-]?key|secret|token|passw(?:or)?d|passwd|pwd|access[_-]?key|private[_-]?key|"
    r"credential|auth[_-]?token|authorization|session[_-]?key|"
    # short ones only as a whole part of the name: pw, db_pw, user-pass, passphrase
    r"(?:^|[_.\-])(?:pw|pass|passphrase)(?:$|[_.\-\d]))"
)
# A string as debuggers render one: 'x', "x", b'x', or a C char* (0x1234 "x").
_STRING_VALUE = re.compile(r"""^(?P<prefix>(?:0x[0-9a-fA-F]+\s+)?[bBrRuUfF]{0,2})(?P<q>['"])(?P<body>.+)(?P=q)$""", re.S)


def is_secret_name(name: str) -> bool:
    return bool(name) and _SECRET_NAME.search(name) is not None


def redact_data(value: Any, name: str = "", secret: bool = False) -> Any:
    """A typed value (debug-script, debug_trace): strings as output is, and every
    string under a secret name hidden, the name being the expression or a dict
    key on the way down (`{'api_key': 'x'}`, `password`, `secrets['db']`).
    Numbers and booleans are left alone."""
    secret = secret or is_secret_name(name)
    if isinstance(value, str):
        return "[REDACTED]" if secret and value else redact(value)
    if isinstance(value, list):
        return [redact_data(v, "", secret) for v in value]
    if isinstance(value, dict):
        return {k: redact_data(v, k if isinstance(k, str) else "", secret)
                for k, v in value.items()}
    return value


def redact_hit(expression: str, hit: dict[str, Any]) -> dict[str, Any]:
    """One hit of debug-script or debug_trace: {"type", "value"}; an error's text
    is output, not a value of the expression."""
    if hit.get("type") == "error":
        return {**hit, "value": redact_data(hit.get("value"))}
    return {**hit, "value": redact_data(hit.get("value"), expression)}


def redact_named(name: str, value: str) -> str:
    """A value whose name says it is a secret (`password = 'hunter2'`): the text
    patterns cannot see the name, so a string value under such a name is hidden.
    Numbers (`token_count = 5`) and containers are left alone."""
    value = redact(value)
    if not name or not _SECRET_NAME.search(name):
        return value
    match = _STRING_VALUE.match(value.strip())
    if match is None or "[REDACTED" in match.group("body"):
        return value
    quote = match.group("q")
    return f"{match.group('prefix')}{quote}[REDACTED]{quote}"
