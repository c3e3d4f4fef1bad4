"""Input domains of HumanEval's generated hidden tests: each precondition rejects the inputs the
docstring does not promise (the ones that failed independently written correct solutions) and
keeps the ones it does; the closest-pair relation accepts every correct tie-break."""

from __future__ import annotations

import pytest

from rlvr.graders.code.properties.preconditions import HUMANEVAL_PRECONDITIONS, HUMANEVAL_RELATIONS

CASES = [
    # task, out-of-domain input (made a correct program fail), in-domain input
    ("HumanEval/1", (")(( )(( ) () (",), ("( ) (( )) (( )( ))",)),
    ("HumanEval/6", (" ) ()(( ( )  (",), ("(()()) ((())) () ((())()())",)),
    ("HumanEval/67", ("gs0dsyf041zs78ykajvtuz", 3), ("5 apples and 6 oranges", 19)),
    ("HumanEval/67", ("5 apples and 6 oranges", 10), ("0 apples and 1 oranges", 3)),
    ("HumanEval/78", ([2],), ("ABED1A33",)),
    ("HumanEval/91", ("I love It ; I",), ("I love It ! I",)),
    ("HumanEval/94", ([1],), ([0, 81, 12, 3, 1, 21],)),
    ("HumanEval/95", ({"a1": 1, "b": 2},), ({"a": "apple", 8: "banana"},)),
    ("HumanEval/111", ("b ",), ("a b b a",)),
    ("HumanEval/119", (["(", "(", "("],), (["()(", ")"],)),
    ("HumanEval/124", ("04-12-5",), ("03-11-2000",)),
    ("HumanEval/124", (" 03-11-2000",), ("06/04/2020",)),
    ("HumanEval/125", (",o",), ("Hello,world!",)),
    ("HumanEval/125", ("a\tb",), ("Hello world!",)),
    ("HumanEval/160", (["/", "/", "/"], [2, 3, 4, 5]), (["+", "*", "-"], [2, 3, 4, 5])),
    ("HumanEval/116", ([-2, -3],), ([1, 5, 2, 3, 4],)),
    ("HumanEval/17", ("o o|  .|",), ("o o| .| o| o| .| .| .| .| o o",)),
    ("HumanEval/19", ("three ten",), ("three one five",)),
]


@pytest.mark.parametrize(("task_id", "outside", "inside"), CASES)
def test_precondition_drops_inputs_the_docstring_does_not_promise(task_id, outside, inside) -> None:
    precondition = HUMANEVAL_PRECONDITIONS[task_id]
    assert not precondition(*outside)
    assert precondition(*inside)


def test_closest_pair_accepts_either_tie_and_rejects_wrong_pairs() -> None:
    relation = HUMANEVAL_RELATIONS["HumanEval/20"]
    values = ([5.5, 4.5, 5.5, 4.5],)
    assert relation(values, (5.5, 5.5), (4.5, 4.5))
    assert relation(values, (5.5, 5.5), (5.5, 5.5))
    assert not relation(values, (5.5, 5.5), (4.5, 5.5))  # farther apart
    assert not relation(([1.0, 2.0, 3.0],), (1.0, 2.0), (2.0, 2.0))  # 2.0 occurs once
    assert not relation(([1.0, 2.0, 3.0],), (1.0, 2.0), (2.0, 1.0))  # not in order
    assert not relation(([1.0, 2.0, 3.0],), (1.0, 2.0), [1.0, 2.0])  # wrong type
