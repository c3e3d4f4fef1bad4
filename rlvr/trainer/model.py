"""Policy and reference models: load a local Hugging Face causal LM, or build the tiny demo model
(a byte-level BPE tokenizer trained on generated text and a small Llama-style decoder) with no hub."""

from __future__ import annotations

import copy
import json
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import torch
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    LlamaConfig,
    LlamaForCausalLM,
    PreTrainedTokenizerFast,
)

from rlvr.trainer.config import ConfigError, ModelConfig

PAD, EOS = "<pad>", "<eos>"
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


# "words": a run of letters (and `_`), one digit, a run of punctuation, or a run of whitespace.
WORD_PIECES = r"[^\W\d]+|\d|[^\w\s]+|\s+"
# "words_numbers": the same, but a number is read left to right in groups of up to three digits, and
# every such group ("7", "07", "007", ..., "999") is one token of the vocabulary (as in Llama 3's and
# GPT-4's tokenizers): copying a number is copying a few whole tokens, not one digit at a time.
DIGIT_GROUPS = [f"{n:0{width}d}" for width in (1, 2, 3) for n in range(10**width)]


def build_tokenizer(
    texts: list[str], vocab_size: int, pretokenizer: str = "bytelevel", max_token_length: int = 0
) -> PreTrainedTokenizerFast:
    """A byte-level BPE trained on `texts` (any text stays encodable: bytes are the base alphabet).
    `pretokenizer="words"` splits words, digits, punctuation and spaces apart before the merges, so a
    word is the same tokens wherever it stands (after a space, inside quotes, after a slash);
    `"words_numbers"` also makes every group of up to three digits one token (`DIGIT_GROUPS`).
    `max_token_length` > 0 caps the characters a merged token may hold: a trained name then spans
    several tokens, as a name never seen in training does."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    if pretokenizer in ("words", "words_numbers"):
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(WORD_PIECES), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    elif pretokenizer == "bytelevel":
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    else:
        raise ValueError(f"unknown pretokenizer {pretokenizer!r}: bytelevel, words or words_numbers")
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[PAD, EOS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
        max_token_length=max_token_length or None,
    )
    tokenizer.train_from_iterator(texts, trainer)
    if pretokenizer == "words_numbers":  # matched before pre-tokenization, longest first
        tokenizer.add_tokens([AddedToken(group, normalized=False) for group in DIGIT_GROUPS])
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token=PAD, eos_token=EOS)


def build_tiny_model(tokenizer: PreTrainedTokenizerFast, config: ModelConfig, seed: int) -> LlamaForCausalLM:
    torch.manual_seed(seed)
    pad_id, eos_id = int(tokenizer.vocab[PAD]), int(tokenizer.vocab[EOS])
    model_config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=config.tiny_hidden,
        intermediate_size=config.tiny_hidden * 3,
        num_hidden_layers=config.tiny_layers,
        num_attention_heads=config.tiny_heads,
        num_key_value_heads=config.tiny_heads,
        max_position_embeddings=4096,  # RoPE: no learned positions, so this only caps warnings
        tie_word_embeddings=True,
        pad_token_id=pad_id,
        eos_token_id=eos_id,
        bos_token_id=None,
        attention_dropout=0.0,
    )
    return LlamaForCausalLM(model_config)


def check_model_path(path: str) -> None:
    """Fail early, naming the fix, for a path that cannot be a local causal LM."""
    where = Path(path)
    if not where.exists():
        raise ConfigError(
            f"model path {path!r} does not exist; pass a local Hugging Face model directory "
            "(holding config.json and the weights), or leave [model] path empty for the tiny demo model"
        )
    if not (where / "config.json").is_file():
        raise ConfigError(f"model path {path!r} has no config.json; is it a Hugging Face model directory?")
    if not any(
        (where / name).is_file() for name in ("tokenizer.json", "tokenizer_config.json", "tokenizer.model")
    ):
        raise ConfigError(f"model path {path!r} has no tokenizer files; save the tokenizer next to the model")
    try:
        architectures = json.loads((where / "config.json").read_text()).get("architectures") or []
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"model path {path!r}: config.json is unreadable ({exc})") from exc
    if architectures and not any(name.endswith(("ForCausalLM", "LMHeadModel")) for name in architectures):
        raise ConfigError(f"model at {path!r} is a {architectures[0]}, not a causal language model")


def load_pretrained(path: str, dtype: str = "float32") -> tuple[Any, Any]:
    check_model_path(path)
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    if tokenizer.eos_token_id is None:
        raise ConfigError(f"the tokenizer at {path!r} has no EOS token; completions could never end")
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True, dtype=DTYPES[dtype])
    return model, tokenizer


def disable_dropout(model: torch.nn.Module) -> None:
    """Dropout would make the old/new log-prob ratio noisy: zero every dropout layer."""
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    model.eval()  # the policy always runs in eval mode; gradients still flow


def add_lora(model: Any, config: ModelConfig) -> Any:
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError as exc:
        raise ConfigError("[model] lora_rank > 0 needs peft: pip install 'rlvr[train]'") from exc
    lora = LoraConfig(
        r=config.lora_rank,
        lora_alpha=int(config.lora_alpha),
        lora_dropout=0.0,
        target_modules=config.lora_target_modules,
        task_type="CAUSAL_LM",
    )
    return get_peft_model(model, lora)


class ReferencePolicy:
    """The frozen policy the KL term pulls towards: a frozen copy of the starting weights, or, with
    LoRA, the same model with its adapter disabled (no second copy in memory)."""

    def __init__(self, policy: Any, uses_lora: bool) -> None:
        self.uses_lora = uses_lora
        self.model = policy if uses_lora else copy.deepcopy(policy)
        if not uses_lora:
            self.model.requires_grad_(False)
            self.model.eval()

    def context(self) -> AbstractContextManager[Any]:
        return self.model.disable_adapter() if self.uses_lora else nullcontext()


def trainable_parameters(model: torch.nn.Module) -> list[torch.nn.Parameter]:
    return [p for p in model.parameters() if p.requires_grad]


def policy_from(base: Any, config: ModelConfig, checkpoint: Path | None) -> Any:
    """The policy GRPO trains: `base` (with a fresh LoRA adapter when `lora_rank` > 0), or the
    checkpoint's weights (or adapter) when resuming."""
    if config.lora_rank > 0:
        if checkpoint is None:
            return add_lora(base, config)
        from peft import PeftModel

        return PeftModel.from_pretrained(base, checkpoint / "model", is_trainable=True)
    if checkpoint is None:
        return base
    return AutoModelForCausalLM.from_pretrained(checkpoint / "model", local_files_only=True, dtype=base.dtype)
