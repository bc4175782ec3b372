"""A debuggee started before its launch: `python -X frozen_modules=off THIS
DEBUGPY_DIR`, in the program's Python and environment, imports what `python
DEBUGPY_DIR --connect ...` imports before it reads its command line (debugpy,
pydevd: ~0.15 s of the way to a first stop), then waits on its stdin for the
launch (backends/spare_program.py). Run by path in the user's interpreter:
the standard library only, nothing of ours.

The launch comes as one message on stdin: a line with its length in bytes,
then that many bytes of JSON: {"argv": [...], "cwd": ..., "env": {...},
"stdin": "pipe" | "devnull"}. Read byte-exact (os.read), so what follows on
the pipe is the program's input, untouched. Then this process becomes what
`python DEBUGPY_DIR ARGV...` would have been at the same point: its
directory, its environment, its sys.argv, and debugpy's command line run as
its `__main__.py` runs it.
"""

import json
import os
import sys


def _read_exactly(n):
    data = b""
    while len(data) < n:
        chunk = os.read(0, n - len(data))
        if not chunk:
            raise EOFError("the host closed the pipe before the launch")
        data += chunk
    return data


def _read_launch():
    header = b""
    while not header.endswith(b"\n"):
        byte = os.read(0, 1)
        if not byte:
            raise EOFError("the host closed the pipe before the launch")
        header += byte
        if len(header) > 16:
            raise ValueError("not a launch header")
    return json.loads(_read_exactly(int(header)).decode("utf-8"))


def main():
    debugpy_dir = sys.argv[1]
    # As debugpy's __main__.py, run as `python DEBUGPY_DIR`: its parent first on
    # sys.path for the import, then that entry gone (here it stood for this
    # file's directory, which the program must not see either).
    sys.path[0] = debugpy_dir + "/../"
    import debugpy  # noqa: F401

    del sys.path[0]
    from debugpy.server import cli  # pydevd, vendored, imported with it

    try:
        launch = _read_launch()
    except (EOFError, ValueError, OSError):
        sys.exit(0)  # not taken: the host let it go
    os.chdir(launch["cwd"])
    os.environ.clear()
    os.environ.update(launch["env"])
    if launch.get("stdin") == "devnull":
        fd = os.open(os.devnull, os.O_RDONLY)
        os.dup2(fd, 0)
        os.close(fd)
    sys.argv = [debugpy_dir, *launch["argv"]]
    cli.main()


if __name__ == "__main__":
    main()
