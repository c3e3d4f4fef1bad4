"""`hf:PATH` — a local transformers causal LM, generating in left-padded batches (no hub access)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rlvr.bench.policies.base import (
    Generation,
    Policy,
    PolicyError,
    Request,
    Settings,
    chat_messages,
    truncate_at_stop,
)


class HFPolicy(Policy):
    """Options: `batch_size` (prompts per generate call), `device` (default cpu), `dtype`, `threads`
    (torch CPU threads for this process; on a busy machine fewer threads can be much faster)."""

    def __init__(
        self,
        spec: str,
        path: str | Path,
        settings: Settings | None = None,
        *,
        batch_size: int = 8,
        device: str = "cpu",
        dtype: str | None = None,
        threads: int | None = None,
    ) -> None:
        super().__init__(spec, settings)
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:
            raise PolicyError(
                f"hf: policies need the train extra (pip install 'rlvr[train]'): {exc}"
            ) from exc
        self.path = Path(path)
        if not self.path.is_dir():
            raise PolicyError(
                f"hf: model directory {str(self.path)!r} does not exist (hub downloads are not used)"
            )
        if batch_size < 1:
            raise PolicyError(f"batch size must be at least 1, got {batch_size}")
        if threads is not None:
            if threads < 1:
                raise PolicyError(f"threads must be at least 1, got {threads}")
            torch.set_num_threads(threads)
        self.preferred_batch = batch_size
        self.device = device
        self._torch = torch
        torch_dtype = getattr(torch, dtype, None) if dtype else "auto"
        if dtype and not isinstance(torch_dtype, torch.dtype):
            raise PolicyError(f"hf: unknown torch dtype {dtype!r} (e.g. float32, bfloat16)")
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self.path, local_files_only=True)
            model: Any = AutoModelForCausalLM.from_pretrained(
                self.path, local_files_only=True, dtype=torch_dtype
            )
            self.model: Any = model.to(device)
        except (OSError, ValueError) as exc:
            raise PolicyError(f"hf: cannot load a causal LM from {str(self.path)!r}: {exc}") from exc
        self.model.eval()
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        fmt = self.settings.prompt_format
        self.use_chat = fmt == "chat" or (
            fmt == "auto" and bool(getattr(self.tokenizer, "chat_template", None))
        )
        if self.use_chat and not getattr(self.tokenizer, "chat_template", None):
            raise PolicyError(f"hf: {str(self.path)!r} has no chat template; use --prompt-format raw")
        self.context = self._context_length()

    def _context_length(self) -> int | None:
        config = self.model.config
        for name in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
            value = getattr(config, name, None)
            if isinstance(value, int) and value > 0:
                return value
        return None

    def _render(self, prompt: str) -> str:
        if not self.use_chat:
            return prompt
        rendered = self.tokenizer.apply_chat_template(
            chat_messages(prompt, self.settings.system), tokenize=False, add_generation_prompt=True
        )
        return str(rendered)

    def generate(self, requests: list[Request]) -> list[Generation]:
        out: list[Generation] = []
        for start in range(0, len(requests), self.preferred_batch):
            batch = requests[start : start + self.preferred_batch]
            try:
                out.extend(self._generate_batch(batch))
            except Exception as exc:  # a failed batch is recorded per sample, never dropped
                out.extend(
                    Generation.failed(f"generation failed: {type(exc).__name__}: {exc}") for _ in batch
                )
        return out

    def _generate_batch(self, batch: list[Request]) -> list[Generation]:
        torch, settings = self._torch, self.settings
        texts = [self._render(r.prompt) for r in batch]
        lengths = [len(self.tokenizer(t, add_special_tokens=not self.use_chat)["input_ids"]) for t in texts]
        results: list[Generation | None] = [None] * len(batch)
        runnable = []
        for i, length in enumerate(lengths):
            if self.context is not None and length + settings.max_tokens > self.context:
                results[i] = Generation.failed(
                    f"prompt of {length} tokens + max_tokens {settings.max_tokens} exceeds the model's "
                    f"context of {self.context} tokens"
                )
            else:
                runnable.append(i)
        if runnable:
            started = time.perf_counter()
            encoded = self.tokenizer(
                [texts[i] for i in runnable],
                return_tensors="pt",
                padding=True,
                add_special_tokens=not self.use_chat,
            ).to(self.device)
            torch.manual_seed(batch[runnable[0]].seed)
            sampling: dict[str, Any] = (
                {"do_sample": True, "temperature": settings.temperature, "top_p": settings.top_p}
                if settings.temperature > 0
                else {"do_sample": False}
            )
            with torch.no_grad():
                generated = self.model.generate(
                    **encoded,
                    max_new_tokens=settings.max_tokens,
                    pad_token_id=self.tokenizer.pad_token_id,
                    **sampling,
                )
            per_sample = (time.perf_counter() - started) / len(runnable)
            new_tokens = generated[:, encoded["input_ids"].shape[1] :]
            for row, i in enumerate(runnable):
                results[i] = self._decode(new_tokens[row], lengths[i], per_sample)
        return [r if r is not None else Generation.failed("not generated") for r in results]

    def _decode(self, token_ids: Any, prompt_tokens: int, latency_s: float) -> Generation:
        ids = token_ids.tolist()
        eos = self.tokenizer.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos]) - {None}
        finish = "length"
        for position, token in enumerate(ids):
            if token in eos_ids:
                ids, finish = ids[: position + 1], "stop"
                break
        text = self.tokenizer.decode(ids, skip_special_tokens=True)
        text, stopped = truncate_at_stop(text, self.settings.stop)
        return Generation(
            text=text,
            prompt_tokens=prompt_tokens,
            completion_tokens=len(ids),
            latency_s=latency_s,
            finish_reason="stop" if stopped else finish,
        )

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "chat": self.use_chat}
