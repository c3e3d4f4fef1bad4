"""Sampling completions and scoring token log-probs with one consistent layout.

A batch row is [left-padded prompt | completion]. Position ids follow the attention mask exactly as
`generate` builds them, so the log-probs computed here are those of the distribution the tokens
were sampled from (softmax(logits / temperature), no top-k/top-p).
"""

from __future__ import annotations

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
    mask: torch.Tensor  # (N, C) float
    truncated: torch.Tensor  # (N,) bool: no EOS within the budget

    @property
    def lengths(self) -> torch.Tensor:
        return self.mask.sum(-1)

    def rows(self, index: slice | torch.Tensor) -> Sequences:
        return Sequences(
            self.prompt_ids[index],
            self.prompt_mask[index],
            self.completion_ids[index],
            self.mask[index],
            self.truncated[index],
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

        return Sequences(
            torch.cat([left(p.prompt_ids, pad_id) for p in parts]),
            torch.cat([left(p.prompt_mask, 0) for p in parts]),
            torch.cat([right(p.completion_ids, pad_id) for p in parts]),
            torch.cat([right(p.mask, 0.0) for p in parts]),
            torch.cat([p.truncated for p in parts]),
        )


def encode_prompts(tokenizer: Any, prompts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    tokenizer.padding_side = "left"
    encoded = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    return encoded["input_ids"], encoded["attention_mask"]


def sampling_config(
    tokenizer: Any, temperature: float, max_new_tokens: int, greedy: bool = False
) -> GenerationConfig:
    """Pure sampling at `temperature`: every logits processor a model's own generation config may
    carry (top-k, top-p, repetition penalty) is switched off, so old log-probs match the sampler."""
    settings: dict[str, Any] = (
        {"do_sample": False} if greedy else {"do_sample": True, "temperature": temperature, "top_k": 0}
    )
    return GenerationConfig(
        **settings,
        top_p=1.0,
        repetition_penalty=1.0,
        max_new_tokens=max_new_tokens,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )


@torch.no_grad()
def generate(
    model: Any,
    tokenizer: Any,
    prompts: list[str],
    temperature: float,
    max_new_tokens: int,
    greedy: bool = False,
) -> Sequences:
    prompt_ids, prompt_mask = encode_prompts(tokenizer, prompts)
    output = model.generate(
        input_ids=prompt_ids,
        attention_mask=prompt_mask,
        generation_config=sampling_config(tokenizer, temperature, max_new_tokens, greedy),
    )
    completion_ids = output[:, prompt_ids.shape[1] :]
    if (
        completion_ids.shape[1] == 0
    ):  # every row ended at once is impossible (EOS is a token); keep shape sane
        completion_ids = torch.full((len(prompts), 1), tokenizer.eos_token_id)
    mask, truncated = completion_mask(completion_ids, tokenizer.eos_token_id)
    truncated &= completion_ids.shape[1] >= max_new_tokens
    return Sequences(prompt_ids, prompt_mask, completion_ids, mask, truncated)


def completion_logprobs(
    model: Any, sequences: Sequences, temperature: float, with_entropy: bool = False
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(log-probs of the completion tokens (N, C), their entropies or None). Gradients flow unless
    the caller disables them."""
    input_ids = torch.cat([sequences.prompt_ids, sequences.completion_ids], dim=1)
    attention_mask = torch.cat([sequences.prompt_mask, sequences.mask.to(sequences.prompt_mask.dtype)], dim=1)
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
