"""Stateful-class families: hidden tests are method sequences (hypothesis stateful testing)."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st

from rlvr.specs.methods import MethodRule
from rlvr.task_packs.kata.base import ClassVariant, family

SMALL = st.integers(-9, 9)


def _ops(*operations: tuple[str, list[Any]]) -> list[list[Any]]:
    return [[name, args] for name, args in operations]


@family("min_stack", "classes")
def min_stack(rng: random.Random, difficulty: int) -> ClassVariant:
    with_min = difficulty >= 2
    stub = f'''class MinStack:
    """A stack of integers.

    push(x) adds x on top; pop() removes and returns the top (IndexError if empty); top() returns the
    top without removing it (IndexError if empty); size() returns the number of elements.{
        """
    min() returns the smallest element in the stack in O(1) time (IndexError if empty)."""
        if with_min
        else ""
    }
    """

    def __init__(self) -> None: ...
    def push(self, x: int) -> None: ...
    def pop(self) -> int: ...
    def top(self) -> int: ...
    def size(self) -> int: ...{
        """
    def min(self) -> int: ..."""
        if with_min
        else ""
    }
'''
    reference = """class MinStack:
    def __init__(self) -> None:
        self.items: list[int] = []
        self.mins: list[int] = []

    def push(self, x: int) -> None:
        self.items.append(x)
        self.mins.append(x if not self.mins else min(x, self.mins[-1]))

    def pop(self) -> int:
        if not self.items:
            raise IndexError("pop from empty stack")
        self.mins.pop()
        return self.items.pop()

    def top(self) -> int:
        if not self.items:
            raise IndexError("top of empty stack")
        return self.items[-1]

    def size(self) -> int:
        return len(self.items)

    def min(self) -> int:
        if not self.mins:
            raise IndexError("min of empty stack")
        return self.mins[-1]
"""
    rules = [
        MethodRule("push", st.tuples(SMALL)),
        MethodRule("pop"),
        MethodRule("top"),
        MethodRule("size"),
    ] + ([MethodRule("min")] if with_min else [])

    def growth(n: int, r: random.Random) -> tuple[list[list[Any]]]:
        pushes = [("push", [r.randint(-100, 100)]) for _ in range(n)]
        reads = [("min" if with_min else "top", []) for _ in range(n)]
        return (_ops(("__init__", []), *pushes, *reads),)

    return ClassVariant("MinStack", "stack with min", stub, reference, st.just(()), rules, growth)


@family("bounded_queue", "classes")
def bounded_queue(rng: random.Random, difficulty: int) -> ClassVariant:
    stub = '''class BoundedQueue:
    """A first-in first-out queue holding at most `capacity` integers (capacity >= 1).

    enqueue(x) appends x and returns True, or returns False (and changes nothing) when full;
    dequeue() removes and returns the oldest element, or None when empty; size() returns the count;
    peek() returns the oldest element without removing it, or None when empty.
    """

    def __init__(self, capacity: int) -> None: ...
    def enqueue(self, x: int) -> bool: ...
    def dequeue(self) -> int | None: ...
    def size(self) -> int: ...
    def peek(self) -> int | None: ...
'''
    reference = """from collections import deque


class BoundedQueue:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.items: deque[int] = deque()

    def enqueue(self, x: int) -> bool:
        if len(self.items) >= self.capacity:
            return False
        self.items.append(x)
        return True

    def dequeue(self) -> int | None:
        return self.items.popleft() if self.items else None

    def size(self) -> int:
        return len(self.items)

    def peek(self) -> int | None:
        return self.items[0] if self.items else None
