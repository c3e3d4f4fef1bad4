"""`rlvr train`: bad input is refused before any work starts; a tiny end-to-end run writes the
run directory; a SIGKILLed run resumes with every metric step exactly once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rlvr.cli import main
from rlvr.trainer.config import ConfigError, build_config, parse_assignment

# A run small enough for a unit test: a 1-layer model, a few SFT steps, two GRPO steps.
TINY = [
    "model.tiny_layers=1",
    "model.tiny_hidden=32",
    "model.tiny_heads=2",
    "sft.steps=3",
    "sft.examples=64",
    "grpo.steps=3",
    "grpo.tasks_per_step=2",
    "grpo.group_size=2",
    "grpo.group_size_max=3",
    "grpo.max_new_tokens=8",
    "run.eval_max_tasks=2",
    "run.eval_samples=1",
    "run.grader_types=false",
    "run.checkpoint_every=1",
]


def cli_args(*extra: str) -> list[str]:
    out: list[str] = []
    for item in [*TINY, *extra]:
        out += ["--set", item]
    return out


def test_unknown_setting_names_the_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", "--out", str(tmp_path / "run"), "--set", "grpo.stepz=3"]) == 2
    err = capsys.readouterr().err
    assert "unknown setting in [grpo] 'stepz'" in err and "did you mean 'steps'" in err
    assert not (tmp_path / "run").exists()


def test_bad_values_are_all_reported(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text('[grpo]\nloss_type = "ppo"\nepsilon_low = 1.5\ngroup_size = 1\n')
    with pytest.raises(ConfigError) as info:
        build_config(config)
    message = str(info.value)
    assert "loss_type must be one of grpo, bnpo, dapo, dr_grpo" in message
    assert "epsilon_low" in message and "group_size must be >= 2" in message


def test_wrong_type_and_bad_toml(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\[grpo\] steps must be an integer"):
        build_config(None, ["grpo.steps='ten'"])
    broken = tmp_path / "broken.toml"
    broken.write_text("[grpo\nsteps = 3")
    with pytest.raises(ConfigError, match="not valid TOML"):
        build_config(broken)
    with pytest.raises(ConfigError, match="does not exist"):
        build_config(tmp_path / "missing.toml")
    with pytest.raises(ConfigError, match="SECTION.KEY=VALUE"):
        parse_assignment("steps=3")


def test_missing_model_path_and_unknown_pack(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", "--out", str(tmp_path / "a"), "--model", str(tmp_path / "nope")]) == 2
    assert "does not exist; pass a local Hugging Face model directory" in capsys.readouterr().err
    not_a_model = tmp_path / "empty"
    not_a_model.mkdir()
    assert main(["train", "--out", str(tmp_path / "b"), "--model", str(not_a_model)]) == 2
    assert "no config.json" in capsys.readouterr().err
    assert main(["train", "--out", str(tmp_path / "c"), "--pack", "tiny-functionz"]) == 2
    err = capsys.readouterr().err
    assert "unknown pack 'tiny-functionz'" in err and "tiny-functions" in err
    assert not any((tmp_path / name).exists() for name in "abc")


def test_pack_without_teacher_needs_a_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["train", "--out", str(tmp_path / "r"), "--pack", "humaneval", "--set", "run.train_split=test"])
        == 2
    )
    assert "no warm-start teacher" in capsys.readouterr().err


def test_existing_run_directory_is_not_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text("{}")
    assert main(["train", "--out", str(run)]) == 2
    assert f"--resume {run}" in capsys.readouterr().err


def run_cli(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "rlvr", "train", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "TQDM_DISABLE": "1"},
    )


def test_tiny_run_writes_the_run_directory(tmp_path: Path) -> None:
    out = tmp_path / "run"
    process = run_cli("--out", str(out), *cli_args())
    output = process.communicate(timeout=400)[0].decode()
    assert process.returncode == 0, output
    summary = json.loads((out / "summary.json").read_text())
    for when in ("before", "after"):
        assert set(summary["heldout"][when]) >= {"pass_rate", "mean_reward", "greedy"}
        assert 0.0 <= summary["heldout"][when]["pass_rate"] <= 1.0
    assert summary["steps"] == 3 and summary["wall_seconds"] > 0
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2, 3]
    for key in (
        "reward_mean",
        "pass_rate",
        "zero_std_group_fraction",
        "clip_ratio/low",
        "entropy",
        "distinct_2",
    ):
        assert key in records[0]
    assert (out / "plots" / "overview.png").stat().st_size > 0
    assert "held-out pass rate" in output


@pytest.mark.slow  # the multi-turn SIGKILL resume test covers the contract
def test_sigkill_then_resume_loses_and_repeats_no_step(tmp_path: Path) -> None:
    out = tmp_path / "run"
    metrics = out / "metrics.jsonl"
    process = run_cli("--out", str(out), *cli_args("grpo.steps=6", "run.checkpoint_every=2"))
    deadline = time.monotonic() + 400
    while time.monotonic() < deadline and process.poll() is None:
        if metrics.exists() and metrics.read_text().count("\n") >= 3:
            break
        time.sleep(0.2)
    assert process.poll() is None, process.communicate()[0].decode()
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert metrics.read_text().count("\n") >= 3
    resumed = run_cli("--resume", str(out))
    output = resumed.communicate(timeout=400)[0].decode()
    assert resumed.returncode == 0, output
    assert "resuming" in output
    steps = [json.loads(line)["step"] for line in metrics.read_text().splitlines()]
    assert steps == [1, 2, 3, 4, 5, 6]
    assert json.loads((out / "summary.json").read_text())["steps"] == 6


@pytest.mark.slow  # end-to-end LoRA run
def test_config_file_with_a_local_model_and_lora(tmp_path: Path) -> None:
    """`rlvr train CONFIG.toml` on a local Hugging Face model directory (no SFT), LoRA adapter."""
    from rlvr.task_packs.tiny_functions import sft_examples
    from rlvr.trainer.config import ModelConfig
    from rlvr.trainer.model import build_tiny_model, build_tokenizer

    tokenizer = build_tokenizer([p + c for p, c in sft_examples(200)], 300)
    model = build_tiny_model(tokenizer, ModelConfig(tiny_layers=1, tiny_hidden=32, tiny_heads=2), seed=0)
    model_dir = tmp_path / "my-model"
    model.save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    config = tmp_path / "train.toml"
    config.write_text(
        f"""
