"""A tiny local chat model that makes given tool calls: the stand-in for an inference server in the
agent-adapter tests (no download, no training). The tokenizer is a BPE trained here, with each scripted
tool call added as one token, and TRL's Qwen2.5 chat template, so calls render and parse as Qwen's. The
model is a real 2-layer Llama whose attention and MLP outputs are zeroed: the residual stream is the
current token's embedding, and the LM head is set so that each token of the script is followed by the
next — after any generation prompt the model says the script, with near certainty even when sampled."""

from __future__ import annotations

import json
from typing import Any

import torch
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
from trl.chat_template_utils import qwen2_5_chat_template

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"]
GENERATION_PROMPT = "<|im_start|>assistant\n"


def tool_call_text(name: str, arguments: dict[str, Any]) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"


def render(messages: list[dict[str, Any]], tools: list[Any] | None = None) -> str:
    """The generation prompt of a conversation under the Qwen2.5 template (no vocabulary involved)."""
    return tokenizer_for(["x"], []).apply_chat_template(
        messages, tools=tools, add_generation_prompt=True, tokenize=False
    )


def tokenizer_for(texts: list[str], script: list[str], vocab_size: int = 400) -> PreTrainedTokenizerFast:
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer)
    tokenizer.add_tokens([AddedToken("assistant\n", normalized=False)])
    tokenizer.add_tokens([AddedToken(text, normalized=False) for text in script])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        pad_token="<|endoftext|>",
        eos_token="<|im_end|>",
        additional_special_tokens=SPECIAL[1:],
    )
    fast.chat_template = qwen2_5_chat_template
    fast.padding_side = "left"
    return fast


def scripted_model(tokenizer: PreTrainedTokenizerFast, script: list[str], seed: int = 0) -> LlamaForCausalLM:
    """After a generation prompt, the model says `script` (each item one token) and then <|im_end|>."""
    torch.manual_seed(seed)
    hidden = 64
    model = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=len(tokenizer),
            hidden_size=hidden,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=4,
            max_position_embeddings=8192,
            tie_word_embeddings=False,
            pad_token_id=tokenizer.pad_token_id,
            eos_token_id=tokenizer.eos_token_id,
            bos_token_id=None,
        )
    )
    start = tokenizer.convert_tokens_to_ids("assistant\n")
    chain = [start, *(tokenizer.convert_tokens_to_ids(text) for text in script), tokenizer.eos_token_id]
    assert len(set(chain)) == len(chain), "each scripted step must be its own token"
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
        embeddings = model.model.embed_tokens.weight
        head = model.lm_head.weight
        head.zero_()
        for current, following in zip(chain, chain[1:], strict=False):
            direction = embeddings[current] / embeddings[current].pow(2).mean().sqrt()
            head[following] += direction
    model.eval()
    return model
