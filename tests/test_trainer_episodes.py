"""Multi-turn GRPO: episodes run through the real Gymnasium envs; observation tokens are context,
never loss; one advantage per episode; the single-turn fast path and the episode path agree exactly."""

from __future__ import annotations

import copy
import json
import random
from typing import Any, cast

import pytest
import torch

import rlvr  # noqa: F401  (registers the envs)
from rlvr.core.types import Task, Verdict
from rlvr.graders.base import Grader, make_grader
from rlvr.task_packs.registry import load_pack
from rlvr.trainer import grpo, teachers
from rlvr.trainer.advantages import group_advantages
from rlvr.trainer.config import ConfigError, ModelConfig, TrainConfig, build_config
from rlvr.trainer.curriculum import Curriculum, up_to_difficulty
from rlvr.trainer.episodes import ChatTemplate, Episode, EpisodeRunner, PlainTemplate, episode_sequences
from rlvr.trainer.model import build_tiny_model, build_tokenizer, disable_dropout
from rlvr.trainer.rollout import completion_logprobs
from rlvr.trainer.warm_start import spread_sample


@pytest.fixture(scope="module")
def tool_pack() -> Any:
    return load_pack("tool-worlds")


@pytest.fixture(scope="module")
def transcripts(tool_pack: Any) -> Any:
    grader = make_grader(tool_pack)  # the tasks the tests play (their tokens must be known)
    return teachers.teacher_transcripts("rlvr/Tool-v0", tool_pack, grader, distinct_prompts(tool_pack, 40))


@pytest.fixture(scope="module")
def tokenizer(transcripts: Any) -> Any:
    return build_tokenizer(teachers.transcript_texts(transcripts), 800)


def tiny(tokenizer: Any, seed: int = 0) -> Any:
    model = build_tiny_model(tokenizer, ModelConfig(tiny_layers=1, tiny_hidden=32, tiny_heads=2), seed)
    disable_dropout(model)
    return model


class ScriptedPolicy:
    """Stands in for a model's `generate`: on each turn it sends the task's next reference turn (from
    the teacher), or with probability `slip` a malformed one. The task is recognised from the prompt;
    the turn number from the EOS tokens already in context. The env, grader and trainer are real."""

    def __init__(self, tokenizer: Any, tasks: list[Task], slip: float, seed: int = 0) -> None:
        self.tokenizer, self.slip, self.rng = tokenizer, slip, random.Random(seed)
        self.turns = {t.prompt: teachers.reference_turns(t) for t in tasks}
        self.calls = 0

    def generate(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, generation_config: Any) -> Any:
        self.calls += 1
        eos, pad = self.tokenizer.eos_token_id, self.tokenizer.pad_token_id
        rows = []
        for ids, mask in zip(input_ids, attention_mask, strict=True):
            context = ids[mask.bool()].tolist()
            text = self.tokenizer.decode(context)
            prompt = next(p for p in self.turns if text.startswith(p))
            done = context.count(eos)
            turn = self.turns[prompt][done] if done < len(self.turns[prompt]) else '{"final_answer": "?"}'
            if self.rng.random() < self.slip:
                turn = "oops"
            rows.append(self.tokenizer(turn, add_special_tokens=False)["input_ids"] + [eos])
        rows = [r[: generation_config.max_new_tokens] for r in rows]
        width = max(len(r) for r in rows)
        new = torch.tensor([r + [pad] * (width - len(r)) for r in rows])
        return torch.cat([input_ids, new], dim=1)


def distinct_prompts(pack: Any, count: int) -> list[Task]:
    """Tasks whose prompts differ (instances of one template share their prompt text)."""
    by_prompt = {t.prompt: t for t in reversed(pack.tasks("train"))}
    return list(by_prompt.values())[:count]


def runner_for(tool_pack: Any, tokenizer: Any, **kwargs: Any) -> EpisodeRunner:
    return EpisodeRunner(
        "rlvr/Tool-v0", tool_pack, make_grader(tool_pack), tokenizer, PlainTemplate(tokenizer), **kwargs
    )


