"""Path patterns like "/users/<id:int>/posts/<slug>"."""

from dataclasses import dataclass

CONVERTERS = {"int": int, "str": str}


@dataclass(frozen=True)
class Pattern:
    parts: tuple[str, ...]

    def match(self, path: str) -> dict[str, int | str] | None:
        """The parameters if `path` matches, else None. A trailing "/" is ignored."""
        segments = split_path(path)
        if len(segments) != len(self.parts):
            return None
        params: dict[str, int | str] = {}
        for part, segment in zip(self.parts, segments):
            if part.startswith("<") and part.endswith(">"):
                name, _, kind = part[1:-1].partition(":")
                converter = CONVERTERS[kind or "str"]
                if converter is int and not segment.isdigit():
                    return None
                params[name] = converter(segment)
            elif part != segment:
                return None
        return params


def split_path(path: str) -> list[str]:
    return [segment for segment in path.strip("/").split("/") if segment]


def compile_pattern(text: str) -> Pattern:
    """A Pattern; unknown converters or duplicate parameter names are ValueErrors."""
    parts = tuple(split_path(text))
    seen: set[str] = set()
    for part in parts:
        if part.startswith("<") and part.endswith(">"):
            name, _, kind = part[1:-1].partition(":")
            if (kind or "str") not in CONVERTERS:
                raise ValueError(f"unknown converter {kind!r}")
            if name in seen:
                raise ValueError(f"duplicate parameter {name!r}")
            seen.add(name)
    return Pattern(parts)
