from rlvr.graders.code.extract import build_program, last_fenced_block

PROMPT = '''import math


def helper(x: int) -> int:
    return x + 1


def solve(x: int) -> int:
    """Return helper(x) * 2."""
'''


def test_continuation_is_appended_to_the_prompt():
    program = build_program(PROMPT, "    return helper(x) * 2\n", "solve")
    assert program.startswith(PROMPT) and program.endswith("return helper(x) * 2\n")


def test_full_program_keeps_prompt_helpers_but_not_the_stub():
    completion = "def solve(x: int) -> int:\n    return helper(x) * 2\n"
    program = build_program(PROMPT, completion, "solve")
    assert "def helper" in program and program.count("def solve") == 1
    compile(program, "p", "exec")


def test_last_fenced_block_counts():
    text = "first:\n```python\ndef solve(x):\n    return 0\n```\nbetter:\n```python\ndef solve(x):\n    return helper(x) * 2\n```\n"
    block = last_fenced_block(text)
    assert block is not None and "helper(x) * 2" in block
    assert "helper(x) * 2" in build_program(PROMPT, text, "solve")


def test_unterminated_fence_and_other_languages():
    assert last_fenced_block("```python\ndef solve(x):\n    return 1\n") == "def solve(x):\n    return 1\n"
    assert last_fenced_block("```bash\nls\n```") is None


def test_garbage_is_returned_for_the_syntax_layer_to_judge():
    program = build_program(PROMPT, "def solve(:\n", "solve")
    try:
        compile(program, "p", "exec")
        raise AssertionError("should not compile")
    except SyntaxError:
        pass


# ---------------------------------------------------------------- choosing the block by parsing
from rlvr.graders.code.extract import extract_program, fenced_blocks  # noqa: E402

RIGHT = "def solve(x: int) -> int:\n    return helper(x) * 2\n"
WRONG = "def solve(x: int) -> int:\n    return 0\n"


def test_a_program_with_a_fenced_string_is_the_program_not_the_string():
    completion = WRONG + '\n\nDOC = """\n```python\n' + RIGHT + '```\n"""\n'
    extraction = extract_program(PROMPT, completion, "solve")
    assert extraction.origin == "whole" and "return 0" in extraction.program
    assert "return 0" in build_program(PROMPT, "```python\n" + completion + "```\n", "solve")


def test_the_block_that_defines_the_entry_point_is_graded_not_the_last():
    completion = "Solution:\n```python\n" + RIGHT + "```\nUsage:\n```python\nprint(solve(3))\n```\n"
    extraction = extract_program(PROMPT, completion, "solve")
    assert extraction.origin == "block 1 of 2" and extraction.flag == "extracted:block 1 of 2"
    assert "helper(x) * 2" in extraction.program and "print" not in extraction.program


def test_a_later_definition_revises_an_earlier_one():
    completion = "```python\n" + WRONG + "```\nbetter:\n```py\n" + RIGHT + "```\n```\nsolve(1)\n```\n"
    extraction = extract_program(PROMPT, completion, "solve")
    assert extraction.origin == "block 2 of 3" and "helper(x) * 2" in extraction.program


def test_a_fence_inside_a_docstring_does_not_end_the_block():
    body = 'def solve(x: int) -> int:\n    """Doubles.\n\n    ```python\n    solve(1)\n    ```\n    """\n    return helper(x) * 2\n'
    extraction = extract_program(PROMPT, "```python\n" + body + "```\ntext\n", "solve")
    assert extraction.origin == "block 1 of 1" and extraction.program.endswith(body)
    compile(extraction.program, "p", "exec")


def test_a_byte_order_mark_is_dropped():
    assert extract_program(PROMPT, "\ufeff" + RIGHT, "solve").origin == "whole"
    assert "\ufeff" not in build_program(PROMPT, "\ufeff    return helper(x) * 2\n", "solve")
    assert "\ufeff" not in build_program(PROMPT, "```python\n\ufeff" + RIGHT + "```", "solve")


def test_tilde_fences_and_longer_backtick_runs():
    blocks = fenced_blocks("~~~python\na = 1\n~~~\n````\nb = '```'\n````\n")
    assert [b.body for b in blocks] == ["a = 1\n", "b = '```'\n"]


def test_one_fence_reader_for_python_and_plain_markdown():
    """The Python reading lets a fence inside a string literal stay content; the plain reading (used by
    the TypeScript grader) ends a block at its first closing fence; both say whether a block was closed."""
    text = '```python\ns = """\n```\n"""\n```\n```ts\nlet x = 1;\n'
    python = fenced_blocks(text)
    plain = fenced_blocks(text, python_aware=False)
    assert [b.body for b in python] == ['s = """\n```\n"""\n', "let x = 1;\n"]
    # plain: the first ``` closes the block; the next ``` opens an untagged one that runs to the end
    assert [b.body for b in plain] == ['s = """\n', "```ts\nlet x = 1;\n"]
    assert [b.closed for b in python] == [True, False] and [b.closed for b in plain] == [True, False]


def test_many_fences_cannot_make_extraction_parse_without_bound(monkeypatch):
    from rlvr.graders.code import extract

    parsed: list[int] = []
    real = extract.parses

    def counting(source: str):
        parsed.append(len(source))
        return real(source)

    monkeypatch.setattr(extract, "parses", counting)
    hostile = ("```python\n'''\n" + "```\nx\n" * 2000) * 5  # no closer ever gives a body that parses
    blocks = extract.fenced_blocks(hostile)
    assert len(blocks) > 1
    assert sum(parsed) <= extract.PARSE_BUDGET_CHARS + len(hostile)


def test_closing_fences_are_searched_in_linear_time(monkeypatch):
    """Every fence line opens a block; searching the whole rest of the text for each one's closer made a
    completion of many fences quadratic to extract (22 s for 60 KB). The lines the search looks at stay
    within a small multiple of the text's lines."""
    from rlvr.graders.code import extract

    real = extract._closing_fences
    looked_at = [0]

    def counting(lines, start, fence):
        for j in real(lines, start, fence):
            looked_at[0] = looked_at[0] + (j - start + 1)
            start = j + 1
            yield j

    monkeypatch.setattr(extract, "_closing_fences", counting)
    hostile = ("```python\n'''\n" + "```\nx\n" * 2000) * 5
    blocks = extract.fenced_blocks(hostile)
    lines = hostile.count("\n") + 1
    assert len(blocks) > 1000
    assert looked_at[0] <= 4 * lines, (looked_at[0], lines)
