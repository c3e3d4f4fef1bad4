"""`rlvr/Proof-v0`: prove an equality or inequality by a derivation, one step a line; every step is checked
with sympy. The reward is the gated outcome; `info["verdict"]["components"]["process"]` reports the fraction
of lines that hold."""

from __future__ import annotations

from typing import Any

from rlvr.core.pack import TaskPack
from rlvr.envs.families import FamilyTextEnv


class ProofEnv(FamilyTextEnv):
    family = "proof"

    def __init__(self, pack: str | TaskPack = "proof-identities", **kwargs: Any) -> None:
        super().__init__(pack, **kwargs)
