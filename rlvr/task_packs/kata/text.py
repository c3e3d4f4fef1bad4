"""String families."""

from __future__ import annotations

import random
import string

from rlvr.task_packs.kata.base import Variant, family, size_for, word, words

LETTERS = "abcdefghijklmnopqrstuvwxyz"


@family("count_char_class", "strings")
def count_char_class(rng: random.Random, difficulty: int) -> Variant:
    classes = {"vowels": "aeiou", "digits": "0123456789", "the letters x, y and z": "xyz"}
    label = rng.choice(sorted(classes))
    chars = classes[label]
    alphabet = "abcdexyzio0123" + ("ABCDEXYZ !" if difficulty >= 3 else "")
    fold = difficulty >= 3
    description = f"Return how many characters of `text` are {label}" + (
        " (letters count in either case)." if fold else "."
    )
    body = "text.lower()" if fold else "text"
    return Variant(
        "count_matching",
        "def count_matching(text: str) -> int:",
        description,
        f"def count_matching(text: str) -> int:\n    return sum(1 for c in {body} if c in {chars!r})\n",
        lambda r: ("".join(r.choice(alphabet) for _ in range(size_for(difficulty, r) * 2)),),
        lambda n, r: ("".join(r.choice(alphabet) for _ in range(n)),),
        edge_cases=(("",),),
    )


@family("run_length_encode", "strings")
def run_length_encode(rng: random.Random, difficulty: int) -> Variant:
    omit_one = difficulty >= 3
    description = (
        "Run-length encode `text`: each maximal run of one character becomes the character followed by the "
        "run length"
        + (", except that runs of length 1 are written as the character alone." if omit_one else ".")
        + " The empty string encodes to ''."
    )
    count = "(str(n) if n > 1 else '')" if omit_one else "str(n)"
    reference = f"""def run_length_encode(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        j = i
        while j < len(text) and text[j] == text[i]:
            j += 1
        n = j - i
        out.append(text[i] + {count})
        i = j
    return ''.join(out)
"""
    alphabet = "aab" if difficulty <= 2 else "aabbc"

    def sample(r: random.Random) -> tuple[str]:
        return ("".join(r.choice(alphabet) * r.randint(1, 3) for _ in range(size_for(difficulty, r))),)

    return Variant(
        "run_length_encode",
        "def run_length_encode(text: str) -> str:",
        description,
        reference,
        sample,
        lambda n, r: ("".join(r.choice("ab") for _ in range(n)),),
        edge_cases=(("",), ("a",)),
    )


@family("caesar_shift", "strings")
def caesar_shift(rng: random.Random, difficulty: int) -> Variant:
    k = rng.randint(1, 25)
    keep_case = difficulty >= 3
    description = (
        f"Shift every lowercase letter of `text` {k} places forward in the alphabet, wrapping from 'z' to 'a'"
        + ("; uppercase letters shift the same way within 'A'..'Z'" if keep_case else "")
        + "; every other character is unchanged."
    )
    upper = (
        f"        elif 'A' <= c <= 'Z':\n            out.append(chr((ord(c) - 65 + {k}) % 26 + 65))\n"
        if keep_case
        else ""
    )
    reference = f"""def shift_text(text: str) -> str:
    out = []
    for c in text:
        if 'a' <= c <= 'z':
            out.append(chr((ord(c) - 97 + {k}) % 26 + 97))
{upper}        else:
            out.append(c)
    return ''.join(out)
"""
    alphabet = LETTERS + " .!" + (string.ascii_uppercase if difficulty >= 2 else "")
    return Variant(
        "shift_text",
        "def shift_text(text: str) -> str:",
        description,
        reference,
        lambda r: ("".join(r.choice(alphabet) for _ in range(size_for(difficulty, r) * 2)),),
        lambda n, r: ("".join(r.choice(alphabet) for _ in range(n)),),
        edge_cases=(("",), ("zZ",)),
    )