def test_episodes_follow_the_env_turn_by_turn(tool_pack: Any, tokenizer: Any) -> None:
    tasks = distinct_prompts(tool_pack, 4)
    policy = ScriptedPolicy(tokenizer, tasks, slip=0.0)
    runner = runner_for(tool_pack, tokenizer)
    episodes = runner.run(
        policy, tasks, temperature=1.0, max_new_tokens=400, max_episode_tokens=4000, batch_size=3
    )
    runner.close()
    for task, episode in zip(tasks, episodes, strict=True):
        assert episode.verdict is not None and episode.verdict.passed, episode.verdict
        assert episode.reward == pytest.approx(episode.verdict.reward) and episode.reward > 0
        assert episode.ended_by == "env" and not episode.truncated
        reference = teachers.reference_turns(task)
        assert len(episode.turn_tokens) == len(reference)
        # the sampled tokens are exactly the turns sent, each closed by EOS
        sampled = [i for i, s in zip(episode.ids, episode.sampled, strict=True) if s]
        eos = tokenizer.eos_token_id
        expected = [i for turn in reference for i in [*tokenizer(turn)["input_ids"], eos]]
        assert sampled == expected
        # everything else is the env's observations, rendered by the template
        observations = [h["content"] for h in episode.history if h["role"] == "tool"]
        rendered = [i for text in observations for i in tokenizer(f"\n{text}\n")["input_ids"]]
        assert [i for i, s in zip(episode.ids, episode.sampled, strict=True) if not s] == rendered
        assert sum(episode.tool_calls.values()) == task.hidden["optimal_calls"]


def test_budgets_end_episodes_as_scored_failures(tool_pack: Any, tokenizer: Any) -> None:
    tasks = distinct_prompts(tool_pack, 3)
    runner = runner_for(tool_pack, tokenizer)
    policy = ScriptedPolicy(tokenizer, tasks, slip=0.0)
    episodes = runner.run(
        policy, tasks, temperature=1.0, max_new_tokens=400, max_episode_tokens=60, batch_size=8
    )
    for episode in episodes:
        assert len(episode.ids) <= 60
        assert episode.ended_by == "token_budget" and episode.truncated
        assert episode.verdict is not None and not episode.verdict.passed and episode.reward == 0.0
        assert not episode.verdict.disrupted and "episode_token_budget" in episode.verdict.flags
    # a turn longer than the per-turn budget is sent as it is (cut), the episode goes on
    short = runner.run(
        policy, tasks, temperature=1.0, max_new_tokens=5, max_episode_tokens=4000, batch_size=8
    )
    runner.close()
    for episode in short:
        assert all(n <= 5 for n in episode.turn_tokens) and episode.malformed_turns == len(
            episode.turn_tokens
        )
        assert episode.ended_by == "turn_limit" and episode.last_turn_cut and episode.truncated


