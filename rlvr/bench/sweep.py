"""`rlvr sweep CONFIG.toml`: a grid of benchmark runs (policies x packs x settings), each a resumable
`rlvr bench` run in its own directory, summarized in one table (CSV + JSON), plots and report.html.

    out = "runs/sweep"                 # optional; --out overrides
    packs = ["humaneval"]
    k = [1, 8]                         # reported pass@k (a grid key too)
    split = "test"
    jobs = 2                           # grading workers; also sandbox = "local" | "docker"
    max_tokens = 256                   # default sampling settings: temperature, top_p, max_tokens,
                                       # stop, prompt_format, system
    [[policies]]                       # or: policies = ["hf:./model", "jsonl:done.jsonl"]
    spec = "hf:./model"
    name = "tiny"                      # optional label; other keys are policy options (batch_size, ...)
    [grid]                             # every combination is one cell
    temperature = [0.2, 0.8]
    n = [8]
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlvr.bench import plots
from rlvr.bench.policies import Policy, PolicyError, Settings, make_policy
from rlvr.bench.report import flat_summary, html_page, html_table, notes_html, write_csv
from rlvr.bench.runner import BenchSpec, GraderCache, run_bench
from rlvr.bench.store import BenchError

GRID_KEYS = ("temperature", "top_p", "max_tokens", "n", "k")
SETTING_KEYS = ("temperature", "top_p", "max_tokens", "stop", "prompt_format", "system")
TOP_LEVEL_KEYS = {
    "out",
    "packs",
    "k",
    "n",
    "split",
    "seed",
    "jobs",
    "sandbox",
    "policies",
    "grid",
    *SETTING_KEYS,
}


@dataclass
class PolicyEntry:
    spec: str
    label: str
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class SweepConfig:
    packs: list[str]
    policies: list[PolicyEntry]
    grid: dict[str, list[Any]]
    ks: list[int]
    n: int | None
    split: str | None
    seed: int
    grader_options: dict[str, Any]
    settings: Settings
    out: Path | None


def _ks(value: Any, where: str) -> list[int]:
    values = value if isinstance(value, list) else [value]
    if not values or not all(isinstance(k, int) and not isinstance(k, bool) and k >= 1 for k in values):
        raise BenchError(f"{where}: k must be a positive integer or a list of them, got {value!r}")
    return sorted(set(values))


def _relative_to(base: Path, text: str) -> str:
    """A relative file path in the config is relative to the config file."""
    return text if Path(text).is_absolute() else str(base / text)


def _policy_entry(raw: Any, index: int, base: Path) -> PolicyEntry:
    if isinstance(raw, str):
        raw = {"spec": raw}
    if not isinstance(raw, dict) or not isinstance(raw.get("spec"), str):
        raise BenchError(f'policies[{index}] must be a spec string or a table with spec = "..."')
    spec: str = raw["spec"]
    label = str(raw.get("name") or spec)
    scheme, sep, target = spec.partition(":")
    if sep and scheme in ("hf", "jsonl") and target:
        spec = f"{scheme}:{_relative_to(base, target)}"
    return PolicyEntry(spec, label, {k: v for k, v in raw.items() if k not in ("spec", "name")})


def _pack_ref(text: str, base: Path) -> str:
    looks_like_path = "/" in text or text.startswith(".")
    return _relative_to(base, text) if looks_like_path else text


def load_config(path: Path) -> SweepConfig:
    """Parse and validate a sweep config; every problem is a BenchError naming the key."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BenchError(f"sweep config {str(path)!r} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise BenchError(f"{path}: not valid TOML ({exc})") from None
    unknown = set(raw) - TOP_LEVEL_KEYS
    if unknown:
        raise BenchError(
            f"{path}: unknown key(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(TOP_LEVEL_KEYS))}"
        )
    packs = raw.get("packs")
    if not isinstance(packs, list) or not packs or not all(isinstance(p, str) for p in packs):
        raise BenchError(f"{path}: packs must be a non-empty list of pack names or directories")
    policies = raw.get("policies")
    if not isinstance(policies, list) or not policies:
        raise BenchError(f"{path}: policies must be a non-empty list")
    entries = [_policy_entry(p, i, path.parent) for i, p in enumerate(policies)]
    labels = [e.label for e in entries]
    if len(set(labels)) != len(labels):
        raise BenchError(f'{path}: policy labels must be unique (give each a name = "..."): {labels}')
    grid = raw.get("grid", {})
    if not isinstance(grid, dict):
        raise BenchError(f"{path}: [grid] must be a table")
    for key, values in grid.items():
        if key not in GRID_KEYS:
            raise BenchError(f"{path}: grid key {key!r} is not one of {', '.join(GRID_KEYS)}")
        if not isinstance(values, list) or not values:
            raise BenchError(f"{path}: grid.{key} must be a non-empty list")
        if key == "k":
            for value in values:
                _ks(value, f"{path}: grid.k")
    settings_fields = {k: raw[k] for k in SETTING_KEYS if k in raw}
    if "stop" in settings_fields:
        settings_fields["stop"] = tuple(settings_fields["stop"])
    try:
        settings = Settings(**settings_fields)
    except (PolicyError, TypeError) as exc:
        raise BenchError(f"{path}: {exc}") from None
    n = raw.get("n")
    if n is not None and (not isinstance(n, int) or n < 1):
        raise BenchError(f"{path}: n must be a positive integer")
    out = raw.get("out")
    return SweepConfig(
        packs=[_pack_ref(p, path.parent) for p in packs],
        policies=entries,
        grid=grid,
        ks=_ks(raw.get("k", [1]), f"{path}: k"),
        n=n,
        split=raw.get("split", "test"),
        seed=int(raw.get("seed", 0)),
        grader_options={k: raw[k] for k in ("jobs", "sandbox") if k in raw},
        settings=settings,
        out=Path(_relative_to(path.parent, out)) if isinstance(out, str) else None,
    )


