"""Tests of a small module, one passing, one failing assertion, one error."""


def add(a, b):
    return a - b


def test_ok():
    assert add(0, 0) == 0


def test_add():
    result = add(2, 3)
    assert result == 5  # @assert


def test_error():
    data = {}
    return data["missing"]  # @error