def test_tool_tokens_never_receive_gradient(tokenizer: Any) -> None:
    """A known layout: [prompt | a a EOS | o o o | a EOS]; the loss's gradient reaches the logits
    that predict assistant tokens and never those that predict observation tokens."""
    eos = tokenizer.eos_token_id
    task = Task(id="t", prompt="p")
    episodes = []
    for shift in range(2):
        e = Episode(task, [5 + shift, 6, 7])
        e.add([10 + shift, 11, eos], sampled=True)
        e.add([20, 21, 22 + shift], sampled=False)
        e.add([12, eos], sampled=True)
        episodes.append(e)
    sequences = episode_sequences(episodes, tokenizer.pad_token_id)
    model = tiny(tokenizer)
    captured: list[torch.Tensor] = []

    def keep_logits(module: Any, inputs: Any, output: torch.Tensor) -> None:
        output.retain_grad()
        captured.append(output)

    model.lm_head.register_forward_hook(keep_logits)
    rollout = grpo.Rollout(
        sequences,
        torch.tensor([0, 0]),
        [Verdict("t", 1.0), Verdict("t", 0.0)],
        torch.tensor([1.0, 0.0]),
        torch.ones(2, dtype=torch.bool),
        episodes,
    )
    config = TrainConfig()
    config.grpo.num_iterations = 1
    grpo.policy_update(model, None, torch.optim.SGD(model.parameters(), lr=0.0), rollout, config)
    (logits,) = captured
    assert logits.grad is not None
    prompt, completion = sequences.prompt_ids.shape[1], sequences.completion_ids.shape[1]
    first_kept = prompt + completion - logits.shape[1]  # the model may keep only the last logits
    # position p predicts token p + 1; completion token t sits at prompt + t
    start = prompt - 1 - first_kept
    grad = logits.grad[:, start : start + completion].abs().sum(-1)
    sampled = sequences.mask.bool()
    assert bool((grad[~sampled] == 0).all())
    assert bool((grad[sampled] > 0).all())


def test_observation_tokens_are_context_for_later_turns(tokenizer: Any) -> None:
    """Observations are attended to (they change later turns' log-probs) though they are never scored."""
    eos = tokenizer.eos_token_id
    task = Task(id="t", prompt="p")
    a, b = Episode(task, [5, 6]), Episode(task, [5, 6])
    for e, observation in ((a, [20, 21]), (b, [30, 31])):
        e.add([10, eos], sampled=True)
        e.add(observation, sampled=False)
        e.add([12, eos], sampled=True)
    model = tiny(tokenizer)
    with torch.no_grad():
        logp, _ = completion_logprobs(model, episode_sequences([a, b], tokenizer.pad_token_id), 1.0)
    assert torch.equal(logp[0, :2], logp[1, :2])  # before the observation: identical
    assert not torch.allclose(logp[0, 4:], logp[1, 4:])  # after it: it matters


