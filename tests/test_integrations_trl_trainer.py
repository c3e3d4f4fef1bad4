"""TRL's real GRPOTrainer runs a few steps with the rlvr reward function on a tiny local model."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerFast


def tiny_tokenizer(texts: list[str]) -> PreTrainedTokenizerFast:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=["<pad>", "<eos>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token="<pad>", eos_token="<eos>")
    fast.padding_side = "left"
    return fast


def test_grpo_trainer_uses_rlvr_rewards(tmp_path, humaneval_pack, humaneval_grader):
    # imported here, not at module level: every pytest-xdist worker collects every file, and only the
    # one that runs this test should pay for TRL's trainer
    pytest.importorskip("trl")
    import torch
    from datasets import Dataset
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    from rlvr.integrations.trl import make_reward_func

    tasks = humaneval_pack.tasks()[:4]
    tokenizer = tiny_tokenizer([t.prompt for t in humaneval_pack.tasks()[:40]])
    torch.manual_seed(0)
    model = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=2,
            max_position_embeddings=1024,
            pad_token_id=tokenizer.pad_token_id,
            eos_token_id=tokenizer.eos_token_id,
            bos_token_id=None,
        )
    )
    reward = make_reward_func(humaneval_pack, jobs=1)
    calls: list[tuple[list[str], list[str], list[float | None]]] = []

    def recording_reward(prompts, completions, **kwargs):
        rewards = reward(prompts=prompts, completions=completions, **kwargs)
        calls.append((list(kwargs["task_id"]), list(completions), rewards))
        return rewards

    recording_reward.__name__ = reward.__name__
    dataset = Dataset.from_dict({"prompt": [t.prompt for t in tasks], "task_id": [t.id for t in tasks]})
    config = GRPOConfig(
        output_dir=str(tmp_path),
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=12,
        max_steps=2,
        learning_rate=1e-3,
        logging_steps=1,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
        seed=0,
        disable_tqdm=True,
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[recording_reward],
        args=config,
        train_dataset=dataset,
        processing_class=tokenizer,
    )
    trainer.train()
    reward.close()

    assert len(calls) == 2  # one reward call per optimisation step
    logged = [entry for entry in trainer.state.log_history if "rewards/rlvr_humaneval/mean" in entry]
    assert len(logged) == 2
    for (task_ids, completions, rewards), entry in zip(calls, logged, strict=True):
        assert set(task_ids) <= {t.id for t in tasks} and len(task_ids) == 4
        assert all(task_ids.count(t) == 2 for t in set(task_ids))  # GRPO groups of 2 per task
        local = humaneval_grader.grade_many(task_ids, completions)
        assert rewards == pytest.approx([v.reward for v in local], abs=1e-9)
        assert entry["rewards/rlvr_humaneval/mean"] == pytest.approx(sum(rewards) / len(rewards), abs=1e-6)
        assert entry["rlvr_humaneval/grading_errors"] == 0.0