"""
    rules = [
        MethodRule("enqueue", st.tuples(SMALL)),
        MethodRule("dequeue"),
        MethodRule("size"),
        MethodRule("peek"),
    ]

    def growth(n: int, r: random.Random) -> tuple[list[list[Any]]]:
        return (
            _ops(
                ("__init__", [n]), *[("enqueue", [i]) for i in range(n)], *[("dequeue", []) for _ in range(n)]
            ),
        )

    return ClassVariant(
        "BoundedQueue",
        "bounded FIFO queue",
        stub,
        reference,
        st.tuples(st.integers(1, 1 + difficulty)),
        rules,
        growth,
    )


@family("lru_cache", "classes", split="test")
def lru_cache(rng: random.Random, difficulty: int) -> ClassVariant:
    stub = '''class LRUCache:
    """A key-value cache holding at most `capacity` entries (capacity >= 1).

    get(key) returns the value stored for key, or -1 if absent; a successful get makes the key the
    most recently used. put(key, value) stores the value (making key the most recently used); when
    this adds a new key to a full cache, the least recently used key is evicted first.
    Both operations must run in O(1) time.
    """

    def __init__(self, capacity: int) -> None: ...
    def get(self, key: int) -> int: ...
    def put(self, key: int, value: int) -> None: ...
'''
    reference = """from collections import OrderedDict


class LRUCache:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.entries: OrderedDict[int, int] = OrderedDict()

    def get(self, key: int) -> int:
        if key not in self.entries:
            return -1
        self.entries.move_to_end(key)
        return self.entries[key]

    def put(self, key: int, value: int) -> None:
        if key in self.entries:
            self.entries.move_to_end(key)
        elif len(self.entries) >= self.capacity:
            self.entries.popitem(last=False)
        self.entries[key] = value
"""
    keys = st.integers(0, 2 + difficulty)
    rules = [MethodRule("get", st.tuples(keys)), MethodRule("put", st.tuples(keys, SMALL))]

    def growth(n: int, r: random.Random) -> tuple[list[list[Any]]]:
        ops = [("put", [i, i]) for i in range(n)] + [("get", [r.randrange(n)]) for _ in range(n)]
        return (_ops(("__init__", [n // 2]), *ops),)

    return ClassVariant(
        "LRUCache", "LRU cache", stub, reference, st.tuples(st.integers(1, 1 + difficulty)), rules, growth
    )


@family("bank_account", "classes")
def bank_account(rng: random.Random, difficulty: int) -> ClassVariant:
    with_history = difficulty >= 3
    stub = f'''class Account:
    """A bank account with an integer balance, starting at `opening` (>= 0).

    deposit(amount) adds amount; withdraw(amount) subtracts it. Both raise ValueError (and change
    nothing) if amount <= 0, and withdraw also raises ValueError if amount exceeds the balance.
    balance() returns the current balance.{
        """
    history() returns the list of successful changes so far: +amount for deposits, -amount for
    withdrawals, oldest first."""
        if with_history
        else ""
    }
    """

    def __init__(self, opening: int) -> None: ...
    def deposit(self, amount: int) -> None: ...
    def withdraw(self, amount: int) -> None: ...
    def balance(self) -> int: ...{
        """
    def history(self) -> list[int]: ..."""
        if with_history
        else ""
    }
'''
    reference = """class Account:
    def __init__(self, opening: int) -> None:
        self.amount = opening
        self.changes: list[int] = []

    def deposit(self, amount: int) -> None:
        if amount <= 0:
            raise ValueError("deposit must be positive")
        self.amount += amount
        self.changes.append(amount)

    def withdraw(self, amount: int) -> None:
        if amount <= 0 or amount > self.amount:
            raise ValueError("invalid withdrawal")
        self.amount -= amount
        self.changes.append(-amount)

    def balance(self) -> int:
        return self.amount

    def history(self) -> list[int]:
        return list(self.changes)
"""
    amounts = st.integers(-2, 12)
    rules = [
        MethodRule("deposit", st.tuples(amounts)),
        MethodRule("withdraw", st.tuples(amounts)),
        MethodRule("balance"),
    ] + ([MethodRule("history")] if with_history else [])

    def growth(n: int, r: random.Random) -> tuple[list[list[Any]]]:
        return (
            _ops(("__init__", [0]), *[("deposit", [1 + r.randrange(5)]) for _ in range(n)], ("balance", [])),
        )

    return ClassVariant(
        "Account", "bank account", stub, reference, st.tuples(st.integers(0, 10)), rules, growth
    )
