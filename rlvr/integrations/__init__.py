"""Adapters that let other trainers use rlvr's graders as their reward.

- `rlvr.integrations.trl.make_reward_func` — a TRL `GRPOTrainer` reward function.
- `rlvr.integrations.verl.compute_score` — verl's custom reward-score hook.
- `rlvr.integrations.openrlhf.create_app` — the OpenRLHF remote reward server behind `rlvr serve`.

Each adapter grades through `Grader.grade_many`, so every integration returns the same reward local
grading does for the same (task id, completion) pair.
"""
