"""`rlvr/SQL-v0`: a database task per episode; step(text) runs the SQL (from a ```sql block or the whole text)
on the visible database and hidden variants, read-only for query tasks."""

from __future__ import annotations

from typing import Any

from rlvr.core.pack import TaskPack
from rlvr.envs.families import FamilyTextEnv


class SQLEnv(FamilyTextEnv):
    family = "sql"

    def __init__(self, pack: str | TaskPack = "sql-shop", **kwargs: Any) -> None:
        super().__init__(pack, **kwargs)
