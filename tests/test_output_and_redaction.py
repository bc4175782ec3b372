"""The bounded output buffer and secret redaction: pure logic."""

from hypothesis import given, settings, strategies as st

from tui_debugger.output import OutputBuffer
from tui_debugger.redact import redact


def test_cursor_reads_only_new_entries_and_reports_drops():
    buf = OutputBuffer(max_entries=3, max_bytes=10_000)
    for i in range(5):
        buf.append("stdout", f"line {i}\n")
    first = buf.read(since=0)
    assert [e.text for e in first.entries] == ["line 2\n", "line 3\n", "line 4\n"]
    assert first.dropped == 2 and first.next_cursor == 6
    assert buf.read(since=first.next_cursor).entries == []
    buf.append("stderr", "late\n")
    later = buf.read(since=first.next_cursor)
    assert [(e.category, e.text) for e in later.entries] == [("stderr", "late\n")]
    assert later.dropped == 0


def test_byte_limit_evicts_oldest():
    buf = OutputBuffer(max_entries=1000, max_bytes=10)
    buf.append("stdout", "aaaaaa")
    buf.append("stdout", "bbbbbb")
    chunk = buf.read(0)
    assert [e.text for e in chunk.entries] == ["bbbbbb"] and chunk.dropped == 1


def test_limit_marks_truncated_and_resumes():
    buf = OutputBuffer()
    for i in range(10):
        buf.append("stdout", str(i))
    part = buf.read(0, limit=4)
    assert part.truncated and [e.text for e in part.entries] == ["0", "1", "2", "3"]
    rest = buf.read(part.next_cursor, limit=100)
    assert [e.text for e in rest.entries] == [str(i) for i in range(4, 10)] and not rest.truncated
    assert [e.text for e in buf.tail(2).entries] == ["8", "9"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=30), max_size=60), st.integers(1, 20), st.integers(1, 200))
def test_reading_in_pieces_never_loses_or_repeats(texts, limit, max_entries):
    buf = OutputBuffer(max_entries=max_entries, max_bytes=10**6)
    for t in texts:
        buf.append("stdout", t)
    cursor, seen, dropped = 0, [], 0
    while True:
        chunk = buf.read(cursor, limit=limit)
        dropped += chunk.dropped
        seen.extend(e.seq for e in chunk.entries)
        if not chunk.entries:
            break
        cursor = chunk.next_cursor
    assert seen == sorted(set(seen))
    assert len(seen) + dropped == len(texts)


def test_tail_lines_keep_each_stream_apart():
    # debugpy sends print()'s text and its newline as two events; a stderr line
    # may come between them, and must not be glued to the stdout line.
    buf = OutputBuffer()
    for category, text in [("stdout", "hello stdout"), ("stderr", "hello stderr\n"),
                           ("stdout", "\n"), ("stdout", "line 0\nline 1\n"), ("stdout", "tail")]:
        buf.append(category, text)
    tail = buf.tail_lines()
    assert [(line.category, line.text) for line in tail.lines] == [
        ("stdout", "hello stdout\n"), ("stderr", "hello stderr\n"),
        ("stdout", "line 0\n"), ("stdout", "line 1\n"), ("stdout", "tail")]
    assert [(line.category, line.text) for line in buf.tail_lines(2).lines] == [
        ("stdout", "line 1\n"), ("stdout", "tail")]


def test_redaction_hides_common_secrets():
    text = (
        "Authorization: Bearer abcdefghijklmnop123\n"
        "api_key=sk-live-1234567890abcdefghij password: hunter22 token=\"xyz123abc\"\n"
        "aws AKIAABCDEFGHIJKLMNOP ghp_abcdefghijklmnopqrstuvwxyz0123456789\n"
    )
    out = redact(text)
    for secret in ("abcdefghijklmnop123", "hunter22", "xyz123abc", "AKIAABCDEFGHIJKLMNOP",
                   "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "sk-live-1234567890abcdefghij"):
        assert secret not in out
    assert "Bearer [REDACTED]" in out


def test_redaction_leaves_ordinary_text_alone():
    for text in ("count=3 total=12 name='widget'", "Traceback (most recent call last):",
                 "x = {'a': [1, 2, 3]}"):
        assert redact(text) == text


#: a text each of redact's patterns hides something in, in the patterns' order
PATTERN_EXAMPLES = [
    "Authorization: Bearer abcdefghijklmnop123",
    "Proxy-Authorization: Basic dXNlcjpodW50ZXIy",
    "Set-Cookie: sid=abc123; theme=dark",
    'config {"db_password": "hunter22"}',
    "user-pass: letmein pw=hunter2",
    "postgres://admin:s3cr3t@db.example:5432/app",
    "eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.c2lnbmF0dXJl",
    "aws AKIAABCDEFGHIJKLMNOP",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "sk-live-1234567890abcdefghij",
    "xoxb-1234567890-abcdef",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
    "key: -----BEGIN RSA PRIVATE KEY-----\nCutShortKeyMaterial",
    "QmFzZTY0S2V5VGFpbA==\n-----END PRIVATE KEY-----\n",
    'Signing Identity: "Apple Development: Jo (ABCDE12345)"',
    'Provisioning Profile: "iOS Team Provisioning Profile: *"',
]


def _every_pattern(text: str) -> str:
    """redact as it is without its first search: every pattern, in order."""
    from tui_debugger.redact import patterns

    for pattern, replacement in patterns():
        text = pattern.sub(replacement, text)
    return text


def test_each_pattern_has_an_example_its_trigger_lets_through():
    """redact skips a text in which _TRIGGERS finds nothing: every pattern's
    example must be found by it (a pattern added without its trigger fails)."""
    from tui_debugger.redact import _TRIGGERS, patterns

    assert len(PATTERN_EXAMPLES) == len(patterns())
    for (pattern, _), example in zip(patterns(), PATTERN_EXAMPLES):
        assert pattern.search(example), (pattern.pattern, example)
        assert _TRIGGERS.search(example), example
        assert redact(example) == _every_pattern(example) != example


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(PATTERN_EXAMPLES), st.text(max_size=12),
                          st.sampled_from(["=", ": ", "'", '"', "\\", "://", "@", "-----",
                                           "PASS", "Token", "pw", "x" * 20, " "])),
                max_size=8))
def test_the_first_search_changes_nothing_redact_answers(parts):
    text = "".join(parts)
    assert redact(text) == _every_pattern(text)
