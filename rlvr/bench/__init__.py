"""`rlvr bench` / `rlvr sweep`: evaluate policies on task packs (pass@k and per-sample diagnostics)."""

from rlvr.bench.passk import mean_pass_at_k, pass_at_k

__all__ = ["mean_pass_at_k", "pass_at_k"]
