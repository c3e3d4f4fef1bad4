"""Find the final answer in a math completion.

Order: the last `\\boxed{...}` (or `\\fbox{...}`, nested braces allowed); else the last line that starts
with `Answer:` / `Final answer:` / `The answer is` or `####`; else, when the whole completion is one short
line that is only an answer (`3/4`, `$x = 2$`, `(1, 2)`: no prose), that line. No answer → None (the
grader's format gate fails).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

_BOX_COMMANDS = ("\\boxed", "\\fbox")
# Possessive `\s*+` / `\s++`: these run in the trusted process on untrusted text, and adjacent plain `\s*` runs
# backtrack cubically on a line that does not match (`answer` + 2,000 spaces took 30 s).
_ANSWER_LINE = re.compile(
    r"^\s*+(?:[*_]{0,2})\s*+(?:the\s++)?(?:final\s++)?answer\s*+(?:is)?\s*+(?:[*_]{0,2})\s*+[:：]\s*+(?:[*_]{0,2})"
    r"(?P<answer>.+?)\s*$",
    re.IGNORECASE,
)
_HASH_LINE = re.compile(r"^\s*+####\s*+(?P<answer>.+?)\s*$")
_ANSWER_IS = re.compile(r"^.*?\b(?:final\s++)?answer\s++is\s*+:?\s*+(?P<answer>.+?)\s*$", re.IGNORECASE)
_PROSE_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{4,}")
MAX_BARE_CHARS = 120
_MATHY = re.compile(r"[0-9\\^=<>+*/()\[\]{}|≤≥π∞√-]")
# What plain math is written with: printable ASCII plus a few math symbols.
MATH_CHARACTERS = frozenset(map(chr, range(32, 127))) | frozenset("\t≤≥≠±·×÷−π∞√°∈∪≈∼≃≅≡∝≪≫≲≳")
_POWER_TOWER = re.compile(r"\d+(?:\s*(?:\^|\*\*)\s*[{(]?\s*\d+)+")
_FACTORIAL = re.compile(r"(\d+)\s*!")
MAX_ANSWER_DIGITS = 5000


def _brace_pairs(text: str) -> dict[int, int]:
    """Each unescaped `{` that closes, mapped to its `}`: one pass, so a completion of thousands of unclosed
    `\\boxed{` is not rescanned to its end once per box (quadratic, in the trusted process)."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for index, char in enumerate(text):
        if index and text[index - 1] == "\\":
            continue
        if char == "{":
            stack.append(index)
        elif char == "}" and stack:
            pairs[stack.pop()] = index
    return pairs


def _balanced_group(text: str, start: int, pairs: dict[int, int]) -> str | None:
    """The content of the `{...}` group that opens at `start` (`pairs` = `_brace_pairs(text)`), or None if it
    never closes."""
    close = pairs.get(start)
    return None if close is None else text[start + 1 : close]


def last_boxed(text: str) -> str | None:
    """The content of the last complete `\\boxed{...}`; `\\boxed 5` (no braces) takes one token."""
    ends = sorted(m.end() for command in _BOX_COMMANDS for m in re.finditer(re.escape(command), text))
    pairs = _brace_pairs(text)
    for end in reversed(ends):
        rest = text[end:]
        stripped = rest.lstrip()
        if stripped.startswith("{"):
            content = _balanced_group(text, end + (len(rest) - len(stripped)), pairs)
            if content is not None:
                return content.strip()
        elif rest[:1] == " " and stripped:
            token = re.match(r"[^\s$]+", stripped)
            if token:
                return token.group(0)
    return None


def _clean_line_answer(answer: str) -> str:
    """Drop markdown emphasis and a sentence-ending period ("5." is still 5)."""
    answer = answer.strip().strip("*_").strip()
    return answer.removesuffix(".").rstrip()


def _bare_answer(text: str) -> str | None:
    """A completion that is nothing but an answer: one short line, at most two long words outside LaTeX."""
    line = text.strip()
    if not line or len(line) > MAX_BARE_CHARS or not set(line) <= MATH_CHARACTERS:
        return None
    if any(command in line for command in _BOX_COMMANDS):  # a box that never closed is a format error
        return None
    if len(_PROSE_WORD.findall(re.sub(r"\\text\{[^{}]*\}", "", line))) > 2:
        return None
    if not _MATHY.search(line) and len(line.split()) > 2:  # words only: at most a short name ("New York")
        return None
    return _clean_line_answer(line)


@dataclass(frozen=True)
class Extraction:
    """What a completion states as its final answer.

    `source`: boxed | boxes (several adjacent boxes read as one list) | answer_line | bare | prose (no marker:
    the text to search, which the math worker does with math-verify's extraction) | none. `flags` name what
    the extraction noticed (`conflicting_boxes`: boxes elsewhere in the text disagree with the final one)."""

    answer: str | None
    source: str
    flags: tuple[str, ...] = ()

    @property
    def needs_search(self) -> bool:
        return self.source == "prose"