@family("clean_palindrome", "strings")
def clean_palindrome(rng: random.Random, difficulty: int) -> Variant:
    filtered = difficulty >= 2
    description = (
        "Return True if `text` reads the same forwards and backwards"
        + (", ignoring case and every character that is not a letter or digit" if filtered else "")
        + "; the empty string is a palindrome."
    )
    prep = "[c.lower() for c in text if c.isalnum()]" if filtered else "list(text)"
    reference = (
        f"def is_palindrome(text: str) -> bool:\n    chars = {prep}\n    return chars == chars[::-1]\n"
    )
    alphabet = "abA1 ,." if filtered else "ab"

    def sample(r: random.Random) -> tuple[str]:
        half = "".join(r.choice(alphabet) for _ in range(size_for(difficulty, r)))
        if r.random() < 0.5:
            return (half + half[::-1],)
        return (half + r.choice(alphabet) + half[::-1].upper() if filtered else half + "b" + half,)

    return Variant(
        "is_palindrome",
        "def is_palindrome(text: str) -> bool:",
        description,
        reference,
        sample,
        lambda n, r: ("ab" * (n // 2) + "ba" * (n // 2),),
        edge_cases=(("",), ("a",), ("ab",)),
    )


@family("word_frequencies", "strings")
def word_frequencies(rng: random.Random, difficulty: int) -> Variant:
    fold = difficulty >= 3
    description = (
        "Return a dict mapping each word of `text` (words are separated by runs of spaces) to the number "
        "of times it occurs"
        + (", treating words case-insensitively (keys in lowercase)" if fold else "")
        + "."
    )
    prep = "text.lower().split()" if fold else "text.split()"
    reference = f"""def word_counts(text: str) -> dict[str, int]:
    counts: dict[str, int] = {{}}
    for w in {prep}:
        counts[w] = counts.get(w, 0) + 1
    return counts
"""
    vocabulary = ["a", "b", "ab", "Ab", "B", "ba"] if fold else ["a", "b", "ab", "ba", "c"]

    def sample(r: random.Random) -> tuple[str]:
        return ((" " * r.randint(1, 2)).join(r.choice(vocabulary) for _ in range(size_for(difficulty, r))),)

    return Variant(
        "word_counts",
        "def word_counts(text: str) -> dict[str, int]:",
        description,
        reference,
        sample,
        lambda n, r: (" ".join(r.choice(vocabulary) for _ in range(n)),),
        edge_cases=(("",), ("   ",)),
    )


@family("common_prefix", "strings")
def common_prefix(rng: random.Random, difficulty: int) -> Variant:
    reference = """def common_prefix(items: list[str]) -> str:
    if not items:
        return ''
    prefix = items[0]
    for s in items[1:]:
        while not s.startswith(prefix):
            prefix = prefix[:-1]
    return prefix
"""

    def sample(r: random.Random) -> tuple[list[str]]:
        stem = word(r, 0, 4, "ab")
        return ([stem + word(r, 0, 3, "ab") for _ in range(size_for(difficulty, r))],)

    return Variant(
        "common_prefix",
        "def common_prefix(items: list[str]) -> str:",
        "Return the longest string that every string in `items` starts with ('' for an empty list).",
        reference,
        sample,
        lambda n, r: (["ab" * 8 + word(r, 1, 3, "ab") for _ in range(n)],),
        edge_cases=(([],), ([""],), (["abc"],)),
    )


@family("balanced_brackets", "parsing")
def balanced_brackets(rng: random.Random, difficulty: int) -> Variant:
    kinds = "()[]{}"[: 2 * min(3, 1 + difficulty // 2)]
    pairs = {kinds[i]: kinds[i + 1] for i in range(0, len(kinds), 2)}
    description = (
        f"Return True if the brackets {' '.join(kinds)} in `text` are balanced and properly nested; "
        "other characters are ignored."
    )
    reference = f"""def balanced(text: str) -> bool:
    pairs = {pairs!r}
    closing = {{v: k for k, v in pairs.items()}}
    stack = []
    for c in text:
        if c in pairs:
            stack.append(c)
        elif c in closing:
            if not stack or stack.pop() != closing[c]:
                return False
    return not stack
"""
    alphabet = kinds + "x"

    def sample(r: random.Random) -> tuple[str]:
        if r.random() < 0.5:  # build a balanced one, maybe break it
            out = ""
            for _ in range(size_for(difficulty, r)):
                o = r.choice(sorted(pairs))
                out = r.choice([o + out + pairs[o], out + o + pairs[o]])
            if r.random() < 0.3 and out:
                i = r.randrange(len(out))
                out = out[:i] + out[i + 1 :]
            return (out,)
        return ("".join(r.choice(alphabet) for _ in range(size_for(difficulty, r))),)

    return Variant(
        "balanced",
        "def balanced(text: str) -> bool:",
        description,
        reference,
        sample,
        lambda n, r: ("(" * n + ")" * n,),
        edge_cases=(("",), (")(",), ("(",)),
    )


@family("reverse_words", "strings", split="test")
def reverse_words(rng: random.Random, difficulty: int) -> Variant:
    each = difficulty >= 3
    description = (
        "Return the words of `text` (separated by runs of spaces) in reverse order, joined by single spaces"
        + ", with each word also spelled backwards" * each
        + "."
    )
    item = "w[::-1]" if each else "w"
    reference = (
        f"def reverse_words(text: str) -> str:\n    return ' '.join({item} for w in reversed(text.split()))\n"
    )
    return Variant(
        "reverse_words",
        "def reverse_words(text: str) -> str:",
        description,
        reference,
        lambda r: ((" " * r.randint(1, 2)).join(words(r, size_for(difficulty, r))),),
        lambda n, r: (" ".join(words(r, n)),),
        edge_cases=(("",), ("  a  ",)),
    )


@family("parse_key_values", "parsing")
def parse_key_values(rng: random.Random, difficulty: int) -> Variant:
    pair_sep = rng.choice([";", ",", "&"])
    kv_sep = rng.choice(["=", ":"])
    description = (
        f"`text` holds entries separated by {pair_sep!r}, each `key{kv_sep}value` with an integer value. "
        "Return a dict from key to value"
        + (
            " (surrounding spaces of keys and values are ignored; empty entries are skipped)"
            if difficulty >= 3
            else ""
        )
        + "; a repeated key keeps its last value."
    )
    strip = ".strip()" if difficulty >= 3 else ""
    skip = (
        "        if not entry.strip():\n            continue\n"
        if difficulty >= 3
        else "        if not entry:\n            continue\n"
    )
    reference = f"""def parse_pairs(text: str) -> dict[str, int]:
    out: dict[str, int] = {{}}
    for entry in text.split({pair_sep!r}):
{skip}        key, _, value = entry.partition({kv_sep!r})
        out[key{strip}] = int(value{strip})
    return out
"""

    def sample(r: random.Random) -> tuple[str]:
        pad = " " if difficulty >= 3 and r.random() < 0.5 else ""
        entries = [
            f"{pad}{word(r, 1, 3)}{pad}{kv_sep}{pad}{r.randint(-99, 99)}"
            for _ in range(size_for(difficulty, r))
        ]
        return (pair_sep.join(entries),)

    return Variant(
        "parse_pairs",
        "def parse_pairs(text: str) -> dict[str, int]:",
        description,
        reference,
        sample,
        lambda n, r: (pair_sep.join(f"{word(r, 2, 4)}{kv_sep}{r.randint(0, 9)}" for _ in range(n)),),
        edge_cases=(("",),),
    )


@family("evaluate_rpn", "parsing", split="test")
def evaluate_rpn(rng: random.Random, difficulty: int) -> Variant:
    ops = "+-*" if difficulty < 4 else "+-*/"
    description = (
        "Evaluate a reverse Polish notation expression given as space-separated tokens: integers and the "
        f"operators {' '.join(ops)}"
        + (" ('/' is integer division rounding toward zero)" if "/" in ops else "")
        + ". The expression is well formed. Return the integer result."
    )
    reference = """def evaluate_rpn(expression: str) -> int:
    stack: list[int] = []
    for token in expression.split():
        if token in ('+', '-', '*', '/'):
            b = stack.pop()
            a = stack.pop()
            if token == '+':
                stack.append(a + b)
            elif token == '-':
                stack.append(a - b)
            elif token == '*':
                stack.append(a * b)
            else:
                q = abs(a) // abs(b)
                stack.append(q if (a >= 0) == (b > 0) else -q)
        else:
            stack.append(int(token))
    return stack[0]
"""

    def sample(r: random.Random) -> tuple[str]:
        tokens = [str(r.randint(-9, 9))]
        for _ in range(size_for(difficulty, r)):
            op = r.choice(ops)
            value = r.randint(1, 9) if op == "/" else r.randint(-9, 9)
            tokens += [str(value), op]
        return (" ".join(tokens),)

    return Variant(
        "evaluate_rpn",
        "def evaluate_rpn(expression: str) -> int:",
        description,
        reference,
        sample,
        lambda n, r: (" ".join(["1"] + ["1 +"] * n),),
        edge_cases=(("7",), ("-3",)),
    )
