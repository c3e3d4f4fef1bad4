"""Statistics over texts, built on tokens."""

from textkit.tokens import sentences, tokenize, word_counts


def top_words(text: str, count: int = 3) -> list[tuple[str, int]]:
    """The `count` most frequent non-stopwords, ties broken alphabetically."""
    ranked = sorted(word_counts(text, skip_stopwords=True).items(), key=lambda item: (-item[1], item[0]))
    return ranked[:count]


def average_sentence_length(text: str) -> float:
    """Mean number of words per sentence, rounded to 2 places (0.0 for no sentences)."""
    pieces = sentences(text)
    if not pieces:
        return 0.0
    return round(sum(len(tokenize(piece)) for piece in pieces) / len(pieces), 2)


def lexical_density(text: str) -> float:
    """Distinct words divided by words, rounded to 3 places (0.0 for no words)."""
    words = tokenize(text)
    if not words:
        return 0.0
    return round(len(set(words)) / len(words), 3)
