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
    assert "helper(x) * 2" in last_fenced_block(text)
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
