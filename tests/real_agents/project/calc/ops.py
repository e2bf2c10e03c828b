"""Arithmetic helpers."""


def add(a, b):
    return a + b


def divide(a, b):
    """Divide a by b; dividing by zero returns None."""
    return a / b
