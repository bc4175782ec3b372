"""C data as C shows it: byte buffers cut short with their length, C escapes
instead of LLDB's mix of UTF-8 and `\\U0000xxxx`, and a struct's fields one
level deep where LLDB shows only `type @ address`.

LLDB (both lldb-dap and our lldb-cli helper) renders a `char`/`unsigned char`
array as a C string of up to 1,024 characters, decoding bytes that form UTF-8
(`\\xce\\x82` becomes `΂`) and writing other control bytes as `\\U00000016`. A
16 KB input buffer therefore cost 1-2.4 KB of every stop answer, in escapes
no C programmer reads. Here the rendering is turned back into its bytes and
written again with C's escapes, cut at a few dozen bytes with the array's true
length: `"\\x0b\\xce\\x82…" (16384 bytes)`. The whole buffer stays readable
through `variables` (its elements, paged) and `memory`.
"""

from __future__ import annotations

import re

#: element types that are bytes, as LLDB names them (typedefs included)
_BYTE = r"(?:const\s+)?(?:unsigned char|signed char|char|uint8_t|int8_t|u_char|u8|Bytef|Byte|guchar|gchar)"
BYTE_ARRAY = re.compile(_BYTE + r"\s*\[(\d+)\]")
#: (a `const` pointer, `const unsigned char *const p`, is a pointer to bytes too)
BYTE_POINTER = re.compile(_BYTE + r"\s*\*(?:\s*const)?(?:\s*volatile)?(?:\s*restrict)?")

#: bytes shown of a buffer in lists of values (a stop's locals, `variables`)
SHORT_BYTES = 32

_SIMPLE = {"n": 0x0A, "t": 0x09, "r": 0x0D, "v": 0x0B, "f": 0x0C, "a": 0x07, "b": 0x08,
           "e": 0x1B, "0": 0x00, "\\": 0x5C, '"': 0x22, "'": 0x27, "?": 0x3F}
_ESCAPE_OF = {0x0A: "\\n", 0x09: "\\t", 0x0D: "\\r", 0x0B: "\\v", 0x0C: "\\f", 0x07: "\\a",
              0x08: "\\b", 0x00: "\\0", 0x5C: "\\\\", 0x22: '\\"'}


def lldb_string_bytes(quoted: str) -> tuple[bytes, bool]:
    """The bytes of an LLDB C-string rendering (without its quotes), and whether
    the rendering was cut by LLDB itself (it ends with `...`)."""
    cut = quoted.endswith("...")
    if cut:
        quoted = quoted[:-3]
    out = bytearray()
    i = 0
    while i < len(quoted):
        ch = quoted[i]
        if ch != "\\" or i + 1 >= len(quoted):
            out += ch.encode("utf-8", "surrogatepass")
            i += 1
            continue
        nxt = quoted[i + 1]
        if nxt in ("x", "u", "U"):
            width = {"x": 2, "u": 4, "U": 8}[nxt]
            digits = re.match(r"[0-9a-fA-F]{1,%d}" % width, quoted[i + 2:i + 2 + width])
            if digits:
                code = int(digits.group(0), 16)
                if nxt == "x" or code < 0x100:
                    out.append(code & 0xFF)
                else:
                    out += chr(code).encode("utf-8", "surrogatepass")
                i += 2 + len(digits.group(0))
                continue
        if nxt in "01234567" and nxt != "0" or (nxt == "0" and quoted[i + 2:i + 3].isdigit()):
            digits = re.match(r"[0-7]{1,3}", quoted[i + 1:i + 4])
            out.append(int(digits.group(0), 8) & 0xFF)  # type: ignore[union-attr]
            i += 1 + len(digits.group(0))  # type: ignore[union-attr]
            continue
        if nxt in _SIMPLE:
            out.append(_SIMPLE[nxt])
            i += 2
            continue
        out += ("\\" + nxt).encode("utf-8")
        i += 2
    return bytes(out), cut


def c_escape(data: bytes) -> str:
    """Bytes as a C string literal's body: printable ASCII as is, the rest \\xHH."""
    parts = []
    for byte in data:
        if byte in _ESCAPE_OF:
            parts.append(_ESCAPE_OF[byte])
        elif 0x20 <= byte < 0x7F:
            parts.append(chr(byte))
        else:
            parts.append(f"\\x{byte:02x}")
    return "".join(parts)


def _quoted_span(value: str) -> tuple[int, int, bool] | None:
    """Where the C string in an LLDB value is (`"…"` alone, or after an address),
    and whether LLDB cut it (`"…"...`)."""
    start = value.find('"')
    cut = value.endswith('"...')
    end = len(value) - 3 if cut else len(value)
    if start < 0 or value[end - 1:end] != '"' or end - start < 2:
        return None
    return start, end, cut


def is_byte_data(type_name: str | None) -> bool:
    """Whether a value of this type is shown by `c_data_value` (a byte buffer)."""
    if not type_name:
        return False
    name = type_name.strip()
    return BYTE_ARRAY.fullmatch(name) is not None or BYTE_POINTER.fullmatch(name) is not None


def c_data_value(value: str, type_name: str | None, max_bytes: int | None = SHORT_BYTES) -> str:
    """A byte array's or byte pointer's value with C escapes, cut at `max_bytes`
    (None: as much as LLDB rendered), and an array's length in bytes:
    `"\\x0b\\xce\\x82…" (16384 bytes)`. Any other value is returned as it is."""
    if not type_name or not value:
        return value
    array = BYTE_ARRAY.fullmatch(type_name.strip())
    if array is None and not BYTE_POINTER.fullmatch(type_name.strip()):
        return value
    span = _quoted_span(value)
    if span is None:
        return value
    start, end, lldb_cut = span
    data, inner_cut = lldb_string_bytes(value[start + 1:end - 1])
    shown = data if max_bytes is None else data[:max_bytes]
    more = lldb_cut or inner_cut or len(shown) < len(data)
    text = value[:start] + '"' + c_escape(shown) + ("…" if more else "") + '"'
    if array is not None:
        text += f" ({int(array.group(1))} bytes)"
    return text