@dataclass(frozen=True)
class Cell:
    policy: PolicyEntry
    pack: str
    values: dict[str, Any]

    @property
    def slug(self) -> str:
        parts = [self.policy.label, Path(self.pack).name or self.pack] + [
            f"{k}={'-'.join(map(str, v)) if isinstance(v, list) else v}" for k, v in self.values.items()
        ]
        return re.sub(r"[^A-Za-z0-9_.=-]+", "_", "__".join(parts)).strip("_")


def cells(config: SweepConfig) -> list[Cell]:
    keys = list(config.grid)
    combos = list(itertools.product(*(config.grid[k] for k in keys))) or [()]
    return [
        Cell(policy, pack, dict(zip(keys, combo, strict=True)))
        for policy in config.policies
        for pack in config.packs
        for combo in combos
    ]


def _cell_spec(config: SweepConfig, cell: Cell, out: Path) -> tuple[BenchSpec, Settings]:
    ks = _ks(cell.values["k"], "grid.k") if "k" in cell.values else config.ks
    n = cell.values.get("n", config.n)
    updates = {k: cell.values[k] for k in ("temperature", "top_p", "max_tokens") if k in cell.values}
    settings = dataclasses.replace(config.settings, **updates)
    spec = BenchSpec(packs=[cell.pack], out=out, ks=ks, n=n, split=config.split, seed=config.seed)
    return spec, settings


def run_sweep(config: SweepConfig, out: Path, *, progress: bool | None = None) -> dict[str, Any]:
    """Run every cell (resuming finished samples) and write the combined table, plots and report."""
    out.mkdir(parents=True, exist_ok=True)
    graders = GraderCache(**config.grader_options)
    built: dict[str, Policy | Exception] = {}
    rows: list[dict[str, Any]] = []
    try:
        for index, cell in enumerate(cells(config), start=1):
            row: dict[str, Any] = {
                "cell": cell.slug,
                "policy": cell.policy.label,
                "pack": cell.pack,
                **cell.values,
            }
            cell_dir = out / "cells" / cell.slug
            try:
                spec, settings = _cell_spec(config, cell, cell_dir)
                spec.progress = progress
                if cell.policy.label not in built:
                    try:
                        built[cell.policy.label] = make_policy(
                            cell.policy.spec, settings, **cell.policy.options
                        )
                    except (PolicyError, TypeError) as exc:
                        built[cell.policy.label] = PolicyError(f"{cell.policy.spec}: {exc}")
                policy = built[cell.policy.label]
                if isinstance(policy, Exception):
                    raise policy
                policy.settings = settings  # policies read their settings at generate time
                results = run_bench(spec, policy, graders, label=f"[{index}] {cell.slug}")
                metrics = (
                    results["packs"][cell.pack]
                    if cell.pack in results["packs"]
                    else next(iter(results["packs"].values()))
                )
                row.update({"n": results.get("n") or cell.values.get("n"), **flat_summary(metrics, spec.ks)})
                row["notes"] = " | ".join(results["notes"])
                row["error"] = None
            except (BenchError, PolicyError, ValueError, OSError) as exc:
                row["error"] = str(exc)
                print(f"sweep: cell {cell.slug} failed: {exc}", file=sys.stderr)
            row["report"] = f"cells/{cell.slug}/report.html"
            rows.append(row)
    finally:
        for policy in built.values():
            if isinstance(policy, Policy):
                policy.close()
        graders.close()
    summary = {
        "cells": rows,
        "k": sorted({k for r in rows for k in _row_ks(r)}),
        "failed_cells": sum(1 for r in rows if r["error"]),
    }
    write_sweep_report(out, summary)
    return summary