@dataclass(frozen=True)
class _Box:
    start: int
    end: int
    content: str


def all_boxes(text: str) -> list[_Box]:
    """Every complete `\\boxed{...}` / `\\fbox{...}` (nested braces allowed; `\\boxed 5` takes one token)."""
    found: list[_Box] = []
    starts = sorted(
        (m.start(), m.end()) for command in _BOX_COMMANDS for m in re.finditer(re.escape(command), text)
    )
    pairs = _brace_pairs(text)
    for start, end in starts:
        if found and start < found[-1].end:
            continue  # a box inside a box: the outer one counts
        rest = text[end:]
        stripped = rest.lstrip()
        if stripped.startswith("{"):
            open_at = end + (len(rest) - len(stripped))
            content = _balanced_group(text, open_at, pairs)
            if content is not None:
                found.append(_Box(start, open_at + len(content) + 2, content.strip()))
        elif rest[:1] == " " and stripped:
            token = re.match(r"[^\s$]+", stripped)
            if token:
                token_start = end + (len(rest) - len(stripped))
                found.append(_Box(start, token_start + token.end(), token.group(0)))
    return found


# what may stand between two boxes of one answer: `\boxed{1}, \boxed{2}`, `\boxed{(2, 2)} \quad \text{and}
# \quad \boxed{(6, 2)}`, `y_1 = \boxed{..} \) and \( y_2 = \boxed{..}`
_BOX_GAP = re.compile(
    r"^(?:\s|[,;&.]|\$|\\[()\[\]]|\\\\|\\q?quad|\\[,;:! ]|~|\band\b|\bor\b"
    r"|\\text\s*\{[^{}]{0,40}\}|[A-Za-z](?:_\{?\w{1,3}\}?)?\s*=)*$"
)


def _compact(text: str) -> str:
    return re.sub(r"\s+", "", text)


_PROSE_GAP = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}")
# in a reference only: a box's unit or label, then a list connective: `\boxed{1} papers and \boxed{2} bins`
_LABELLED_GAP = re.compile(r"^\s*(?:[A-Za-z]{2,20}\s+){1,2}(?:and|,)\s*$|^\s*(?:[A-Za-z]{2,20}\s*)?,\s*$")


def answer_from_boxes(text: str, boxes: list[_Box], rule: str, *, reference: bool = False) -> Extraction:
    """The answer several boxes give. Boxes separated only by punctuation, `and`, `\\quad` or a short
    `\\text{}` form one list answer; earlier boxes must repeat it or one of its items. A `reference`
    (trusted text) also joins boxes separated by any text without words (`\\boxed{1} ++ \\boxed{2}`) and
    boxes each followed by a unit or label and a list connective (`\\boxed{1} papers and \\boxed{2} bins`:
    the parts of one answer, in order). Prose between a reference's boxes (`\\boxed{1} no no no \\boxed{2}`)
    still ends the list, and an answer's boxes never join across words: there, words between boxes are
    where a hedge hides (`\\boxed{5} or maybe \\boxed{6}`)."""
    if rule == "first":
        return Extraction(boxes[0].content, "boxed")
    if rule == "last" or len(boxes) == 1:
        return Extraction(boxes[-1].content, "boxed")
    run = [boxes[-1]]
    for box in reversed(boxes[:-1]):
        gap = text[box.end : run[0].start]
        trusted_gap = reference and (not _PROSE_GAP.search(gap) or _LABELLED_GAP.match(gap))
        if not (_BOX_GAP.match(gap) or trusted_gap):
            break
        run.insert(0, box)
    if len({_compact(box.content) for box in run}) == 1:
        run = run[-1:]  # the same answer boxed twice in a row is one answer
    answer = run[0].content if len(run) == 1 else ", ".join(box.content for box in run)
    final = {_compact(answer)} | {_compact(box.content) for box in run}
    earlier = boxes[: len(boxes) - len(run)]
    flags = ("conflicting_boxes",) if any(_compact(box.content) not in final for box in earlier) else ()
    return Extraction(answer, "boxed" if len(run) == 1 else "boxes", flags)


_SENTENCE_END = re.compile(r"\.\s+[A-Z].*$", re.DOTALL)
MAX_SEARCH_CHARS = 4000


def _answer_line(text: str) -> tuple[int, str] | None:
    """(position, answer) of the last `Answer:` / `Final answer:` / `####` / `the answer is` statement."""
    offset = len(text)
    for line in reversed(text.splitlines(keepends=True)):
        offset -= len(line)
        match = _HASH_LINE.match(line) or _ANSWER_LINE.match(line) or _ANSWER_IS.match(line)
        if match:
            return offset + match.start("answer"), _clean_line_answer(
                _SENTENCE_END.sub("", match.group("answer"))
            )
    return None


