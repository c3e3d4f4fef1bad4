"""Regenerate the built-in `repo-tasks` pack's tasks.jsonl from its reference repositories and specs.

    PYTHONPATH=$PWD python scripts/make_repo_tasks.py [--only ledger textkit]

Every task is validated in the sandbox (its base state must differ observably from the reference on
hidden scenarios; see rlvr/graders/repo/generate.py). Deterministic: the same inputs give the same file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tqdm import tqdm

from rlvr.graders.repo.generate import (
    Validator,
    bug_tasks,
    feature_tasks,
    migration_tasks,
    rename_tasks,
    task_domains,
    task_perf,
)
from rlvr.sandbox import make_sandbox
from rlvr.task_packs.repo_tasks import DATA_DIR
from rlvr.task_packs.repo_tasks.format import read_repo


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--only", nargs="*", help="repositories to (re)generate; others are kept")
    parser.add_argument("--data", type=Path, default=DATA_DIR)
    args = parser.parse_args()
    output = args.data / "tasks.jsonl"
    kept_lines: list[str] = []
    if args.only and output.exists():
        kept_lines = [
            line for line in output.read_text().splitlines() if json.loads(line)["repo"] not in args.only
        ]
    lines: list[str] = []
    with make_sandbox("local") as sandbox:
        specs = sorted((args.data / "specs").glob("*.json"))
        for spec_path in tqdm(specs, desc="repositories"):
            name = spec_path.stem
            if args.only and name not in args.only:
                continue
            spec = json.loads(spec_path.read_text())
            files = read_repo(args.data / "repos" / name)
            validator = Validator(sandbox, files, spec["scenarios"])
            drafts = []
            for make in (bug_tasks, feature_tasks, rename_tasks, migration_tasks):
                drafts += make(name, spec, files, validator)
            for draft in drafts:
                draft.domains = task_domains(spec, draft)
                draft.perf = task_perf(spec, draft)
            kinds: dict[str, int] = {}
            for draft in drafts:
                kinds[draft.kind] = kinds.get(draft.kind, 0) + 1
            print(f"{name}: {len(drafts)} tasks {kinds}", file=sys.stderr)
            lines += [json.dumps(d.to_line(), sort_keys=True) for d in drafts]
    output.write_text("\n".join(sorted(kept_lines + lines, key=lambda line: json.loads(line)["id"])) + "\n")
    print(f"wrote {len(kept_lines) + len(lines)} tasks to {output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
