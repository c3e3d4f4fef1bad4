"""Adapters that let other trainers use rlvr's graders as their reward.

- `rlvr.integrations.trl.make_reward_func` — a TRL `GRPOTrainer` reward function.
- `rlvr.integrations.verl.compute_score` — verl's custom reward-score hook.
- `rlvr.integrations.openrlhf.create_app` — the OpenRLHF remote reward server behind `rlvr serve`.

Multi-turn agent episodes (Tool-v0, Repo-v0, any env with the agent protocol of rlvr/envs/agent.py) go
through one session layer, `rlvr.integrations.session`: `trl.environment_factory` / `trl.dataset`,
`openenv` (`rlvr serve --protocol openenv`), `skyrl` (SkyRL-Gym text envs), `verifiers.load_environment`,
and `openrlhf_agent` (OpenRLHF's `--agent_func_path`).

Each single-turn adapter grades through `Grader.grade_many`, so every integration returns the same reward local
grading does for the same (task id, completion) pair.
"""
