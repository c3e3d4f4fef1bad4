from textkit.stats import average_sentence_length, lexical_density, top_words
from textkit.tokens import sentences, tokenize, word_counts
from textkit.transform import slugify, title_case, truncate


def test_tokenize() -> None:
    assert tokenize("It's a Dog's life!") == ["it's", "a", "dog's", "life"]
    assert word_counts("the cat the hat", skip_stopwords=True) == {"cat": 1, "hat": 1}


def test_sentences() -> None:
    assert sentences("One. Two!  Three?") == ["One.", "Two!", "Three?"]


def test_transform() -> None:
    assert slugify("Hello, World!") == "hello-world"
    assert title_case("the lord of the rings") == "The Lord of the Rings"
    assert truncate("abcdefgh", 6) == "abc..."


def test_stats() -> None:
    assert top_words("b a b c c d", 2) == [("b", 2), ("c", 2)]
    assert average_sentence_length("a b. c d e f.") == 3.0
    assert lexical_density("x x y") == 0.667
