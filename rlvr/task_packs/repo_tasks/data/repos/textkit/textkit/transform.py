"""Transforms: slugs, title case, truncation with an ellipsis."""

from textkit.tokens import tokenize

SMALL_WORDS = frozenset({"a", "an", "and", "of", "the", "to", "in", "on", "or"})


def slugify(text: str, max_words: int = 8) -> str:
    """"Hello, World!" -> "hello-world"; at most `max_words` words."""
    return "-".join(tokenize(text)[:max_words])


def title_case(text: str) -> str:
    """Capitalise every word except small words that are not first or last."""
    words = text.split()
    out: list[str] = []
    for index, word in enumerate(words):
        inner = 0 < index < len(words) - 1
        out.append(word.lower() if inner and word.lower() in SMALL_WORDS else word[:1].upper() + word[1:].lower())
    return " ".join(out)


def truncate(text: str, width: int) -> str:
    """`text` cut to at most `width` characters, ending in "..." when cut (width >= 3)."""
    if width < 3:
        raise ValueError("width must be at least 3")
    if len(text) <= width:
        return text
    return text[: width - 3].rstrip() + "..."
