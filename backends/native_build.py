"""Native programs as people start them: a C, C++ or Rust source built with debug
information before it is debugged (as dlv builds a Go source), and a binary
with no debug information recognised, so the front ends can say so.

Builds go to a directory per source under the temporary directory, named after
the source's path: the same source builds to the same binary path each time, so
the breakpoints saved for it come back at the next run.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shlex
import shutil
import struct
import tempfile

from .errors import CommandFailed, DependencyMissing, Timeout

#: Source suffixes built before they are debugged, and the compiler for each.
SOURCES = {".c": "c", ".cc": "c++", ".cpp": "c++", ".cxx": "c++", ".c++": "c++", ".rs": "rust"}
#: Seconds a build may take (a single-file program: a few seconds at most).
BUILD_TIMEOUT = 120


def is_native_source(path: str) -> bool:
    return os.path.splitext(path)[1].lower() in SOURCES


def build_argv(source: str, output: str) -> list[str]:
    """The compiler command: debug information, no optimisation (so every line
    can be stopped at and every local read)."""
    language = SOURCES[os.path.splitext(source)[1].lower()]
    if language == "rust":
        return [os.environ.get("RUSTC", "rustc"), "-g", "-C", "opt-level=0", "-o", output, source]
    compiler = os.environ.get("CC", "cc") if language == "c" else os.environ.get("CXX", "c++")
    return [*shlex.split(compiler), "-g", "-O0", "-o", output, source]


def build_dir(source: str) -> str:
    digest = hashlib.sha256(os.path.abspath(source).encode()).hexdigest()[:12]
    return os.path.join(tempfile.gettempdir(), f"tui-debugger-{os.getuid()}", "build", digest)


def _make_private(directory: str) -> None:
    """`directory` and the folders between it and the temporary directory,
    each made 0700 (os.makedirs gives only the last one its mode, and a
    `tui-debugger-UID` left 0755 would then be refused as the runtime
    directory), and each checked to be this user's, private and not a link:
    the temporary directory is shared, and a folder another user made first
    would receive the binary that is then debugged."""
    import stat

    top = tempfile.gettempdir()
    parts = os.path.relpath(directory, top).split(os.sep)
    path = top
    for part in parts:
        path = os.path.join(path, part)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        st = os.lstat(path)
        if (not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid()
                or st.st_mode & 0o077):
            raise CommandFailed(
                f"Cannot build into {path}: it is not a private folder of this user (it must "
                "be a directory, yours, mode 0700). Remove it if it is yours, or set TMPDIR "
                "to a directory of your own.")


async def build(source: str) -> tuple[str, list[str]]:
    """Build `source`; answers the binary and the command that built it."""
    directory = build_dir(source)
    _make_private(directory)
    output = os.path.join(directory, os.path.splitext(os.path.basename(source))[0])
    argv = build_argv(os.path.abspath(source), output)
    if shutil.which(argv[0]) is None:
        hint = ("install Rust (https://rustup.rs)" if argv[0].endswith("rustc")
                else "install a C/C++ compiler (Debian/Ubuntu: apt-get install build-essential; "
                "macOS: xcode-select --install)")
        raise DependencyMissing(f"Cannot build {os.path.basename(source)}: no {argv[0]} on PATH; "
                                f"{hint}, or build it yourself with -g and run the binary.")
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=os.path.dirname(os.path.abspath(source)), stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = await asyncio.wait_for(process.communicate(), BUILD_TIMEOUT)
    except asyncio.TimeoutError:
        process.kill()
        await process.wait()
        raise Timeout(f"Building {os.path.basename(source)} took over {BUILD_TIMEOUT} s: "
                      f"{shlex.join(argv)}. Build it yourself and run the binary.") from None
    if process.returncode != 0:
        text = out.decode(errors="replace").strip()
        raise CommandFailed(f"Building {os.path.basename(source)} failed ({shlex.join(argv)}):\n"
                            f"{text[-3000:]}\nFix the source and run it again.")
    return output, argv


def debug_info(path: str) -> tuple[bool, bool] | None:
    """(has debug information, has a symbol table) of an ELF binary; None when
    it cannot tell (not ELF: Mach-O keeps its debug information beside it)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(64)
            if head[:4] != b"\x7fELF":
                return None
            wide, little = head[4] == 2, head[5] == 1
            order = "<" if little else ">"
            if wide:
                shoff, = struct.unpack_from(order + "Q", head, 0x28)
                shentsize, shnum, shstrndx = struct.unpack_from(order + "HHH", head, 0x3A)
            else:
                shoff, = struct.unpack_from(order + "I", head, 0x20)
                shentsize, shnum, shstrndx = struct.unpack_from(order + "HHH", head, 0x2E)
            if not shoff or not shnum or shstrndx >= shnum:
                return False, False
            handle.seek(shoff)
            table = handle.read(shentsize * shnum)

            def section(index: int) -> tuple[int, int, int]:
                at = index * shentsize
                if wide:
                    name, _, _, _, offset, size = struct.unpack_from(order + "IIQQQQ", table, at)
                else:
                    name, _, _, _, offset, size = struct.unpack_from(order + "IIIIII", table, at)
                return name, offset, size

            _, names_at, names_size = section(shstrndx)
            handle.seek(names_at)
            names = handle.read(min(names_size, 1 << 20))
    except (OSError, struct.error):
        return None
    found = set()
    for index in range(shnum):
        start = section(index)[0]
        end = names.find(b"\0", start)
        found.add(names[start:end if end >= 0 else None].decode(errors="replace"))
    return (".debug_info" in found or ".zdebug_info" in found or ".gnu_debuglink" in found,
            ".symtab" in found)
