"""A module-level loop before a breakpoint, run twice: on Python 3.12+ pydevd's
pure-Python tracer sees its lines disabled while nothing steps, and enabled
again for each stop and step."""

import sys

LOOP = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000


def add(a, b):
    c = a + b  # @add
    return c  # @add-return


total = 0
for rnd in range(2):  # @outer
    for i in range(LOOP):  # @inner
        total += i  # @body
        seen = i  # @seen
    total = add(total, rnd)  # @after
print("total", total)  # @print
