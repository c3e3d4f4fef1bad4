"""Screen a warm start of the single-turn demo without GRPO: build the tiny model exactly as
`rlvr train` does (same config, same teacher, same SFT), then decode every held-out `tiny-functions`
task greedily and report, per held-out template, how often the body is the reference one and which
operator the model wrote. Cheap (no grader, no sandbox): it tells whether the relation-word ->
operator mapping formed in the warm start before a full run is spent on a change.

    PYTHONPATH=. python benchmarks/screen_warm_start.py --set run.seed=1 [--set sft.steps=800 ...]

The score is textual (the completion equals the reference body, spaces normalised); the real
held-out pass rate comes from `rlvr train`'s graded evaluation.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import torch

from rlvr.task_packs.registry import load_pack
from rlvr.task_packs.tiny_functions import instances
from rlvr.trainer.config import build_config
from rlvr.trainer.rollout import completion_logprobs, decode, generate
from rlvr.trainer.sft import encode_pairs
from rlvr.trainer.warm_start import starting_policy

OPERATOR_TOKENS = r"==|>=|<=|>|<|\+|-|\*"


def written_operator(body: str) -> str:
    """The first operator token in a body (`>=`, `==`, `-`, ...), or "" when there is none."""
    found = re.findall(OPERATOR_TOKENS, body)
    return found[0] if found else ""


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--set", dest="assignments", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--json", type=Path, help="write the summary here too")
    args = parser.parse_args()
    config = build_config(None, args.assignments)
    torch.set_num_threads(max(config.run.threads, 1))
    pack = load_pack(config.run.pack)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as directory:
        model, tokenizer, info = starting_policy(config, Path(directory), pack, None, lambda _: None)  # type: ignore[arg-type]
    warm_seconds = time.perf_counter() - started
    model.eval()
    held_out = instances("test")
    prompts = [i.prompt() for i in held_out]
    texts = decode(
        tokenizer, generate(model, tokenizer, prompts, 1.0, config.grpo.max_new_tokens, greedy=True)
    )
    with torch.no_grad():  # teacher-forced: the probability the warm start gives the reference body
        reference = encode_pairs(tokenizer, [(p, i.answer()) for p, i in zip(prompts, held_out, strict=True)])
        logp, _ = completion_logprobs(model, reference, temperature=1.0)
        reference_probability = (logp * reference.mask).sum(-1).exp().tolist()
    probability: dict[str, list[float]] = defaultdict(list)
    exact: dict[str, list[bool]] = defaultdict(list)
    right_operator: dict[str, list[bool]] = defaultdict(list)
    operators: dict[str, Counter[str]] = defaultdict(Counter)
    examples: dict[str, str] = {}
    for instance, text, chance in zip(held_out, texts, reference_probability, strict=True):
        name = f"{instance.template.family}/{instance.word}"
        probability[name].append(chance)
        exact[name].append(" ".join(text.split()) == " ".join(instance.answer().split()))
        operators[name][written_operator(text)] += 1
        right_operator[name].append(written_operator(text) == instance.operator)
        examples.setdefault(name, f"{instance.answer().strip()}  ->  {text.strip()}")
    summary = {
        "assignments": args.assignments,
        "warm_start_seconds": round(warm_seconds, 1),
        "final_loss": info.get("final_loss"),
        "greedy_exact": sum(sum(v) for v in exact.values()) / len(held_out),
        "by_template": {name: sum(v) / len(v) for name, v in sorted(exact.items())},
        "right_operator": sum(sum(v) for v in right_operator.values()) / len(held_out),
        "right_operator_by_template": {name: sum(v) / len(v) for name, v in sorted(right_operator.items())},
        "reference_probability": {name: round(sum(v) / len(v), 3) for name, v in sorted(probability.items())},
        "operators": {name: dict(c.most_common()) for name, c in sorted(operators.items())},
        "examples": dict(sorted(examples.items())),
    }
    print(json.dumps(summary, indent=1))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1) + "\n")


if __name__ == "__main__":
    main()
