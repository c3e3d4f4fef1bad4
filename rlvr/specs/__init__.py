"""Specs that task packs and graders share: stateful-method drivers and rules, deterministic
generation, and the simulated tool worlds. Below both packs and graders; imports only `rlvr.core`."""