def test_episode_advantages_equal_the_group_formula(
    tool_pack: Any, tokenizer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real episodes on rlvr/Tool-v0 (a policy that sometimes slips): each episode's one advantage,
    (r - group mean) / (group std + eps), reaches every token it sampled and nothing else."""
    tasks = distinct_prompts(tool_pack, 2)
    config = TrainConfig()
    g = config.grpo
    g.tasks_per_step, g.group_size, g.group_size_max = 2, 4, 0
    g.scale_rewards, g.num_iterations, g.truncation = "group", 1, "none"
    g.max_new_tokens, g.max_episode_tokens = 400, 4000
    agent = grpo.Agent(
        tokenizer, make_grader(tool_pack), [tokenizer.eos_token_id], runner_for(tool_pack, tokenizer)
    )
    policy = ScriptedPolicy(tokenizer, tasks, slip=0.3, seed=3)
    rollout = grpo.collect_rollout(
        policy, agent, Curriculum(tasks, False, 1.0, 1), random.Random(0), config, (1, 3)
    )
    rewards, groups = rollout.rewards, rollout.group_ids
    assert len(set(rewards.tolist())) > 1 and len(rollout.episodes) == 8
    expected = []
    for reward, group in zip(rewards.tolist(), groups.tolist(), strict=True):
        members = [r for r, gid in zip(rewards.tolist(), groups.tolist(), strict=True) if gid == group]
        mean = sum(members) / len(members)
        std = (sum((r - mean) ** 2 for r in members) / len(members)) ** 0.5
        expected.append((reward - mean) / (std + 1e-4))
    assert torch.allclose(group_advantages(rewards, groups, "group"), torch.tensor(expected), atol=1e-5)

    seen: dict[str, torch.Tensor] = {}
    real_loss = grpo.grpo_loss

    def spy(*args: Any, **kwargs: Any) -> Any:
        out = real_loss(*args, **kwargs)
        seen["advantages"], seen["mask"], seen["per_token"] = args[3], args[4], out.surrogate.loss.detach()
        return out

    monkeypatch.setattr(grpo, "grpo_loss", spy)
    config.grpo.micro_batch_size = 64
    model = tiny(tokenizer)
    stats = grpo.policy_update(model, None, torch.optim.SGD(model.parameters(), lr=0.0), rollout, config)
    assert torch.allclose(seen["advantages"], torch.tensor(expected), atol=1e-5)
    # ratio == 1 on the only pass, so each sampled token's surrogate is exactly -A of its episode
    per_token, mask = seen["per_token"], seen["mask"]
    for row, advantage in enumerate(expected):
        assert torch.allclose(per_token[row][mask[row].bool()], torch.tensor(-advantage), atol=1e-5)
    assert stats["grad_norm"] > 0
    metrics = grpo.rollout_metrics(rollout)
    assert metrics["turns_per_episode"] >= 2 and 0 < metrics["malformed_turn_rate"] < 1
    assert metrics["tool_calls_per_episode"] > 0 and any(k.startswith("tool_calls/") for k in metrics)
    agent.runner.close()  # type: ignore[union-attr]


class LengthGrader(Grader):
    """Deterministic and in-process: reward 1 for an even-length completion (so groups vary)."""

    family = "code"

    def grade_tasks(self, tasks: list[Task], completions: list[str]) -> list[Verdict]:
        return [
            Verdict(t.id, float(len(c) % 2 == 0), passed=len(c) % 2 == 0)
            for t, c in zip(tasks, completions, strict=True)
        ]


def test_single_turn_fast_path_and_episode_path_agree_exactly() -> None:
    """tiny-functions through rlvr/Code-v0 (one turn) gives the very rollout and update of the
    batched fast path: same tokens, rewards, loss and weights."""
    from rlvr.task_packs.tiny_functions import sft_examples

    pack = load_pack("tiny-functions")
    tokenizer = build_tokenizer([p + c for p, c in sft_examples(200)], 300)
    tokenizer.padding_side = "left"
    tasks = pack.tasks("train")[:3]
    config = TrainConfig()
    g = config.grpo
    g.tasks_per_step, g.group_size, g.group_size_max, g.max_new_tokens = 3, 3, 0, 12
    g.micro_batch_size, g.truncation = 4, "mask"
    grader = LengthGrader(pack)
    results = []
    for runner in (None, EpisodeRunner("rlvr/Code-v0", pack, grader, tokenizer, PlainTemplate(tokenizer))):
        model = tiny(tokenizer, seed=1)
        agent = grpo.Agent(tokenizer, grader, [cast(int, tokenizer.eos_token_id)], runner)
        torch.manual_seed(7)
        rollout = grpo.collect_rollout(
            model, agent, Curriculum(tasks, False, 1.0, 1), random.Random(0), config, (1, 3)
        )
        stats = grpo.policy_update(
            model, None, torch.optim.AdamW(model.parameters(), lr=1e-2), rollout, config
        )
        results.append((rollout, stats, copy.deepcopy(model.state_dict())))
    (fast, fast_stats, fast_weights), (slow, slow_stats, slow_weights) = results
    assert len(slow.episodes) == 9 and all(len(e.turn_tokens) == 1 for e in slow.episodes)
    assert torch.equal(fast.sequences.prompt_ids, slow.sequences.prompt_ids)
    assert torch.equal(fast.sequences.completion_ids, slow.sequences.completion_ids)
    assert torch.equal(fast.sequences.mask, slow.sequences.mask)
    assert torch.equal(fast.sequences.truncated, slow.sequences.truncated)
    assert torch.equal(fast.rewards, slow.rewards) and len(set(fast.rewards.tolist())) > 1
    for key in ("loss", "policy_loss", "grad_norm", "entropy"):
        assert fast_stats[key] == slow_stats[key], key
    for name, weight in fast_weights.items():
        assert torch.equal(weight, slow_weights[name]), name


def test_chat_template_renders_the_turns_between_assistant_messages(tokenizer: Any) -> None:
    chat = copy.deepcopy(tokenizer)
    chat.chat_template = (
        "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<eos>\n{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    template = ChatTemplate(chat, ["<eos>"])
    assert chat.decode(template.prompt_ids("hi")) == "<|user|>hi<eos>\n<|assistant|>"
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "call"}]
    # after the sampled "call<eos>": the template's newline, the tool message, the next prompt
    assert chat.decode(template.observation_ids(history, "result")) == "\n<|tool|>result<eos>\n<|assistant|>"


def layout_episodes(tokenizer: Any) -> list[Episode]:
    """Episodes of different prompt lengths, turn counts and observation lengths."""
    eos, task = tokenizer.eos_token_id, Task(id="t", prompt="p")
    shapes = [([5, 6, 7, 8], [[10, 11, eos], [30, 31, 32], [12, eos]]), ([9], [[13, eos]])]
    shapes += [([5, 6], [[14, 15, 16, eos], [33], [17, eos], [34, 35], [18, eos]])]
    episodes = []
    for prompt, parts in shapes:
        episode = Episode(task, prompt)
        for index, part in enumerate(parts):
            episode.add(part, sampled=index % 2 == 0)
        episodes.append(episode)
    return episodes


def test_multi_turn_logprobs_match_a_plain_loop(tokenizer: Any) -> None:
    """Left padding and position ids: each episode's batched log-probs equal those of the episode
    run alone, unpadded."""
    episodes = layout_episodes(tokenizer)
    model = tiny(tokenizer)
    sequences = episode_sequences(episodes, tokenizer.pad_token_id)
    with torch.no_grad():
        batched, _ = completion_logprobs(model, sequences, 0.7)
        for row, episode in enumerate(episodes):
            ids = torch.tensor([episode.prompt_ids + episode.ids])
            logp = torch.log_softmax(model(input_ids=ids).logits[0] / 0.7, dim=-1)
            start = len(episode.prompt_ids)
            for t, token in enumerate(episode.ids):
                assert torch.allclose(batched[row, t], logp[start + t - 1, token], atol=1e-5)


def test_multi_turn_update_is_the_same_however_it_is_micro_batched(tokenizer: Any) -> None:
    """mu = 3 with a KL reference over multi-turn sequences: old and reference log-probs and the
    three optimiser steps give the same weights in one batch, row by row, or capped by tokens."""
    from rlvr.trainer.model import ReferencePolicy

    episodes = layout_episodes(tokenizer)
    sequences = episode_sequences(episodes, tokenizer.pad_token_id)
    width = sequences.prompt_ids.shape[1] + sequences.completion_ids.shape[1]
    weights = []
    for rows, tokens in ((64, 0), (1, 0), (64, 2 * width)):
        model = tiny(tokenizer)
        config = TrainConfig()
        g = config.grpo
        g.num_iterations, g.beta, g.micro_batch_size, g.micro_batch_tokens = 3, 0.1, rows, tokens
        g.epsilon_low = g.epsilon_high = 0.05
        rollout = grpo.Rollout(
            sequences,
            torch.tensor([0, 0, 0]),
            [Verdict("t", r) for r in (1.0, 0.0, 0.5)],
            torch.tensor([1.0, 0.0, 0.5]),
            torch.ones(3, dtype=torch.bool),
            episodes,
        )
        reference = ReferencePolicy(model, uses_lora=False)
        stats = grpo.policy_update(
            model, reference, torch.optim.SGD(model.parameters(), lr=3.0), rollout, config
        )
        assert stats["kl"] > 0 and stats["clip_ratio/low"] + stats["clip_ratio/high"] > 0
        weights.append([p.detach().clone() for p in model.parameters()])
    for other in weights[1:]:
        for a, b in zip(weights[0], other, strict=True):
            assert torch.allclose(a, b, atol=1e-5)


def test_words_pretokenizer_gives_a_name_the_same_tokens_in_text_and_in_json() -> None:
    """GPT-2's rule tokenises " vault" (in the instruction) and "vault" (in a JSON string) apart; the
    `words` rule does not, so copying an argument is one skill, including for unseen names."""
    texts = [
        "Transfer 500 cents from globex to acme.",
        '[{"name": "transfer", "arguments": {"source": "globex", "target": "acme", "amount": 500}}]',
    ] * 20
    words = build_tokenizer(texts, 300, "words")
    gpt2 = build_tokenizer(texts, 400, "bytelevel")
    for name in ("globex", "cyberdyne"):  # seen in training, and never seen
        instruction = words.tokenize(f"Transfer 5 cents from {name} to x.")
        call = words.tokenize(f'{{"source": "{name}"}}')
        pieces = words.tokenize(name)
        assert any(instruction[i : i + len(pieces)] == pieces for i in range(len(instruction)))
        assert any(call[i : i + len(pieces)] == pieces for i in range(len(call)))
    assert "Ġglobex" in gpt2.tokenize("from globex") and "Ġglobex" not in gpt2.tokenize('"globex"')
    assert words.tokenize("5007") == ["5", "0", "0", "7"]  # digits one by one
    for text in [*texts[:2], "Move é\n\n  x\t{}", "a  b"]:
        assert words.decode(words(text, add_special_tokens=False)["input_ids"]) == text
    with pytest.raises(ValueError, match="unknown pretokenizer"):
        build_tokenizer(texts, 300, "chars")


def test_a_token_length_cap_splits_trained_names_as_unseen_ones_are() -> None:
    """Uncapped, a name seen in training is one token and an unseen one several; capped at 4
    characters, both are several, and text still round-trips."""
    texts = ["Transfer 500 cents from globex to checking.", '{"source": "globex", "target": "checking"}'] * 20
    free = build_tokenizer(texts, 300, "words")
    capped = build_tokenizer(texts, 300, "words", max_token_length=4)
    assert free.tokenize("globex") == ["globex"] and len(free.tokenize("cyberdyne")) > 1
    assert len(capped.tokenize("globex")) > 1 and len(capped.tokenize("checking")) > 1
    longest = {
        name: max(len(token) for token in tokenizer.get_vocab() if token not in ("<pad>", "<eos>"))
        for name, tokenizer in (("free", free), ("capped", capped))
    }
    assert longest["capped"] <= 4 < longest["free"]
    for text in [*texts[:2], "cyberdyne é\n  x"]:
        assert capped.decode(capped(text, add_special_tokens=False)["input_ids"]) == text
    with pytest.raises(ConfigError, match=r"tiny_max_token_length must be >= 0"):
        build_config(None, ["model.tiny_max_token_length=-1"])


def test_words_numbers_pretokenizer_makes_every_digit_group_one_token() -> None:
    """Numbers never seen in training are still whole tokens: groups of up to three digits, read
    left to right, the same in the instruction and in the call (copying 41225 is copying 2 tokens)."""
    from rlvr.trainer.model import DIGIT_GROUPS

    texts = ["Transfer 500 cents from globex to acme.", '{"amount": 500, "day": "2026-03-14"}'] * 20
    numbers = build_tokenizer(texts, 300, "words_numbers")
    assert len(DIGIT_GROUPS) == 1110 and len(numbers) >= 1110
    assert numbers.tokenize("41225") == ["412", "25"] and numbers.tokenize("007") == ["007"]
    assert numbers.tokenize("SKU-983")[-2:] == ["-", "983"]
    for amount in ("7", "41225", "1000000", "12.05"):
        pieces = numbers.tokenize(amount)
        assert numbers.tokenize(f"Transfer {amount} cents")[2 : 2 + len(pieces)] == pieces
        call = numbers.tokenize(f'{{"amount": {amount}}}')
        assert any(call[i : i + len(pieces)] == pieces for i in range(len(call)))
    assert all(len(numbers.tokenize(group)) == 1 for group in DIGIT_GROUPS)
    for text in [*texts, "Move é 0042\n\n  x\t{}", "a  b 9"]:
        assert numbers.decode(numbers(text, add_special_tokens=False)["input_ids"]) == text
    assert build_tokenizer(texts, 300, "words").tokenize("41225") == ["4", "1", "2", "2", "5"]


def test_compact_template_shortens_tool_results_and_keeps_their_content(tokenizer: Any) -> None:
    from rlvr.trainer.episodes import CompactTemplate, compact_observation, make_template

    results = (
        '[{"role": "tool", "tool_call_id": "call_0", "name": "get_balance", "content": "{\\"result\\": 83743}"}, '
        '{"role": "tool", "tool_call_id": "call_1", "name": "read_file", "content": "{\\"error\\": \\"no such file: /a\\"}"}]'
    )
    assert compact_observation(results) == "get_balance -> 83743\nread_file -> error: no such file: /a"
    listing = '[{"role": "tool", "tool_call_id": "c", "name": "list_files", "content": "{\\"result\\": [\\"/d/x.txt\\"]}"}]'
    assert compact_observation(listing) == 'list_files -> ["/d/x.txt"]'
    malformed = '{"error": "malformed turn: not valid JSON"}'
    assert compact_observation(malformed) == "error -> malformed turn: not valid JSON"
    for other in ("plain text", '{"x": 1}', "[1, 2]", ""):
        assert compact_observation(other) == other
    template = make_template(tokenizer, "compact", [tokenizer.eos_token_id])
    assert isinstance(template, CompactTemplate)
    ids = template.observation_ids([], results)
    assert tokenizer.decode(ids) == "\nget_balance -> 83743\nread_file -> error: no such file: /a\n"
    assert len(ids) < len(PlainTemplate(tokenizer).observation_ids([], results)) / 2


def test_noisy_episode_teacher_makes_ordinary_mistakes_the_verifier_catches(tool_pack: Any) -> None:
    """A flawed reference changes one thing (an entity of the same shape from the world, a nearby
    number, a wrong answer, or stopping before the last tool turn), and the real grader fails it."""
    from rlvr.task_packs.tool_tasks import turn_text

    grader = make_grader(tool_pack)
    cells: dict[tuple[str, int], list[Task]] = {}
    for task in tool_pack.tasks("train"):
        if task.meta.get("procedural"):
            cells.setdefault((task.meta["template"], task.difficulty), []).append(task)
    tasks = [task for cell in cells.values() for task in cell[:2]]  # every template and level
    rng = random.Random(7)
    flawed = [teachers.flawed_reference(t, rng) for t in tasks]
    assert all(f is not None for f in flawed)
    kinds = {"entity": 0, "number": 0, "answer": 0, "stopped": 0}
    for task, wrong in zip(tasks, flawed, strict=True):
        assert wrong is not None and wrong != task.hidden["reference"]
        reference = task.hidden["reference"]
        if len(wrong) < len(reference):
            kinds["stopped"] += 1
            continue
        changed = [(a, b) for a, b in zip(reference, wrong, strict=True) if a != b]
        assert len(changed) == 1  # one mistake, in one turn
        before, after = changed[0]
        if isinstance(before, str):
            kinds["answer"] += 1
            continue
        values = [
            (x, y)
            for c, d in zip(before, after, strict=True)
            for x, y in zip(c["arguments"].values(), d["arguments"].values(), strict=True)
            if x != y
        ]
        assert len(values) == 1
        x, y = values[0]
        if isinstance(x, str):  # another entity of the world, of the same shape
            assert teachers._shape(x) == teachers._shape(y) and y in json.dumps(task.hidden["state"])
            kinds["entity"] += 1
        else:
            assert type(x) is type(y) and x != y
            kinds["number"] += 1
    assert all(count > 0 for count in kinds.values()), kinds
    verdicts = grader.grade_many(
        [t.id for t in tasks], ["\n".join(turn_text(turn) for turn in wrong or []) for wrong in flawed]
    )
    failed = sum(not v.passed for v in verdicts)
    assert failed >= 0.9 * len(tasks), f"only {failed}/{len(tasks)} flawed references fail"
    assert all(v.error is None for v in verdicts)


def test_episode_teacher_makes_only_the_chosen_kinds_of_mistake(tool_pack: Any) -> None:
    """`mistakes` narrows the teacher: stopping early only ever drops the last tool turn (earlier turns
    intact); answer-only mistakes touch a final answer and nothing else, and do not fit acting tasks."""
    tasks = [t for t in tool_pack.tasks("train") if t.meta.get("procedural")][::40]
    rng = random.Random(11)
    for task in tasks:
        reference = task.hidden["reference"]
        stopped = teachers.flawed_reference(task, rng, ("stop_early",))
        tool_turns = [i for i, turn in enumerate(reference) if isinstance(turn, list)]
        assert stopped == [*reference[: tool_turns[-1]], "done"]
        answered = teachers.flawed_reference(task, rng, ("answer",))
        answers = [i for i, turn in enumerate(reference) if isinstance(turn, str) and turn != "done"]
        if answered is None:
            continue
        assert answers and len(answered) == len(reference)
        changed = [i for i, (a, b) in enumerate(zip(reference, answered, strict=True)) if a != b]
        assert len(changed) == 1 and changed[0] in answers
    assert any(teachers.flawed_reference(t, rng, ("answer",)) is None for t in tasks)  # acting tasks
    assert any(teachers.flawed_reference(t, rng, ("answer",)) is not None for t in tasks)


def test_teacher_transcripts_carry_mistakes_at_the_bug_rate(tool_pack: Any) -> None:
    grader = make_grader(tool_pack)
    tasks = distinct_prompts(tool_pack, 60)
    clean = teachers.teacher_transcripts("rlvr/Tool-v0", tool_pack, grader, tasks)
    assert teachers.teacher_transcripts("rlvr/Tool-v0", tool_pack, grader, tasks, bug_rate=0.0) == clean
    noisy = teachers.teacher_transcripts("rlvr/Tool-v0", tool_pack, grader, tasks, bug_rate=0.5, seed=3)
    again = teachers.teacher_transcripts("rlvr/Tool-v0", tool_pack, grader, tasks, bug_rate=0.5, seed=3)
    assert noisy == again  # reproducible from the seed
    differ = sum(a != b for a, b in zip(clean, noisy, strict=True))
    assert 15 <= differ <= 45, differ
    for (_, good), (_, bad) in zip(clean, noisy, strict=True):
        assert bad[0] == good[0]  # the same instruction; a mistake is only ever in the teacher's turns


def test_a_capped_warm_start_keeps_every_template(tool_pack: Any) -> None:
    """`[sft] examples` below the pack's count draws across the list, never a prefix (the pack lists
    its tasks template by template); the draw follows the seed and keeps the pack's order."""
    tasks = up_to_difficulty(tool_pack.tasks("train"), 2)
    assert spread_sample(tasks, len(tasks) + 1, seed=0) == tasks
    kept = spread_sample(tasks, len(tasks) // 4, seed=0)
    assert len(kept) == len(tasks) // 4
    procedural = {t.meta["template"] for t in tasks if t.meta.get("procedural")}
    assert len(procedural) >= 14 and procedural <= {t.meta.get("template") for t in kept}
    position = {t.id: i for i, t in enumerate(tasks)}
    assert [position[t.id] for t in kept] == sorted(position[t.id] for t in kept)
    assert spread_sample(tasks, len(tasks) // 4, seed=0) == kept
    assert spread_sample(tasks, len(tasks) // 4, seed=1) != kept