def is_plain_answer(text: str) -> bool:
    """An answer with no prose around it (`3/4`, `x = 2`, `\\$16,\\!386.20`), as opposed to a sentence."""
    inner = text.strip()
    for outer in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
        if inner.startswith(outer[0]) and inner.endswith(outer[1]) and len(inner) > 2 * len(outer[0]):
            inner = inner[len(outer[0]) : -len(outer[1])]
    if "\n" in inner.strip() or re.search(r"(?<!\\)\$|\\\(|\\\[", inner):
        return False
    return len(_PROSE_WORD.findall(re.sub(r"\\text\s*\{[^{}]*\}", "", inner))) <= 2


def extract(text: str, boxes: str = "all") -> Extraction:
    """The final answer of a completion: boxes (see `boxes`), else an answer line, else a bare one-line
    answer, else the completion's tail for the math worker to search (source `prose`)."""
    found = all_boxes(text)
    line = _answer_line(text)
    if found and not (line and line[0] > found[-1].end and line[1] and is_plain_answer(line[1])):
        return answer_from_boxes(text, found, boxes)
    if line is not None:
        if not line[1]:
            return Extraction(None, "none")
        return (
            Extraction(line[1], "answer_line") if is_plain_answer(line[1]) else Extraction(line[1], "prose")
        )
    bare = _bare_answer(text)
    if bare and is_plain_answer(bare):
        return Extraction(bare, "bare")
    if any(command in text for command in _BOX_COMMANDS) or not text.strip():
        return Extraction(None, "none")  # a box that never closed is a format error
    return Extraction(text[-MAX_SEARCH_CHARS:], "prose")


def extract_answer_with_source(text: str) -> tuple[str | None, str]:
    """(answer, where it came from: boxed | boxes | answer_line | bare | none); prose is not searched here."""
    found = extract(text)
    return (None, "none") if found.needs_search else (found.answer, found.source)


def extract_answer(text: str) -> str | None:
    """The final answer, or None when the completion states none."""
    return extract_answer_with_source(text)[0]


def _tower_log10(numbers: list[int]) -> float:
    """log10 of a^(b^(c...)), without computing it (inf once it is astronomically large)."""
    log_value = math.log10(max(numbers[-1], 1))
    for base in reversed(numbers[:-1]):
        if log_value > 300:
            return math.inf
        log_value = (10**log_value) * math.log10(max(base, 1))
    return log_value


def oversized_number(answer: str) -> bool:
    """Whether the answer spells an integer with more than MAX_ANSWER_DIGITS digits (`9^{9^{9}}`, `100000!`).

    No reference answer is that large, and building one would stall the sympy worker until its timeout, so
    the grader rejects such answers up front (the worker's kill-on-timeout stays the backstop)."""
    for match in _POWER_TOWER.finditer(answer):
        numbers = [int(n) for n in re.findall(r"\d+", match.group(0)[:200])]
        if _tower_log10(numbers) > MAX_ANSWER_DIGITS:
            return True
    return any(int(m.group(1)[:7]) > 2000 for m in _FACTORIAL.finditer(answer))


_SCIENTIFIC_EXPONENT = re.compile(r"\d(?:\.\d*)?\s*[eE]\s*\+?(\d+)")
_BIG_BOUND = re.compile(r"\\(?:sum|prod)\s*_\s*\{[^{}]*\}\s*\^\s*(\{(?:[^{}]|\{[^{}]*\})*\}|\S+)")
_POWER_OF_TEN = re.compile(r"10\s*\^\s*\{?\s*\+?(\d+)")
MAX_NESTING = 60
MAX_SERIES_TERMS = 10_000
MAX_ANSWER_LENGTH = 1000


def size_problem(answer: str) -> str | None:
    """Why an answer is too big to hand to sympy (`oversized:answer`, `oversized:nesting`), or None.

    Each is the answer's own doing: a scored failure, never a grading error."""
    if len(answer) > MAX_ANSWER_LENGTH:
        return "oversized:answer"
    depth = deepest = 0
    for char in answer:
        if char in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in ")]}":
            depth -= 1
    if deepest > MAX_NESTING:
        return "oversized:nesting"
    if oversized_number(answer):
        return "oversized:answer"
    exponents = [m.group(1) for m in _SCIENTIFIC_EXPONENT.finditer(answer)]
    exponents += [m.group(1) for m in _POWER_OF_TEN.finditer(answer)]
    if any(len(e) > 5 or int(e) > MAX_ANSWER_DIGITS for e in exponents):
        return "oversized:answer"
    for bound in _BIG_BOUND.finditer(answer):
        text = bound.group(1).strip("{}").replace(",", "").replace("\\!", "")
        numbers = [int(n) for n in re.findall(r"\d+", text[:200])[:6]]
        if not numbers:
            continue
        log_size = _tower_log10(numbers) if "^" in text or "**" in text else math.log10(max(numbers[0], 1))
        if log_size > math.log10(MAX_SERIES_TERMS) or (len(numbers) == 1 and numbers[0] > MAX_SERIES_TERMS):
            return "oversized:answer"
    return None
