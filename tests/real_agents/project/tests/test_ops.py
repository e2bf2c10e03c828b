from calc.ops import add, divide


def test_add():
    assert add(2, 3) == 5


def test_divide():
    assert divide(10, 4) == 2.5


def test_divide_by_zero_returns_none():
    assert divide(1, 0) is None
