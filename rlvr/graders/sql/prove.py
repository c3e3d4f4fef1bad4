"""`rlvr packs validate` for SQL tasks: the reference query (or DML), in a ```sql block, must agree with
itself on the visible database and every hidden variant (reward 1.0; building the variants and running
the task's `check` queries happens here too, so a check that does not resolve fails the reference), and
trivial answers must stay below the trivial-reward limit: an empty completion, a query that returns no
rows (or, for DML, a statement that changes nothing) and a constant query.
"""

from __future__ import annotations

import re
from typing import Any

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task
from rlvr.core.validation import ValidationReport
from rlvr.graders.prove import Trials, grader_for, prove_with_grader

_TABLE = re.compile(r"CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?[\"`\[]?(\w+)", re.IGNORECASE)


def task_trials(task: Task) -> Trials:
    hidden = task.hidden
    reference = hidden.get("reference")
    tables = _TABLE.findall(str(hidden.get("schema") or ""))
    if hidden.get("kind", "query") == "dml":
        writable = [t for t in hidden.get("writable") or tables if t in tables] or tables
        noop = f'DELETE FROM "{writable[0]}" WHERE 0' if writable else "SELECT 1"
        trivial = {"empty": "", "no-op": f"```sql\n{noop}\n```"}
    else:
        trivial = {"empty": "", "no-op": "```sql\nSELECT 1 WHERE 0\n```", "constant": "```sql\nSELECT 1\n```"}
    if not isinstance(reference, str):
        return Trials(None, trivial, (("reference", "missing: the task has no reference SQL"),))
    return Trials(f"```sql\n{reference}\n```", trivial)


def prove_sql_tasks(
    where: str, tasks: list[Task], *, pack: TaskPack | None = None, **options: Any
) -> ValidationReport:
    grader = grader_for(where, tasks, "sql", pack, options)
    try:
        return prove_with_grader(where, tasks, grader, task_trials)
    finally:
        grader.close()