[model]
path = "{model_dir}"
lora_rank = 4

[grpo]
steps = 2
tasks_per_step = 2
group_size = 2
group_size_max = 2
max_new_tokens = 6
beta = 0.05

[run]
eval_max_tasks = 2
eval_samples = 1
grader_types = false
"""
    )
    out = tmp_path / "run"
    process = run_cli(str(config), "--out", str(out))
    output = process.communicate(timeout=400)[0].decode()
    assert process.returncode == 0, output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] == 2 and summary["sft"]["steps"] == 0
    assert not (out / "warm_start").exists()  # a given model is used as is, not copied
    assert (out / "checkpoint" / "model" / "adapter_config.json").is_file()
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert all(r["kl"] is not None and r["kl"] >= 0 for r in records)


def test_ctrl_c_stops_cleanly_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    metrics = out / "metrics.jsonl"
    # Enough steps that the interrupt lands mid-run; the checkpoint interval is deliberately coarse so
    # the stop must write its own consistent checkpoint.
    process = run_cli("--out", str(out), *cli_args("grpo.steps=12", "run.checkpoint_every=5"))
    deadline = time.monotonic() + 400
    while time.monotonic() < deadline and process.poll() is None:
        if metrics.exists() and metrics.read_text().count("\n") >= 2:
            break
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    output = process.communicate(timeout=120)[0].decode()
    assert process.returncode == 130, output
    assert "stopping after this step" in output and f"rlvr train --resume {out}" in output
    stopped_at = len(metrics.read_text().splitlines())
    assert 2 <= stopped_at < 12
    resumed = run_cli("--resume", str(out))
    assert resumed.wait(timeout=400) == 0
    assert [json.loads(line)["step"] for line in metrics.read_text().splitlines()] == list(range(1, 13))


@pytest.mark.slow  # Ray grading is covered by tests/test_ray.py
def test_tiny_run_grades_on_ray_actors(tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="the ray extra is not installed")
    out = tmp_path / "run"
    process = run_cli("--out", str(out), "--executor", "ray", *cli_args("grpo.steps=1"))
    output = process.communicate(timeout=400)[0].decode()
    assert process.returncode == 0, output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] == 1
    assert json.loads((out / "config.json").read_text())["run"]["executor"] == "ray"
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert len(records) == 1 and 0.0 <= records[0]["reward_mean"] <= 1.0


def test_recipe_settings_are_checked() -> None:
    with pytest.raises(ConfigError) as info:
        build_config(
            None, ['model.tiny_pretokenizer="chars"', "sft.max_difficulty=-1", "grpo.max_difficulty=-2"]
        )
    message = str(info.value)
    assert "tiny_pretokenizer must be one of bytelevel, words, words_numbers" in message
    assert "[sft] max_difficulty must be >= 0" in message and "[grpo] max_difficulty must be >= 0" in message
    with pytest.raises(ConfigError, match=r"\[run\] eval_max_difficulty must be >= 0"):
        build_config(None, ["run.eval_max_difficulty=-1"])
    assert build_config(None, ['model.template="compact"']).model.template == "compact"
    for mistakes in ('["stop_early", "stop_late"]', "[]"):
        with pytest.raises(ConfigError, match=r"\[sft\] episode_mistakes must be a non-empty list of"):
            build_config(None, [f"sft.episode_mistakes={mistakes}"])
    assert build_config(None, ['sft.episode_mistakes=["answer"]']).sft.episode_mistakes == ["answer"]


def test_unknown_executor_is_refused_before_work(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="executor must be one of local, ray"):
        build_config(None, ['run.executor="spark"'])


TOOL = [
    "run.pack=tool-worlds",
    "model.short_prompts=true",
    "model.tiny_vocab=400",
    "grpo.max_new_tokens=12",
    "grpo.max_episode_tokens=48",
    "grpo.max_turns=2",
    # the recipe of configs/tool.toml: words pre-tokenizer, compact tool results, easy tasks only
    'model.tiny_pretokenizer="words"',
    'model.template="compact"',
    "sft.max_difficulty=2",
    "grpo.max_difficulty=2",
    'run.eval_split="test_worlds"',  # held-out: the trained templates in worlds never trained on
    "run.eval_max_difficulty=1",
    "run.eval_samples=1",
]


def test_multi_turn_run_resumes_after_sigkill_with_every_metric_line_once(tmp_path: Path) -> None:
    """A tool-worlds run (episodes through rlvr/Tool-v0), killed once three metric lines exist."""
    out = tmp_path / "run"
    metrics = out / "metrics.jsonl"
    process = run_cli("--out", str(out), *cli_args(*TOOL, "grpo.steps=6", "run.checkpoint_every=2"))
    deadline = time.monotonic() + 400
    while time.monotonic() < deadline and process.poll() is None:
        if metrics.exists() and metrics.read_text().count("\n") >= 3:
            break
        time.sleep(0.2)
    assert process.poll() is None, process.communicate()[0].decode()
    process.send_signal(signal.SIGKILL)
    process.wait()
    resumed = run_cli("--resume", str(out))
    output = resumed.communicate(timeout=400)[0].decode()
    assert resumed.returncode == 0, output
    records = [json.loads(line) for line in metrics.read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2, 3, 4, 5, 6]
    for key in ("turns_per_episode", "malformed_turn_rate", "tokens_per_turn", "ended_by_token_budget"):
        assert all(key in r for r in records), key
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] == 6 and "pass_rate" in summary["heldout"]["after"]
    from rlvr.task_packs.registry import load_pack

    easy_worlds = [t for t in load_pack("tool-worlds").tasks("test_worlds") if t.difficulty <= 1]
    evaluated = summary["heldout"]["after"]["greedy"]["by_template"]
    assert evaluated and set(evaluated) <= {t.meta["template"] for t in easy_worlds}
    assert (out / "plots" / "agent.png").stat().st_size > 0
    config = json.loads((out / "config.json").read_text())
    assert config["model"]["template"] == "compact" and config["grpo"]["max_difficulty"] == 2


def test_grading_errors_hold_the_disrupted_episodes_once_across_a_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every faulted episode is written (dropped ones too), and a resumed run rewinds the file to
    its checkpoint instead of writing a step's errors twice."""
    from rlvr.core.types import Verdict
    from rlvr.trainer import grpo
    from rlvr.trainer.metrics import MetricsLog

    real = grpo.make_executor_grader

    class SometimesFaulty:
        """The real grader, but every third completion's grading is disrupted (a sandbox fault)."""

        def __init__(self, inner: Any) -> None:
            self.inner, self.seen = inner, 0

        def grade_many(self, task_ids: list[str], completions: list[str]) -> list[Verdict]:
            verdicts = self.inner.grade_many(task_ids, completions)
            out = []
            for verdict in verdicts:
                self.seen += 1
                if self.seen % 3 == 0:
                    verdict = Verdict(
                        verdict.task_id, 0.0, False, error="sandbox: worker died", fault="sandbox"
                    )
                out.append(verdict)
            return out

        def close(self) -> None:
            self.inner.close()

    monkeypatch.setattr(grpo, "make_executor_grader", lambda *a, **k: SometimesFaulty(real(*a, **k)))
    config = build_config(None, [*TINY, "grpo.steps=4", "run.checkpoint_every=2"])
    out = tmp_path / "run"
    append, crashed = MetricsLog.append, []

    def crash_after_step_3(self: MetricsLog, record: dict[str, Any]) -> None:
        append(self, record)
        if record.get("step") == 3 and "reward_mean" in record and not crashed:
            crashed.append(True)
            raise RuntimeError("simulated crash after step 3 (last checkpoint: step 2)")

    monkeypatch.setattr(MetricsLog, "append", crash_after_step_3)
    with pytest.raises(RuntimeError, match="simulated crash"):
        grpo.train(config, out, log=lambda message: None)
    monkeypatch.setattr(MetricsLog, "append", append)
    grpo.train(config, out, resume=True, log=lambda message: None)
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    errors = [json.loads(line) for line in (out / "grading_errors.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2, 3, 4]
    for record in records:
        logged = [e for e in errors if e["step"] == record["step"]]
        assert len(logged) == record["grading_errors"]
        assert sum(e["dropped"] for e in logged) == record["grading_disrupted"] > 0
    assert [e["step"] for e in errors] == sorted(e["step"] for e in errors)
    assert all(e["fault"] == "sandbox" for e in errors if e["dropped"])


def test_multi_turn_grpo_runs_on_the_repository_agent_env(tmp_path: Path) -> None:
    """Smoke run: the multi-turn trainer drives `rlvr/Repo-v0` agent episodes (a local tiny model with
    no warm start: its tool calls are mostly malformed, which the env answers with error observations)."""
    from rlvr.task_packs.registry import load_pack
    from rlvr.trainer.config import ModelConfig
    from rlvr.trainer.model import build_tiny_model, build_tokenizer

    model_dir = tmp_path / "tiny"
    prompts = [t.prompt for t in load_pack("repo-tasks").tasks("train")[:50]]
    tokenizer = build_tokenizer(prompts + ['[{"name": "submit", "arguments": {}}]'], 512)
    build_tiny_model(tokenizer, ModelConfig(tiny_layers=1, tiny_hidden=32, tiny_heads=2), 0).save_pretrained(
        model_dir
    )
    tokenizer.save_pretrained(model_dir)
    out = tmp_path / "run"
    settings = [
        "run.pack=repo-tasks",
        "run.env=rlvr/Repo-v0",
        "grpo.rollout=episodes",
        f"model.path={model_dir}",
        "sft.steps=0",
        "grpo.steps=2",
        "grpo.tasks_per_step=2",
        "grpo.group_size=2",
        "grpo.group_size_max=2",
        "grpo.max_new_tokens=24",
        "grpo.max_turns=2",
        "run.eval_max_tasks=2",
        "run.eval_samples=1",
        "run.grader_types=false",
    ]
    args = ["train", "--out", str(out)] + [item for s in settings for item in ("--set", s)]
    assert main(args) == 0
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2]
    assert all(r["grading_disrupted"] == 0 and 1 <= r["turns_per_episode"] <= 2 for r in records)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["heldout"]["after"]["grading_disrupted"] == 0
