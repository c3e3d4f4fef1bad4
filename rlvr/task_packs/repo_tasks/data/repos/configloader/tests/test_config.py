from configloader.coerce import coerce
from configloader.merge import apply_env, load, merge
from configloader.parse import ConfigError, parse


def test_coerce() -> None:
    assert coerce(" yes ") is True
    assert coerce("42") == 42
    assert coerce("a, b") == ["a", "b"]
    assert coerce("'7'") == "7"


def test_parse() -> None:
    assert parse("x = 1\n[db]\nHost = h\n# c\n") == {"default": {"x": 1}, "db": {"host": "h"}}
    try:
        parse("[db\n")
    except ConfigError as exc:
        assert exc.line == 1
    else:
        raise AssertionError("bad header accepted")


def test_layers() -> None:
    assert merge({"a": {"x": 1}}, {"a": {"y": 2}}) == {"a": {"x": 1, "y": 2}}
    assert apply_env({}, {"APP_DB__PORT": "5432"}) == {"db": {"port": 5432}}
    assert load("[db]\nport = 1", "[db]\nport = 2", {}) == {"db": {"port": 2}}
