"""The LLDB command allowlist: read-only commands run spelled out in full; every
other command, option and alias needs allowUnsafe. The escapes below are the
ones a fault run found through the old denylist (a shell, Python, native code or
a file write ran); tests/faults/test_lldb_escapes.py runs them against real
lldb-dap and lldb and checks that nothing ran."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backends.errors import CommandDenied, ErrorCode, InvalidInput
from backends.lldb_commands import (
    ALLOWED,
    MAX_COMMAND_CHARS,
    names_lldb_command,
    tokenize,
    vet_lldb_command,
)

# Each of these ran code or wrote a file through the denylist; M is a marker path.
ESCAPES = [
    "platform shell touch M",
    "pla sh touch M",
    "shell touch M",
    "script open('M', 'w')",
    "sc open('M', 'w')",
    "command script import M",
    "command source M",
    "command alias zz platform shell touch M",
    "command regex zz 's/(.+)/platform shell touch M/'",
    "target stop-hook add -o 'platform shell touch M'",
    "display (int)system(\"touch M\")",
    "breakpoint command add -o 'platform shell touch M' 1",
    "type summary add --python-script \"open('M','w')\" int",
    "plugin load M",
    "log enable -f M lldb api",
    "memory read --outfile M &i",
    "memory read -o M &i",
    "memory read -outfile M &i",
    "memory read --out M &i",
    "x -o M &i",
    "memory read \"-o\" M &i",
    "settings write -f M",
    "process save-core M",
    "settings set -- target.run-args M",
    "settings set -g target.run-args M",
    "settings append target.run-args M",
    "process launch -- M",
    "platform process launch -- /usr/bin/touch M",
    "target create /usr/bin/touch",
    "frame variable --summary-string '${script.var:os.system}' i",
    "expression -r",
    "!!",
    "process kill",
    "kill",
    "memory write &i 0x1",
    "register write rip 0",
    "expression @import Foundation",
    "settings set target.run-args M",
    "target delete",
    "process destroy",
]


@pytest.mark.parametrize("command", ESCAPES)
def test_escapes_are_denied_naming_the_allowlist(command):
    with pytest.raises(CommandDenied) as caught:
        vet_lldb_command(command)
    error = caught.value
    assert error.code is ErrorCode.command_denied
    assert "read-only allowlist" in error.message and "allowUnsafe" in error.message
    assert error.details["list"] == "allowlist"


@pytest.mark.parametrize("command", ESCAPES)
def test_allow_unsafe_sends_the_users_own_text(command):
    vetted = vet_lldb_command(command, allow_unsafe=True)
    assert vetted.unsafe and vetted.text == command.strip() and vetted.marker == "[UNSAFE]"


@pytest.mark.parametrize(
    ("command", "sent"),
    [
        ("bt", "thread backtrace"),
        ("bt 5", "thread backtrace -c 5"),
        ("bt all", "thread backtrace all"),
        ("fr v origin", "frame variable origin"),
        ("v -T origin", "frame variable -T origin"),
        ("p origin.x + 1", "dwim-print -- origin.x + 1"),
        ("po origin", "dwim-print -O -- origin"),
        ("p/x i", "dwim-print -G x -- i"),
        ("call square(3)", "expression -- square(3)"),
        ("expr -T -- origin", "expression -T -- origin"),
        ("x/4xw &i", "memory read -G 4xw &i"),
        ("mem read --count 8 &i", "memory read --count 8 &i"),
        ("re r rip", "register read rip"),
        ("image lookup -n main", "target modules lookup -n main"),
        ("image list -b", "target modules list -b"),
        ("di -n main", "disassemble -n main"),
        ("up", "frame select -r 1"),
        ("down 2", "frame select -r -2"),
        ("list native_demo.c:20", "source list -f native_demo.c -l 20"),
        ("settings show target.run-args", "settings show target.run-args"),
        ("help platform shell", "help platform shell"),
        ("parray 3 arr", "expression -Z 3 -- arr"),
        ("  PROCESS  status ", None),
    ],
)
def test_read_only_commands_run_spelled_out(command, sent):
    if sent is None:  # LLDB's words are case-sensitive: PROCESS is no command
        with pytest.raises(CommandDenied):
            vet_lldb_command(command)
        return
    vetted = vet_lldb_command(command)
    assert not vetted.unsafe and vetted.text == sent
    assert vet_lldb_command(command, allow_unsafe=True).text == sent  # nothing to bypass


def test_every_allowlisted_command_is_accepted_with_its_options():
    for allowed in ALLOWED:
        spelled = " ".join(allowed.words)
        for option, takes_value in allowed.options.items():
            flag = f"-{option}" if len(option) == 1 else f"--{option}"
            tail = f"{flag} 1" if takes_value else flag
            if allowed.raw:
                tail += " -- x"
            assert vet_lldb_command(f"{spelled} {tail}").text.startswith(spelled)


@pytest.mark.parametrize("command", ["", "   ", "bt\nplatform shell ls", "bt\x00"])
def test_bad_input_is_invalid(command):
    with pytest.raises(InvalidInput):
        vet_lldb_command(command)


def test_a_long_command_is_refused_at_once():
    started = time.monotonic()
    with pytest.raises(InvalidInput, match="limit"):
        vet_lldb_command("p " + "x" * 10_000_000)
    # and one just under the cap is read in linear time
    vet_lldb_command("p " + "'a b' " * (MAX_COMMAND_CHARS // 7))
    assert time.monotonic() - started < 1.0


def test_names_lldb_command_tells_commands_from_expressions():
    assert names_lldb_command("platform shell id") and names_lldb_command("script 1")
    assert not names_lldb_command("platform_count + 1") and not names_lldb_command("")


def test_tokenize_follows_lldbs_quoting():
    assert tokenize("a 'b c' \"d \\\"e\" f\\ g `h i`") == ["a", "b c", 'd "e', "f g", "`h i`"]
    assert tokenize("unbalanced 'quote") == ["unbalanced", "quote"]


@settings(max_examples=300, derandomize=True)
@given(st.text(alphabet="abcdeilmoprstvx -'\"`\\/!=0123", max_size=40))
def test_anything_denied_or_spelled_out_never_crashes(text):
    """Any text either is refused with a typed error or becomes a command that
    starts with an allowlisted command spelled out in full."""
    try:
        vetted = vet_lldb_command(text)
    except (CommandDenied, InvalidInput):
        return
    assert any(vetted.text == " ".join(a.words) or vetted.text.startswith(" ".join(a.words) + " ")
               for a in ALLOWED), vetted.text
