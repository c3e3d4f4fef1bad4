"""Write a benchmark's results: results.json, results.csv (one row per pack), tasks.csv (one row per
task), PNG plots and report.html linking them."""

from __future__ import annotations

import csv
import html
import json
from pathlib import Path
from typing import Any

from rlvr.bench import plots

PLOT_FILES = {
    "reward_distribution": "reward_distribution.png",
    "pass_by_difficulty": "pass_by_difficulty.png",
    "components": "components.png",
}
SUMMARY_FIELDS = (
    "tasks",
    "samples",
    "mean_reward",
    "pass_rate",
    "syntax_error_rate",
    "hallucinated_import_rate",
    "timeout_rate",
    "timeouts",
    "generation_errors",
    "grading_errors",
)


def flat_summary(metrics: dict[str, Any], ks: list[int]) -> dict[str, Any]:
    """One flat row of a pack's headline numbers (for CSV and the HTML table)."""
    row: dict[str, Any] = {f"pass@{k}": metrics.get(f"pass@{k}") for k in ks}
    row.update({name: metrics.get(name) for name in SUMMARY_FIELDS})
    for name, value in sorted(metrics.get("components", {}).items()):
        row[f"component:{name}"] = value
    for name in ("completion_tokens", "latency_s", "grade_s"):
        row[f"{name}_mean"] = (metrics.get(name) or {}).get("mean")
    row["latency_s_p95"] = (metrics.get("latency_s") or {}).get("p95")
    return row


def write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    columns = list(dict.fromkeys(column for row in rows for column in row))
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def html_table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "<p>(none)</p>"
    columns = list(dict.fromkeys(column for row in rows for column in row))
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(fmt(row.get(c)))}</td>" for c in columns) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


STYLE = """body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px}
table{border-collapse:collapse;margin:1em 0;font-size:0.9em}th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f0f0f0}td:first-child,th:first-child{text-align:left}img{max-width:100%;margin:0.5em 0}
.note{color:#8a4b00}"""


def html_page(title: str, sections: list[str]) -> str:
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>{''.join(sections)}</body></html>\n"
    )


def notes_html(notes: list[str]) -> str:
    return "".join(f"<p class='note'>{html.escape(note)}</p>" for note in notes)


def write_bench_report(
    out: Path,
    results: dict[str, Any],
    records: dict[str, list[dict[str, Any]]],
    task_rows: dict[str, list[dict[str, Any]]],
) -> None:
    ks: list[int] = results["k"]
    per_pack: dict[str, dict[str, Any]] = results["packs"]
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    write_csv(out / "results.csv", [{"pack": name, **flat_summary(m, ks)} for name, m in per_pack.items()])
    write_csv(out / "tasks.csv", [{"pack": name, **row} for name, rows in task_rows.items() for row in rows])

    plots.reward_distribution(
        out / PLOT_FILES["reward_distribution"], {n: [r["reward"] for r in rs] for n, rs in records.items()}
    )
    plots.pass_rate_by_difficulty(out / PLOT_FILES["pass_by_difficulty"], per_pack)
    plots.component_breakdown(out / PLOT_FILES["components"], per_pack)

    difficulty_rows = [
        {"pack": name, "difficulty": level, **values}
        for name, m in per_pack.items()
        for level, values in m["by_difficulty"].items()
    ]
    sections = [
        f"<p>Policy <code>{html.escape(results['policy'])}</code>; k = {', '.join(map(str, ks))}; "
        f"{results['planned_samples']} samples ({results['resumed_samples']} reused from an earlier run). "
        "pass@k is the unbiased estimator of Chen et al. (2021), averaged over tasks.</p>",
        notes_html(
            results["notes"] + [n for m in per_pack.values() for n in m["notes"] if n not in results["notes"]]
        ),
        "<h2>Summary</h2>",
        html_table([{"pack": name, **flat_summary(m, ks)} for name, m in per_pack.items()]),
        "<h2>Plots</h2>",
        "".join(f"<img src='{html.escape(f)}' alt='{html.escape(name)}'>" for name, f in PLOT_FILES.items()),
        "<h2>By difficulty</h2>",
        html_table(difficulty_rows),
        "<h2>Tasks</h2>",
        html_table([{"pack": name, **row} for name, rows in task_rows.items() for row in rows]),
        "<p>Files: <a href='results.json'>results.json</a>, <a href='results.csv'>results.csv</a>, "
        "<a href='tasks.csv'>tasks.csv</a>, <a href='samples.jsonl'>samples.jsonl</a>.</p>",
    ]
    (out / "report.html").write_text(html_page("rlvr bench report", sections), encoding="utf-8")
