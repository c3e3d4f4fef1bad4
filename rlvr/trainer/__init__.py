"""A small GRPO trainer on torch + transformers that learns from rlvr's graders.

Read `grpo.py` top to bottom for the loop; the helpers each have one job:
advantages (group-relative advantages), losses (clipped surrogate, k3 KL, aggregation),
masks (EOS/truncation), rollout (sampling and log-probs), episodes (multi-turn episodes through the
envs), curriculum (task draw, adaptive G), agent (what the rollout samples with), warm_start / sft /
teachers (the warm start), evaluate (held-out pass rate), metrics / plots, checkpoint, model, config.
Entry point: `rlvr.trainer.grpo.train(config, out_dir)` or the `rlvr train` command.
"""