def _row_ks(row: dict[str, Any]) -> list[int]:
    return [int(m.group(1)) for key in row if (m := re.fullmatch(r"pass@(\d+)", key))]


def short_labels(rows: list[dict[str, Any]]) -> list[str]:
    """Plot labels naming only what differs between cells (e.g. "strong\nn=8 temperature=0.2")."""
    keys = [k for k in ("policy", "pack", *GRID_KEYS) if len({str(row.get(k)) for row in rows}) > 1]
    labels = []
    for index, row in enumerate(rows, start=1):
        names = [str(row[k]) for k in ("policy", "pack") if k in keys]
        settings = [f"{k}={row.get(k)}" for k in GRID_KEYS if k in keys]
        labels.append(
            "\n".join(part for part in (" ".join(names), " ".join(settings)) if part) or f"cell {index}"
        )
    return labels


def write_sweep_report(out: Path, summary: dict[str, Any]) -> None:
    rows: list[dict[str, Any]] = summary["cells"]
    (out / "sweep.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    write_csv(out / "sweep.csv", rows)
    labels = short_labels(rows)
    pass_series = {f"pass@{k}": [row.get(f"pass@{k}") for row in rows] for k in summary["k"]}
    plots.metric_by_cell(out / "sweep_pass_at_k.png", "pass@k by cell", labels, pass_series)
    quality = {
        name: [row.get(name) for row in rows]
        for name in ("mean_reward", "syntax_error_rate", "hallucinated_import_rate", "timeout_rate")
    }
    plots.metric_by_cell(out / "sweep_quality.png", "Reward and failure rates by cell", labels, quality)
    images = ["sweep_pass_at_k.png", "sweep_quality.png"]
    temperatures = {row.get("temperature") for row in rows if row.get("temperature") is not None}
    if len(temperatures) > 1 and summary["k"]:
        first_k = summary["k"][0]
        lines: dict[str, list[tuple[float, float | None]]] = {}
        others = [k for k in GRID_KEYS if k != "temperature" and len({str(r.get(k)) for r in rows}) > 1]
        for row in rows:
            if row.get("temperature") is not None:
                name = " ".join([f"{row['policy']} / {row['pack']}", *(f"{k}={row.get(k)}" for k in others)])
                lines.setdefault(name, []).append((row["temperature"], row.get(f"pass@{first_k}")))
        plots.metric_vs_setting(
            out / "sweep_temperature.png",
            f"pass@{first_k} vs temperature",
            "temperature",
            lines,
            f"pass@{first_k}",
        )
        images.append("sweep_temperature.png")
    table_rows = [
        {**{k: v for k, v in row.items() if k != "report"}, "report": row["report"]} for row in rows
    ]
    sections = [
        f"<p>{len(rows)} cells; {summary['failed_cells']} failed. Each cell is an <code>rlvr bench</code> run "
        "under <code>cells/</code> with its own report.</p>",
        notes_html([f"{row['cell']}: {row['error']}" for row in rows if row.get("error")]),
        html_table(table_rows),
        "".join(f"<img src='{name}' alt='{name}'>" for name in images),
        "<p>Cell reports: "
        + ", ".join(f"<a href='{row['report']}'>{row['cell']}</a>" for row in rows if not row.get("error"))
        + "</p><p>Files: <a href='sweep.json'>sweep.json</a>, <a href='sweep.csv'>sweep.csv</a>.</p>",
    ]
    (out / "report.html").write_text(html_page("rlvr sweep report", sections), encoding="utf-8")
