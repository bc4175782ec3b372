"""The LLDB command denylist (seeds/004): what is denied, the alternative it
names, and the allow_unsafe bypass."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from backends.denylist import DENIED, UnsafeBypass, check_lldb_command
from backends.errors import CommandDenied, ErrorCode, InvalidInput


@pytest.mark.parametrize(
    ("command", "pattern", "hint"),
    [
        ("platform shell ls /", "platform shell", "terminal"),
        ("pla sh ls", "platform shell", "terminal"),
        ("shell ls", "platform shell", "terminal"),
        ("command script import /tmp/x.py", "command script", "evaluate"),
        ("com scr add -f x y", "command script", "evaluate"),
        ("script import os", "script", "evaluate"),
        ("command source /tmp/cmds", "command source", "one at a time"),
        ("process kill", "process kill", "stop"),
        ("pro kill", "process kill", "stop"),
        ("kill", "process kill", "stop"),
        ("process destroy", "process destroy", "stop"),
        ("memory write 0x1000 0x01", "memory write", "memory read"),
        ("mem wr -s 4 &i 1", "memory write", "memory read"),
        ("register write rip 0x0", "register write", "register read"),
        ("expression @import Foundation", "expression @import", "without @import"),
        ("expr -- @import UIKit", "expression @import", "without @import"),
        ("settings set target.run-args --evil", "settings set target.run-args", "arguments"),
        ("target delete", "target delete", "detach"),
        ("  PROCESS   KILL  ", "process kill", "stop"),
    ],
)
def test_denied_commands_name_their_alternative(command, pattern, hint):
    with pytest.raises(CommandDenied) as caught:
        check_lldb_command(command, allow_unsafe=False)
    error = caught.value
    assert error.code is ErrorCode.command_denied
    assert error.details["pattern"] == pattern
    assert hint in error.message
    assert "allowUnsafe" in error.message


@pytest.mark.parametrize(
    "command",
    [
        "bt", "thread backtrace all", "frame variable origin", "p origin.x + 1",
        "expression -- origin.x", "memory read --count 8 &i", "register read",
        "process continue", "process status", "settings show target.run-args",
        "breakpoint list", "target modules list", "disassemble --frame",
        "image lookup -n main", "platform status",
    ],
)
def test_safe_commands_pass(command):
    assert check_lldb_command(command) is None
    assert check_lldb_command(command, allow_unsafe=True) is None


def test_allow_unsafe_runs_it_and_marks_it():
    marker = check_lldb_command("memory write 0x1000 0x01", allow_unsafe=True)
    assert isinstance(marker, UnsafeBypass)
    assert marker.marker == "[UNSAFE]"
    assert marker.reason.startswith("memory write")


@pytest.mark.parametrize("command", ["", "   ", "bt\nplatform shell ls"])
def test_bad_input_is_invalid(command):
    with pytest.raises(InvalidInput):
        check_lldb_command(command)


@given(
    pattern=st.sampled_from([p for p in DENIED if len(p.words) == 2]),
    cut=st.tuples(st.integers(min_value=0, max_value=4), st.integers(min_value=0, max_value=4)),
    tail=st.text(alphabet="abc /-0x12", max_size=12),
)
def test_unambiguous_prefixes_are_still_denied(pattern, cut, tail):
    """lldb runs any unambiguous prefix of a command word; the denylist must too."""
    first, second = pattern.words
    command = f"{first[:max(len(first) - cut[0], 4)]} {second[:max(len(second) - cut[1], 6)]}"
    with pytest.raises(CommandDenied):
        check_lldb_command(f"{command} {tail}".strip())
