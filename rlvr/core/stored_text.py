"""Text stored in JSON lines exactly as it was graded, lone surrogates included.

A completion may hold code points that are not characters (unpaired UTF-16 surrogates): the envs
accept any `str`, so a policy can emit them. JSON cannot carry them faithfully: written as escapes,
two unpaired surrogates that happen to form a pair (`\\ud83d` then `\\ude00`) read back as one astral
character, so a re-grade would judge other text than the run did. Such a text is stored twice: the
readable field (surrogates shown as backslash escapes, for people) and `<field>_utf8`, the base64 of
its UTF-8 bytes with surrogates passed through, which is what is read back.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

RAW_SUFFIX = "_utf8"


def is_plain(text: str) -> bool:
    """True when the text is all characters (it encodes as UTF-8 without surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def store_text(record: dict[str, Any], field: str, text: str | None) -> None:
    """Put `text` into `record[field]`, and its exact code points beside it when JSON would lose them
    (None is stored as null)."""
    if text is None or is_plain(text):
        record[field] = text
        return
    record[field] = text.encode("utf-8", "backslashreplace").decode("utf-8")
    record[field + RAW_SUFFIX] = base64.b64encode(text.encode("utf-8", "surrogatepass")).decode("ascii")


def read_text(record: dict[str, Any], field: str) -> Any:
    """The text `store_text` stored (the exact code points when they were stored beside it), or
    whatever the record holds in `field` (None when it holds nothing)."""
    raw = record.get(field + RAW_SUFFIX)
    if isinstance(raw, str):
        try:
            return base64.b64decode(raw, validate=True).decode("utf-8", "surrogatepass")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            pass  # a damaged copy: fall back to the readable field
    return record.get(field)
