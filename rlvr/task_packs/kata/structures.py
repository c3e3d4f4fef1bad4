"""Dict, interval and graph families."""

from __future__ import annotations

import random

from rlvr.task_packs.kata.base import Variant, family, size_for, word, words


@family("invert_dict", "dicts")
def invert_dict(rng: random.Random, difficulty: int) -> Variant:
    reference = """def invert(mapping: dict[str, int]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for key, value in mapping.items():
        out.setdefault(value, []).append(key)
    return {value: sorted(keys) for value, keys in out.items()}
"""
    return Variant(
        "invert",
        "def invert(mapping: dict[str, int]) -> dict[int, list[str]]:",
        "Return a dict from each value of `mapping` to the sorted list of keys that map to it.",
        reference,
        lambda r: ({word(r, 1, 3): r.randint(0, 3) for _ in range(size_for(difficulty, r))},),
        lambda n, r: ({f"k{i}": r.randint(0, n // 4) for i in range(n)},),
        edge_cases=(({},),),
    )


@family("group_by_length", "dicts")
def group_by_length(rng: random.Random, difficulty: int) -> Variant:
    unique = difficulty >= 3
    description = (
        "Group the strings of `items` by length: return a dict from length to the strings of that length, "
        "in their original order" + (", each string listed once (first occurrence)" if unique else "") + "."
    )
    check = "        if s in out.setdefault(len(s), []):\n            continue\n" if unique else ""
    reference = f"""def group_by_length(items: list[str]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {{}}
    for s in items:
{check}        out.setdefault(len(s), []).append(s)
    return out
"""
    return Variant(
        "group_by_length",
        "def group_by_length(items: list[str]) -> dict[int, list[str]]:",
        description,
        reference,
        lambda r: ([word(r, 0, 3, "ab") for _ in range(size_for(difficulty, r))],),
        lambda n, r: (words(r, n),),
        edge_cases=(([],), (["", ""],)),
    )


@family("merge_counts", "dicts", split="test")
def merge_counts(rng: random.Random, difficulty: int) -> Variant:
    drop_zero = difficulty >= 3
    description = (
        "Return the key-wise sum of the dicts in `counts` (a key missing from a dict counts as 0)"
        + ("; keys whose total is 0 are left out." if drop_zero else ".")
    )
    tail = "    return {k: v for k, v in total.items() if v != 0}\n" if drop_zero else "    return total\n"
    reference = f"""def merge_counts(counts: list[dict[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {{}}
    for mapping in counts:
        for key, value in mapping.items():
            total[key] = total.get(key, 0) + value
{tail}"""
    return Variant(
        "merge_counts",
        "def merge_counts(counts: list[dict[str, int]]) -> dict[str, int]:",
        description,
        reference,
        lambda r: (
            [
                {word(r, 1, 1, "abc"): r.randint(-2, 2) for _ in range(r.randint(0, 3))}
                for _ in range(size_for(difficulty, r))
            ],
        ),
        lambda n, r: ([{f"k{r.randint(0, 9)}": 1} for _ in range(n)],),
        edge_cases=(([],), ([{}],)),
    )


def _intervals(r: random.Random, n: int, span: int = 20) -> list[list[int]]:
    out = []
    for _ in range(n):
        a = r.randint(0, span)
        out.append([a, a + r.randint(0, 5)])
    return out


@family("merge_intervals", "intervals")
def merge_intervals(rng: random.Random, difficulty: int) -> Variant:
    touching = difficulty >= 3
    description = (
        "Merge the closed intervals [start, end] (start <= end) of `intervals` into a sorted list of disjoint "
        "intervals; intervals that overlap"
        + (" or touch (one ends where the next starts)" if touching else "")
        + " are merged"
        + ("" if touching else " (touching intervals such as [1, 2] and [2, 3] overlap at 2)")
        + "."
    )
    reference = """def merge_intervals(intervals: list[list[int]]) -> list[list[int]]:
    out: list[list[int]] = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return out
"""
    return Variant(
        "merge_intervals",
        "def merge_intervals(intervals: list[list[int]]) -> list[list[int]]:",
        description,
        reference,
        lambda r: (_intervals(r, size_for(difficulty, r)),),
        lambda n, r: (_intervals(r, n, 10 * n),),
        edge_cases=(([],), ([[1, 2], [2, 3]],), ([[5, 5]],)),
    )


@family("interval_coverage", "intervals", split="test")
def interval_coverage(rng: random.Random, difficulty: int) -> Variant:
    reference = """def covered_length(intervals: list[list[int]]) -> int:
    total = 0
    reach = None
    for start, end in sorted(intervals):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total
"""
    return Variant(
        "covered_length",
        "def covered_length(intervals: list[list[int]]) -> int:",
        "Return the total length of the number line covered by the half-open intervals [start, end) in "
        "`intervals` (start <= end); overlaps count once.",
        reference,
        lambda r: (_intervals(r, size_for(difficulty, r)),),
        lambda n, r: (_intervals(r, n, 10 * n),),
        edge_cases=(([],), ([[3, 3]],)),
    )


def _edges(r: random.Random, n: int, m: int, directed_acyclic: bool = False) -> list[list[int]]:
    out = []
    for _ in range(m):
        u, v = r.randrange(n), r.randrange(n)
        if directed_acyclic:
            if u == v:
                continue
            u, v = min(u, v), max(u, v)
        out.append([u, v])
    return out


@family("count_components", "graphs")
def count_components(rng: random.Random, difficulty: int) -> Variant:
    reference = """def count_components(n: int, edges: list[list[int]]) -> int:
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    components = n
    for u, v in edges:
        ru, rv = find(u), find(v)
        if ru != rv:
            parent[ru] = rv
            components -= 1
    return components
"""

    def sample(r: random.Random) -> tuple:
        n = r.randint(1, 2 + 2 * difficulty)
        return (n, _edges(r, n, r.randint(0, n)))

    return Variant(
        "count_components",
        "def count_components(n: int, edges: list[list[int]]) -> int:",
        "An undirected graph has vertices 0..n-1 and the given edges [u, v]. Return its number of connected components.",
        reference,
        sample,
        lambda n, r: (n, [[i, i + 1] for i in range(n - 1)]),
        edge_cases=((1, []), (3, [[0, 0]])),
    )


@family("shortest_path", "graphs")
def shortest_path(rng: random.Random, difficulty: int) -> Variant:
    directed = difficulty >= 3
    description = (
        f"A{' directed' if directed else 'n undirected'} graph has vertices 0..n-1 and edges [u, v]"
        + (" (from u to v)" if directed else "")
        + ". Return the number of edges on a shortest path from `source` to `target`, or -1 if there is none."
    )
    back = "" if directed else "        adjacency[v].append(u)\n"
    reference = f"""from collections import deque


def shortest_path(n: int, edges: list[list[int]], source: int, target: int) -> int:
    adjacency: list[list[int]] = [[] for _ in range(n)]
    for u, v in edges:
        adjacency[u].append(v)
{back}    distance = {{source: 0}}
    queue = deque([source])
    while queue:
        u = queue.popleft()
        if u == target:
            return distance[u]
        for v in adjacency[u]:
            if v not in distance:
                distance[v] = distance[u] + 1
                queue.append(v)
    return -1
"""

    def sample(r: random.Random) -> tuple:
        n = r.randint(1, 2 + 2 * difficulty)
        return (n, _edges(r, n, r.randint(0, 2 * n)), r.randrange(n), r.randrange(n))

    return Variant(
        "shortest_path",
        "def shortest_path(n: int, edges: list[list[int]], source: int, target: int) -> int:",
        description,
        reference,
        sample,
        lambda n, r: (n, [[i, i + 1] for i in range(n - 1)], 0, n - 1),
        edge_cases=((1, [], 0, 0), (2, [], 0, 1)),
    )


@family("topological_sort", "graphs", split="test")
def topological_sort(rng: random.Random, difficulty: int) -> Variant:
    reference = """def topological_order(n: int, edges: list[list[int]]) -> list[int] | None:
    indegree = [0] * n
    adjacency: list[list[int]] = [[] for _ in range(n)]
    for u, v in edges:
        adjacency[u].append(v)
        indegree[v] += 1
    ready = [v for v in range(n) if indegree[v] == 0]
    order = []
    while ready:
        u = ready.pop()
        order.append(u)
        for v in adjacency[u]:
            indegree[v] -= 1
            if indegree[v] == 0:
                ready.append(v)
    return order if len(order) == n else None
"""

    def sample(r: random.Random) -> tuple:
        n = r.randint(1, 2 + 2 * difficulty)
        edges = _edges(r, n, r.randint(0, 2 * n), directed_acyclic=r.random() < 0.8)
        return (n, edges)

    return Variant(
        "topological_order",
        "def topological_order(n: int, edges: list[list[int]]) -> list[int] | None:",
        "A directed graph has vertices 0..n-1 and edges [u, v] from u to v. Return any ordering of all "
        "vertices in which every edge goes from an earlier to a later vertex, or None if the graph has a cycle.",
        reference,
        sample,
        lambda n, r: (n, [[i, i + 1] for i in range(n - 1)]),
        relation="topological_order",
        edge_cases=((1, []), (2, [[0, 1], [1, 0]])),
    )
