"""Django's autoreloader, in small: the parent re-executes itself as a child
(RUN_MAIN set) and waits; the child serves."""
import os
import subprocess
import sys


def serve():
    port = 8000
    print("serving on", port)  # @serve
    return port  # @serve-return


if os.environ.get("RUN_MAIN") == "true":
    serve()
else:
    subprocess.run([sys.executable, *sys.argv], env={**os.environ, "RUN_MAIN": "true"})
    print("reloader done")
