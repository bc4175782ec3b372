"""Writes to stdout and stderr, then exits with code 3."""

import sys

print("hello stdout", flush=True)
print("hello stderr", file=sys.stderr, flush=True)
for i in range(3):
    print(f"line {i}", flush=True)
sys.exit(3)
