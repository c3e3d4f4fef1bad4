"""Sampling completions and scoring token log-probs with one consistent layout.

A batch row is [left-padded prompt | completion]. Position ids follow the attention mask exactly as
`generate` builds them, so the log-probs computed here are those of the distribution the tokens
were sampled from (softmax(logits / temperature), no top-k/top-p). Every generation setting is
passed explicitly and the model's own `generation_config.json` is set aside while sampling, so a
checkpoint's saved defaults (top-k, repetition penalty, suppressed tokens, ...) never change what
is sampled behind the log-probs' back.

A multi-turn episode uses the same layout: its "completion" is everything after the first prompt
(assistant turns and the environment's observations); `attention` marks every real token and
`mask` only the tokens the policy sampled, so observations are context but never part of the loss.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
from transformers import GenerationConfig

from rlvr.trainer.losses import token_entropy, token_logprobs
from rlvr.trainer.masks import completion_mask


@dataclass
class Sequences:
    """Prompts and completions of a batch; `mask` marks completion tokens that count (through EOS)."""

    prompt_ids: torch.Tensor  # (N, P), left padded
    prompt_mask: torch.Tensor  # (N, P)
    completion_ids: torch.Tensor  # (N, C), padded after EOS
    mask: torch.Tensor  # (N, C) float: tokens the policy sampled and the loss counts
    truncated: torch.Tensor  # (N,) bool: no EOS within the budget
    attention: torch.Tensor | None = None  # (N, C) float: every real token; None = `mask` (single turn)

    @property
    def lengths(self) -> torch.Tensor:
        return self.mask.sum(-1)

    @property
    def completion_attention(self) -> torch.Tensor:
        return self.mask if self.attention is None else self.attention

    def rows(self, index: slice | torch.Tensor) -> Sequences:
        return Sequences(
            self.prompt_ids[index],
            self.prompt_mask[index],
            self.completion_ids[index],
            self.mask[index],
            self.truncated[index],
            None if self.attention is None else self.attention[index],
        )

    @staticmethod
    def concat(parts: list[Sequences], pad_id: int) -> Sequences:
        """Stack batches of different widths: prompts re-padded on the left, completions on the right."""
        prompt_width = max(p.prompt_ids.shape[1] for p in parts)
        completion_width = max(p.completion_ids.shape[1] for p in parts)

        def left(t: torch.Tensor, value: float) -> torch.Tensor:
            return torch.nn.functional.pad(t, (prompt_width - t.shape[1], 0), value=value)

        def right(t: torch.Tensor, value: float) -> torch.Tensor:
            return torch.nn.functional.pad(t, (0, completion_width - t.shape[1]), value=value)

        attention = None
        if any(p.attention is not None for p in parts):
            attention = torch.cat([right(p.completion_attention, 0.0) for p in parts])
        return Sequences(
            torch.cat([left(p.prompt_ids, pad_id) for p in parts]),
            torch.cat([left(p.prompt_mask, 0) for p in parts]),
            torch.cat([right(p.completion_ids, pad_id) for p in parts]),
            torch.cat([right(p.mask, 0.0) for p in parts]),
            torch.cat([p.truncated for p in parts]),
            attention,
        )


def micro_batches(sequences: Sequences, max_rows: int, max_tokens: int = 0) -> list[slice]:
    """Consecutive row slices of at most `max_rows` rows and, when `max_tokens` > 0, at most
    `max_tokens` tokens counted as rows x padded length (at least one row per slice)."""
    rows = max_rows
    if max_tokens > 0:
        width = sequences.prompt_ids.shape[1] + sequences.completion_ids.shape[1]
        rows = max(1, min(max_rows, max_tokens // max(width, 1)))
    count = sequences.prompt_ids.shape[0]
    return [slice(s, s + rows) for s in range(0, count, rows)]


def encode_prompts(tokenizer: Any, prompts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    tokenizer.padding_side = "left"
    encoded = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    return encoded["input_ids"], encoded["attention_mask"]


def stop_ids_of(tokenizer: Any, stop_ids: Sequence[int] | None = None) -> list[int]:
    """The token ids that end a turn: EOS first, then any extra stop ids (e.g. a chat template's
    end-of-turn token), without repeats."""
    return list(dict.fromkeys([int(tokenizer.eos_token_id), *(int(i) for i in stop_ids or ())]))


def sampling_config(
    tokenizer: Any,
    temperature: float,
    max_new_tokens: int,
    greedy: bool = False,
    stop_ids: Sequence[int] | None = None,
) -> GenerationConfig:
    """Pure sampling at `temperature`, every setting given: no logits processor (top-k, top-p,
    min-p, typical, repetition/n-gram penalties, minimum length, suppressed or forced tokens) acts,
    so the old log-probs are those of the distribution that was sampled."""
    sampling: dict[str, Any] = {
        "do_sample": True,
        "temperature": temperature,
        "top_k": 0,
        "top_p": 1.0,
        "min_p": 0.0,
        "typical_p": 1.0,
        "epsilon_cutoff": 0.0,
        "eta_cutoff": 0.0,
    }
    return GenerationConfig(
        **({"do_sample": False} if greedy else sampling),
        repetition_penalty=1.0,
        encoder_repetition_penalty=1.0,
        no_repeat_ngram_size=0,
        length_penalty=1.0,
        min_new_tokens=0,
        max_new_tokens=max_new_tokens,
        num_beams=1,
        num_return_sequences=1,
        renormalize_logits=False,
        remove_invalid_values=False,
        use_cache=True,
        eos_token_id=stop_ids_of(tokenizer, stop_ids),
        pad_token_id=tokenizer.pad_token_id,
    )


@contextmanager
def own_generation_defaults(model: Any) -> Iterator[None]:
    """While sampling, the model's saved generation config is replaced by the library defaults:
    `generate` fills every setting left unset from it, so a checkpoint's generation_config.json
    (top_k = 20, suppress_tokens, forced ids, ...) would otherwise change sampling silently."""
    target = model.get_base_model() if hasattr(model, "get_base_model") else model
    saved = getattr(target, "generation_config", None)
    target.generation_config = GenerationConfig()
    try:
        yield
    finally:
        target.generation_config = saved


@torch.no_grad()
def generate_ids(
    model: Any,
    tokenizer: Any,
    prompt_ids: torch.Tensor,
    prompt_mask: torch.Tensor,
    temperature: float,
    max_new_tokens: int,
    greedy: bool = False,
    stop_ids: Sequence[int] | None = None,
) -> Sequences:
    """Sample after already tokenised, left-padded prompts."""
    config = sampling_config(tokenizer, temperature, max_new_tokens, greedy, stop_ids)
    with own_generation_defaults(model):
        output = model.generate(input_ids=prompt_ids, attention_mask=prompt_mask, generation_config=config)
    completion_ids = output[:, prompt_ids.shape[1] :]
    if (
        completion_ids.shape[1] == 0
    ):  # every row ended at once is impossible (EOS is a token); keep shape sane
        completion_ids = torch.full((len(prompt_ids), 1), tokenizer.eos_token_id)
    mask, truncated = completion_mask(completion_ids, stop_ids_of(tokenizer, stop_ids))
    truncated &= completion_ids.shape[1] >= max_new_tokens
    return Sequences(prompt_ids, prompt_mask, completion_ids, mask, truncated)


def generate(
    model: Any,
    tokenizer: Any,
    prompts: list[str],
    temperature: float,
    max_new_tokens: int,
    greedy: bool = False,
    stop_ids: Sequence[int] | None = None,
) -> Sequences:
    prompt_ids, prompt_mask = encode_prompts(tokenizer, prompts)
    return generate_ids(
        model, tokenizer, prompt_ids, prompt_mask, temperature, max_new_tokens, greedy, stop_ids
    )


def completion_logprobs(
    model: Any, sequences: Sequences, temperature: float, with_entropy: bool = False
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(log-probs of the completion tokens (N, C), their entropies or None). Gradients flow unless
    the caller disables them."""
    input_ids = torch.cat([sequences.prompt_ids, sequences.completion_ids], dim=1)
    completion_attention = sequences.completion_attention.to(sequences.prompt_mask.dtype)
    attention_mask = torch.cat([sequences.prompt_mask, completion_attention], dim=1)
    position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)
    completion_length = sequences.completion_ids.shape[1]
    inputs = {
        "input_ids": input_ids,
        "attention_mask": attention_mask,
        "position_ids": position_ids,
        "use_cache": False,
    }
    try:  # only the positions that predict completion tokens need logits (the last prompt one on)
        logits = model(**inputs, logits_to_keep=completion_length + 1).logits
    except TypeError:  # an architecture without `logits_to_keep`
        logits = model(**inputs).logits
    logits = logits[:, -completion_length - 1 : -1, :]
    logp = token_logprobs(logits, sequences.completion_ids, temperature)
    entropy = None
    if with_entropy:
        with torch.no_grad():
            entropy = token_entropy(logits, temperature)
    return logp, entropy


def decode(tokenizer: Any, sequences: Sequences) -> list[str]:
    """Completion texts without EOS and padding."""
    texts = []
    for row, mask in zip(sequences.completion_ids, sequences.mask, strict=True):
        kept = row[mask.bool()].tolist()
        texts.append(tokenizer.decode(kept, skip_special_tokens=True))
    return texts
