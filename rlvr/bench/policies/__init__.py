"""Policies for `rlvr bench`: `hf:PATH`, `openai:URL`, `jsonl:FILE`."""

from __future__ import annotations

from typing import Any

from rlvr.bench.policies.base import Generation, Policy, PolicyError, Request, Settings

SCHEMES = ("hf", "openai", "jsonl")
# which keyword options each scheme accepts (the CLI passes only the ones the user set)
SCHEME_OPTIONS: dict[str, set[str]] = {
    "hf": {"batch_size", "device", "dtype", "threads"},
    "openai": {"model", "concurrency", "retries", "timeout", "backoff", "api_key"},
    "jsonl": set(),
}


def make_policy(spec: str, settings: Settings | None = None, **options: Any) -> Policy:
    """A policy from its spec string; unknown schemes or options are a PolicyError."""
    scheme, sep, target = spec.partition(":")
    if not sep or scheme not in SCHEMES or not target:
        raise PolicyError(f"policy {spec!r} must look like hf:PATH, openai:URL or jsonl:FILE")
    given = {name: value for name, value in options.items() if value is not None}
    unknown = set(given) - SCHEME_OPTIONS[scheme]
    if unknown:
        raise PolicyError(f"{scheme}: policies do not take {', '.join(sorted(unknown))}")
    if scheme == "jsonl":
        from rlvr.bench.policies.jsonl import RecordedPolicy

        return RecordedPolicy(spec, target, settings)
    if scheme == "hf":
        from rlvr.bench.policies.hf import HFPolicy

        return HFPolicy(spec, target, settings, **given)
    from rlvr.bench.policies.openai import OpenAIPolicy

    return OpenAIPolicy(spec, target, settings, **given)


__all__ = ["Generation", "Policy", "PolicyError", "Request", "Settings", "make_policy"]
