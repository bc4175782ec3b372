"""Raises an exception nobody catches."""


def check(value):
    if value > 2:
        raise ValueError(f"bad value {value}")  # @raise
    return value


def main():
    for v in range(5):
        check(v)


main()
