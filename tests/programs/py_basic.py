"""Nested data, a loop and a few functions, for stepping and inspection."""

import sys

CONFIG = {"name": "demo", "sizes": [1, 2, 3], "limits": {"low": 0, "high": 10}}


class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y


def scale(value, factor):
    result = value * factor  # @scale
    return result


def total(values):
    acc = 0
    for i, v in enumerate(values):
        acc += scale(v, 2)  # @loop-body
    return acc


def main():
    point = Point(3, 4)
    items = [point, {"nested": [1, 2, {"deep": True}]}, "text"]

    count = 0
    # @no-code: a comment line
    answer = total(CONFIG["sizes"])  # @call-total
    for n in range(5):
        count += n  # @count
    print(f"answer={answer} count={count} items={len(items)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
