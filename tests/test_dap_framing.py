"""Content-Length framing: round trips under any chunking, and recovery from
bad frames without wedging the decoder."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backends.dap.framing import Decoder, FramingError, encode

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
messages = st.fixed_dictionaries(
    {
        "seq": st.integers(1, 10**6),
        "type": st.sampled_from(["request", "response", "event"]),
    },
    optional={"body": st.dictionaries(st.text(max_size=10), json_values, max_size=5)},
)


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    chunks, last = [], 0
    for point in points:
        chunks.append(data[last:point])
        last = point
    chunks.append(data[last:])
    return chunks


def decode_all(decoder: Decoder, chunks: list[bytes]) -> list[dict]:
    out: list[dict] = []
    for chunk in chunks:
        out += decoder.feed(chunk)
    return out


@settings(max_examples=100, deadline=None)
@given(st.lists(messages, max_size=8), st.lists(st.integers(0, 10**6), max_size=20))
@pytest.mark.slow
def test_random_chunking_round_trips(msgs, cuts):
    stream = b"".join(encode(m) for m in msgs)
    decoder = Decoder()
    assert decode_all(decoder, split_at(stream, cuts)) == msgs
    assert decoder.buffered == 0


@settings(max_examples=30, deadline=None)
@given(st.lists(messages, min_size=1, max_size=6))
def test_one_byte_at_a_time(msgs):
    stream = b"".join(encode(m) for m in msgs)
    decoder = Decoder()
    assert decode_all(decoder, [stream[i : i + 1] for i in range(len(stream))]) == msgs


@settings(max_examples=50, deadline=None)
@given(st.lists(messages, min_size=2, max_size=6))
def test_merged_frames_in_one_chunk(msgs):
    assert Decoder().feed(b"".join(encode(m) for m in msgs)) == msgs


@settings(max_examples=100, deadline=None)
@given(
    messages,
    st.lists(
        st.tuples(
            st.from_regex(r"X-[A-Za-z]{1,10}", fullmatch=True),
            st.from_regex(r"[ -~]{0,20}", fullmatch=True),
        ),
        max_size=3,
    ),
    st.sampled_from(["Content-Length", "content-length", "CONTENT-LENGTH", "Content-length"]),
    st.lists(st.integers(0, 10**4), max_size=5),
)
def test_extra_headers_and_any_case(msg, extra, header_name, cuts):
    body = json.dumps(msg).encode()
    lines = [f"{k}: {v}".encode() for k, v in extra]
    lines.insert(len(lines) // 2, f"{header_name}: {len(body)}".encode())
    frame = b"\r\n".join(lines) + b"\r\n\r\n" + body
    assert decode_all(Decoder(), split_at(frame + encode(msg), cuts)) == [msg, msg]


def test_unicode_length_counts_bytes():
    msg = {"seq": 1, "type": "event", "body": {"text": "héllo → 世界 🎉"}}
    frame = encode(msg)
    assert frame.startswith(b"Content-Length: %d\r\n" % len(frame.split(b"\r\n\r\n", 1)[1]))
    assert Decoder().feed(frame) == [msg]


def _feed_through_errors(decoder: Decoder, data: bytes) -> tuple[list[dict], list[FramingError]]:
    """What a reader loop does: keep the good messages, note the errors, go on."""
    good, errors = [], []
    chunk = data
    while True:
        try:
            good += decoder.feed(chunk)
            return good, errors
        except FramingError as exc:
            good += exc.messages
            errors.append(exc)
            chunk = b""


GOOD = {"seq": 7, "type": "event", "event": "output"}


@pytest.mark.parametrize(
    "bad, reason",
    [
        (b"Content-Length: abc\r\n\r\n", "Content-Length"),
        (b"Content-Type: x\r\n\r\n", "no valid Content-Length"),
        (b"Content-Length: 5\r\nno colon here\r\n\r\n{bad}", "Malformed header"),
        (b"Content-Length: 9\r\n\r\n{not json", "not valid JSON"),
        (b"Content-Length: 2\r\n\r\n[]", "not a JSON object"),
        (b"Content-Length: 2\r\n\r\n\xff\xfe", "not valid JSON"),
    ],
)
def test_bad_frame_is_reported_and_skipped(bad, reason):
    decoder = Decoder()
    good, errors = _feed_through_errors(decoder, encode(GOOD) + bad + encode(GOOD))
    assert good == [GOOD, GOOD]
    assert len(errors) >= 1 and reason in str(errors[0])
    assert decoder.buffered == 0


def test_error_carries_messages_decoded_before_it():
    decoder = Decoder()
    with pytest.raises(FramingError) as info:
        decoder.feed(encode(GOOD) + b"Content-Length: 3\r\n\r\nabc" + encode(GOOD))
    assert info.value.messages == [GOOD]
    assert decoder.feed(b"") == [GOOD]  # the frame after the bad one is still there


@pytest.mark.parametrize(
    "junk", [b"hello from the adapter\n", b"warning x\r\n", b"stray", b'{"a":1}']
)
def test_stray_output_before_a_header_keeps_the_frame(junk):
    good, errors = _feed_through_errors(Decoder(), junk + encode(GOOD))
    assert good == [GOOD]
    assert errors and "Stray" in errors[0].reason


def test_header_like_stray_line_is_an_extra_header():
    # "name: value" cannot be told from a header the spec allows; it is ignored.
    assert Decoder().feed(b"warning: x\r\n" + encode(GOOD)) == [GOOD]


def test_header_without_terminator_is_dropped_not_hoarded():
    decoder = Decoder()
    with pytest.raises(FramingError, match="terminator"):
        decoder.feed(b"x" * (70 * 1024))
    assert decoder.buffered == 0
    assert decoder.feed(encode(GOOD)) == [GOOD]


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200), st.lists(messages, min_size=1, max_size=3))
def test_garbage_never_wedges_the_decoder(garbage, msgs):
    decoder = Decoder()
    _feed_through_errors(decoder, garbage + b"\r\n\r\n")
    # Whatever the garbage left behind, a clean stream afterwards decodes in full
    # once the decoder is past it (at most one frame may be swallowed by a
    # garbage Content-Length, so send a sacrificial frame first).
    sacrificial = encode({"seq": 0, "type": "event"})
    good, _ = _feed_through_errors(decoder, sacrificial * 2 + b"".join(encode(m) for m in msgs))
    assert good[-len(msgs):] == msgs
