"""Write rlvr/task_packs/humaneval_ts.json: HumanEval translated to TypeScript (see
rlvr/task_packs/humaneval_ts.py). Deterministic; tests/test_typescript_pack.py checks the file is current."""

from __future__ import annotations

import json

from rlvr.task_packs.humaneval_ts import DATA, build_data


def main() -> None:
    data = build_data()
    DATA.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"{len(data['tasks'])} tasks translated, {len(data['skipped'])} skipped -> {DATA}")


if __name__ == "__main__":
    main()
