"""Tokenising: words are runs of letters, digits and apostrophes, lower-cased."""

import re

WORD = re.compile(r"[a-z0-9']+")
STOPWORDS = frozenset({"a", "an", "and", "the", "of", "to", "in", "is", "it"})


def tokenize(text: str) -> list[str]:
    """Lower-cased words of `text` in order, apostrophes at either end stripped."""
    words = [word.strip("'") for word in WORD.findall(text.lower())]
    return [word for word in words if word]


def word_counts(text: str, skip_stopwords: bool = False) -> dict[str, int]:
    """How often each word occurs, optionally leaving out STOPWORDS."""
    counts: dict[str, int] = {}
    for word in tokenize(text):
        if skip_stopwords and word in STOPWORDS:
            continue
        counts[word] = counts.get(word, 0) + 1
    return counts


def sentences(text: str) -> list[str]:
    """Split on ".", "!" or "?" followed by whitespace or the end; empty pieces dropped."""
    parts = re.split(r"(?<=[.!?])\s+", text.strip())
    return [part for part in parts if part]
