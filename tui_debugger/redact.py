"""Secret redaction for output and values that reach a transcript (seeds/004).

On by default; `TUI_DEBUGGER_REDACT=0` (or the config file) turns it off."""

from __future__ import annotations

import re

_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9\-._~+/]{8,}=*"), r"\1 [REDACTED]"),
    (
        re.compile(
            r"(?i)\b([A-Za-z0-9_\-]*(?:api[_-]?key|secret|token|passw(?:or)?d|passwd|pwd|"
            r"access[_-]?key|private[_-]?key|auth)[A-Za-z0-9_\-]*)"
            r"(\s*[\"']?\s*[:=]\s*[\"']?)(?!(?:Bearer|Basic)\b)([^\s\"',;}]{3,})"
        ),
        r"\1\2[REDACTED]",
    ),
    # Short names: pw=..., pass: ... (whole words only: not "bypass", not "pass" alone)
    (
        re.compile(r"(?i)(?<![A-Za-z0-9])((?:[A-Za-z0-9]+[_-])*(?:pw|pass|passphrase))"
                   r"(\s*[\"']?\s*[:=]\s*[\"']?)([^\s\"',;}]{3,})"),
        r"\1\2[REDACTED]",
    ),
    # Credentials inside URLs: postgres://admin:s3cr3t@db, https://user:token@host
    (
        re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/@'\"]+:)([^\s@/'\"]+)(@)"),
        r"\1[REDACTED]\3",
    ),
    (re.compile(r"\b(AKIA|ASIA)[A-Z0-9]{16}\b"), "[REDACTED-AWS-KEY]"),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"), "[REDACTED-GITHUB-TOKEN]"),
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{20,}\b"), "[REDACTED-KEY]"),
    (re.compile(r"\bxox[baprs]-[A-Za-z0-9\-]{10,}\b"), "[REDACTED-SLACK-TOKEN]"),
    (
        re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S),
        "[REDACTED-PRIVATE-KEY]",
    ),
    (re.compile(r"(?i)(Signing Identity:\s*)\"[^\"]+\""), r'\1"[REDACTED]"'),
    (re.compile(r"(?i)(Provisioning Profile:\s*)\"[^\"]+\""), r'\1"[REDACTED]"'),
]


def redact(text: str) -> str:
    if not text:
        return text
    for pattern, replacement in _PATTERNS:
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
