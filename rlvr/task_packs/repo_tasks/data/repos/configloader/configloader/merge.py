"""Layering configurations: defaults, a file, then environment overrides."""

from configloader.coerce import coerce
from configloader.parse import Config, parse


def merge(base: Config, override: Config) -> Config:
    """A new config: `override`'s values win key by key, sections merged."""
    merged: Config = {section: dict(values) for section, values in base.items()}
    for section, values in override.items():
        merged.setdefault(section, {}).update(values)
    return merged


def apply_env(config: Config, environ: dict[str, str], prefix: str = "APP_") -> Config:
    """Overrides from variables named PREFIX + SECTION + "__" + KEY (case-insensitive), coerced."""
    overrides: Config = {}
    for name, value in environ.items():
        if not name.upper().startswith(prefix.upper()) or "__" not in name:
            continue
        section, _, key = name[len(prefix) :].partition("__")
        if section and key:
            overrides.setdefault(section.lower(), {})[key.lower()] = coerce(value)
    return merge(config, overrides)


def load(defaults: str, text: str, environ: dict[str, str]) -> Config:
    """Defaults text, overridden by the file text, overridden by the environment."""
    return apply_env(merge(parse(defaults), parse(text)), environ)
