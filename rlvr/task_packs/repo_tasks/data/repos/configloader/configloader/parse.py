"""Parsing: "[section]" headers, "key = value" lines, "#" or ";" comments."""

from configloader.coerce import Value, coerce

Config = dict[str, dict[str, Value]]


class ConfigError(ValueError):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


def parse(text: str) -> Config:
    """Sections of coerced values; keys before any header go to section "default"."""
    config: Config = {}
    section = "default"
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            if not line.endswith("]") or len(line) < 3:
                raise ConfigError(number, "bad section header")
            section = line[1:-1].strip()
            config.setdefault(section, {})
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise ConfigError(number, "expected key = value")
        config.setdefault(section, {})[key.strip().lower()] = coerce(value)
    return config
