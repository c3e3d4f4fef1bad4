"""Inputs where a function's steps do not commute or its data varies in status and order (issue 31).

Derived in the trusted process from trusted data only (the task's scenarios and base state):

- **Crossed values**: a call again with one argument taken from another listed call of the same
  target at the same position, and a shorter call given a longer one's trailing arguments, so two
  steps the scenarios exercise apart (a long stay and a promo, a discount and a rounding) are hit in
  one call, where the order they are applied in shows.
- **Overlapping names**: a mapping argument's keys with their last word replaced by a word another
  argument of the same call uses (matched to the key's case), so two inputs name the same thing and
  which one takes precedence (file before environment, defaults before overrides) shows.
- **Status vocabulary**: every value a column or field is compared with, set to or defaulted to
  anywhere in the base repository's code and tests (`status = 'active'`, `DEFAULT 'active'`,
  `state in ("open", "done")`), plus one value never seen there. Every sqlite seed row and every
  record (a dict in a list argument) holding such a field gets each other value in turn, so a filter
  that ignores the field, or treats every value it does not know as one it does, differs.
- **Insertion order**: the seed rows inserted in reverse order, a list argument reversed, a mapping
  argument's keys inserted in reverse order (and again with every number in it equal, so ties have to
  be broken the way the reference breaks them, not by insertion), so a query or ranking returning
  another order than the reference's differs. Order is compared only where the
  reference's result is a sequence (list or tuple: a query's rows are a list); sets and mappings
  compare without order (`runner.same_value`, `child_driver.plain`).
- **Order inside entries**: a collection of entries (rows, records, a mapping) with every list of two
  or more names or values an entry holds in reverse order (a job's dependencies, a tag list), so a
  rule over them all (the dependency that finishes last) that is really "the first listed" differs.
"""

from __future__ import annotations

import re
from typing import Any

UNSEEN_VALUE = "rlvr-unseen"
MAX_CROSSED = 6  # per scenario
MAX_OVERLAPS = 6  # per scenario
MAX_STATUS_VARIANTS = 8  # per scenario
COMPARED = re.compile(r"""\b([A-Za-z_]\w*)["']?\]?\s*(?:==|!=|<>|=)\s*(['"])([^'"\n]{1,40})\2""")
DEFAULTED = re.compile(
    r"""\b([A-Za-z_]\w*)\s+(?:TEXT|VARCHAR|CHAR|STRING|CLOB)\b[^,()\n'"]*?\bDEFAULT\s+'([^'\n]{1,40})'""",
    re.I,
)
MEMBERSHIP = re.compile(r"""\b([A-Za-z_]\w*)["']?\]?\s+(?:NOT\s+)?IN\s*[(\[{]([^)\]}\n]*)[)\]}]""", re.I)
KEYED = re.compile(r"""(['"])([A-Za-z_]\w*)\1\s*:\s*(['"])([^'"\n]{1,40})\3""")
LITERAL = re.compile(r"""(['"])([^'"\n]{1,40})\1""")
INSERT = re.compile(
    r"^\s*INSERT\s+INTO\s+([A-Za-z_]\w*)\s*(?:\(([^)]*)\))?\s*VALUES\s*\((.*)\)\s*;?\s*$", re.I | re.S
)
CREATE = re.compile(
    r"^\s*CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([A-Za-z_]\w*)\s*\((.*)\)\s*;?\s*$", re.I | re.S
)
CONSTRAINT_WORDS = {"PRIMARY", "UNIQUE", "CHECK", "FOREIGN", "CONSTRAINT"}
WORDS = re.compile(r"[A-Za-z]+")


def status_vocabulary(base: dict[str, str], seed_sql: list[str] | None = None) -> dict[str, list[str]]:
    """{field: values} for every field the base repository (and the scenarios' seed SQL) compares with,
    sets to or defaults to a string literal, when it names at least one such value; each list ends
    with UNSEEN_VALUE (a value the code never names)."""
    found: dict[str, set[str]] = {}
    for text in [*base.values(), *(seed_sql or [])]:
        for field, _, value in COMPARED.findall(text):
            found.setdefault(field.lower(), set()).add(value)
        for field, value in DEFAULTED.findall(text):
            found.setdefault(field.lower(), set()).add(value)
        for field, inside in MEMBERSHIP.findall(text):
            values = [value for _, value in LITERAL.findall(inside)]
            if values:
                found.setdefault(field.lower(), set()).update(values)
    # a field compared with a literal is a status; every literal it is given elsewhere is one of its
    # values too (a record in a test, a seed row)
    for text in [*base.values(), *(seed_sql or [])]:
        for _, field, _, value in KEYED.findall(text):
            if field.lower() in found:
                found[field.lower()].add(value)
    tables = _table_columns(list(seed_sql or []))
    for statement in seed_sql or []:
        for name, value in _inserted(statement, tables):
            literal = LITERAL.fullmatch(value)
            if name in found and literal is not None:
                found[name].add(literal.group(2))
    return {field: [*sorted(values), UNSEEN_VALUE] for field, values in sorted(found.items())}


def _inserted(statement: str, tables: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(column, value text) of a one-row INSERT, columns from its list or its table's CREATE."""
    match = INSERT.match(statement)
    if match is None:
        return []
    listed = match.group(2)
    names = (
        [n.strip().strip('"`[]').lower() for n in listed.split(",")]
        if listed
        else tables.get(match.group(1).lower(), [])
    )
    values = _split_top_level(match.group(3))
    return list(zip(names, values, strict=True)) if len(names) == len(values) else []


def _split_top_level(text: str) -> list[str]:
    """`text` split at commas outside quotes and parentheses."""
    parts, depth, quote, current = [], 0, "", []
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    parts.append("".join(current).strip())
    return parts


def _table_columns(seed_sql: list[str]) -> dict[str, list[str]]:
    columns: dict[str, list[str]] = {}
    for statement in seed_sql:
        match = CREATE.match(statement)
        if match:
            names = [part.split()[0].strip('"`[]') for part in _split_top_level(match.group(2)) if part]
            columns[match.group(1).lower()] = [n.lower() for n in names if n.upper() not in CONSTRAINT_WORDS]
    return columns


def _sql_literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def seed_variants(scenario: dict[str, Any], vocabulary: dict[str, list[str]]) -> list[dict[str, Any]]:
    """A sqlite scenario again with its seed rows' status fields set to each other known value in turn
    (one row at a time), and with its rows inserted in reverse order."""
    seed = [str(statement) for statement in scenario.get("seed_sql") or []]
    tables = _table_columns(seed)
    status_seeds: list[list[str]] = []
    inserts = [i for i, statement in enumerate(seed) if INSERT.match(statement)]
    for position in inserts:
        match = INSERT.match(seed[position])
        assert match is not None
        pairs = _inserted(seed[position], tables)
        values = [value for _, value in pairs]
        for index, (name, value) in enumerate(pairs):
            known = vocabulary.get(name)
            literal = LITERAL.fullmatch(value)
            if not known or literal is None or literal.group(2) not in known:
                continue
            for other in known:
                if other != literal.group(2):
                    changed = [*values[:index], _sql_literal(other), *values[index + 1 :]]
                    statement = (
                        seed[position][: match.start(3)] + ", ".join(changed) + seed[position][match.end(3) :]
                    )
                    status_seeds.append([*seed[:position], statement, *seed[position + 1 :]])
    variants = [
        {**scenario, "seed_sql": s, "derived": "status-domain"} for s in status_seeds[:MAX_STATUS_VARIANTS]
    ]
    reordered = list(seed)
    for table in {str(m.group(1)).lower() for i in inserts if (m := INSERT.match(seed[i]))}:
        slots = [i for i in inserts if (m := INSERT.match(seed[i])) and m.group(1).lower() == table]
        for slot, statement in zip(slots, [seed[i] for i in reversed(slots)], strict=True):
            reordered[slot] = statement  # each table's rows reversed in the slots they had
    if reordered != seed:
        variants.append({**scenario, "seed_sql": reordered, "derived": "order-domain"})
    return variants


def record_variants(value: Any, vocabulary: dict[str, list[str]]) -> list[Any]:
    """A list argument reversed, and each record of it (a dict) with a status field set to each other
    known value in turn; a string that is a known status value as each other value of its field."""
    out: list[Any] = []
    if isinstance(value, str):
        for values in vocabulary.values():
            if value in values:
                out += [other for other in values if other != value and other not in out]
        return out[:MAX_STATUS_VARIANTS]
    if not isinstance(value, list) or not value:
        return out
    for position, record in enumerate(value):
        if not isinstance(record, dict):
            continue
        for key, field in record.items():
            known = vocabulary.get(str(key).lower())
            if known and field in known:
                out += [
                    [*value[:position], {**record, key: other}, *value[position + 1 :]]
                    for other in known
                    if other != field
                ]
    out = out[:MAX_STATUS_VARIANTS]
    if len(value) > 1 and value[::-1] != value:
        out.append(value[::-1])
    return out


def _reversed_inner(item: Any) -> Any:
    """`item` reversed if it is a list of two or more scalars (not all equal), else None."""
    if (
        isinstance(item, list)
        and len(item) > 1
        and all(isinstance(x, str | int | float) for x in item)
        and item[::-1] != item
    ):
        return item[::-1]
    return None


def inner_order_variants(value: Any) -> list[Any]:
    """A collection of entries (lists or records in a list, or a mapping's values) with every list of
    scalars inside an entry reversed, all at once: `[["c", 1, ["a", "b"]]]` as `[["c", 1, ["b", "a"]]]`."""

    def entry(e: Any) -> Any:
        if isinstance(e, list):
            return [flipped if (flipped := _reversed_inner(x)) is not None else x for x in e]
        if isinstance(e, dict):
            return {k: flipped if (flipped := _reversed_inner(x)) is not None else x for k, x in e.items()}
        return e

    if isinstance(value, dict):
        changed: Any = {
            k: flipped if (flipped := _reversed_inner(x)) is not None else x for k, x in value.items()
        }
    elif isinstance(value, list) and all(isinstance(e, list | dict) for e in value):
        changed = [entry(e) for e in value]
    else:
        return []
    return [changed] if changed != value else []


TIES = re.compile(r"\bties?\b|\btied\b", re.IGNORECASE)


def states_ties(base: dict[str, str]) -> bool:
    """Whether the base repository says anything of ties (how ties are broken is then a stated rule)."""
    return any(TIES.search(text) for text in base.values())


def mapping_order_variants(value: Any, ties: bool) -> list[Any]:
    """A mapping of two or more keys with its keys inserted in reverse order and, where its values are
    numbers and the repository states a rule for ties (`ties`), that again with every value equal to
    the largest (every entry tied): a tie broken by insertion order instead of the documented rule
    (by name, by key) shows on the tied input."""
    if not isinstance(value, dict) or len(value) < 2:
        return []
    backwards = dict(reversed(list(value.items())))
    out: list[Any] = [backwards]
    numbers = [v for v in value.values() if isinstance(v, int | float) and not isinstance(v, bool)]
    if ties and len(numbers) == len(value) and len(set(numbers)) > 1:
        top = max(numbers)
        out.append({key: type(item)(top) for key, item in backwards.items()})
    return out


def crossed_calls(
    scenario: dict[str, Any], others: list[dict[str, Any]]
) -> tuple[list[list[Any]], list[list[Any]]]:
    """(crossed, units): `scenario`'s arguments with one taken from another call of its target at the
    same position, or with a longer call's trailing arguments appended (at most MAX_CROSSED, spread over
    the others); and each crossed call with one integer at 1, the smallest unit, where rounding in each
    step shows (units[k] varies crossed[k] where it can: the two lists are meant to be taken in turn)."""
    args = list(scenario.get("args") or [])
    rows: list[list[list[Any]]] = []
    for other in others:
        theirs = list(other.get("args") or [])
        if other is scenario or theirs == args:
            continue
        row = [
            [*args[:i], theirs[i], *args[i + 1 :]]
            for i in range(min(len(args), len(theirs)))
            if theirs[i] != args[i] and type(theirs[i]) is type(args[i])
        ]
        if len(theirs) > len(args):
            row.insert(0, args + theirs[len(args) :])
        rows.append(row)
    listed = [list(other.get("args") or []) for other in others]
    crossed: list[list[Any]] = []
    for depth in range(max((len(r) for r in rows), default=0)):
        for row in rows:
            if depth < len(row) and row[depth] not in crossed and row[depth] not in listed:
                crossed.append(row[depth])
    crossed = crossed[:MAX_CROSSED]
    units: list[list[Any]] = []
    for call in crossed:
        for i, value in enumerate(call):
            unit = [*call[:i], 1, *call[i + 1 :]]
            if type(value) is int and value not in (0, 1) and unit not in units and unit not in listed:
                units.append(unit)
                break
    return crossed, units


def _case_like(word: str, model: str) -> str:
    return word.upper() if model.isupper() else word.lower() if model.islower() else word


def overlapping_keys(args: list[Any]) -> list[list[Any]]:
    """Each mapping argument with one key's last word replaced by a word another argument names."""
    out: list[list[Any]] = []
    for index, mapping in enumerate(args):
        if not isinstance(mapping, dict) or not all(isinstance(k, str) for k in mapping):
            continue
        elsewhere: list[str] = []
        for position, other in enumerate(args):
            if position != index:
                for word in WORDS.findall(_text_of(other)):
                    if word.lower() not in elsewhere:
                        elsewhere.append(word.lower())
        rows: list[list[list[Any]]] = []
        for key in mapping:
            words = WORDS.findall(key)
            if not words:
                continue
            last, mine, row = words[-1], {w.lower() for w in words}, []
            at = key.rfind(last)
            for word in [w for w in elsewhere if w not in mine][:3]:
                renamed = key[:at] + _case_like(word, last) + key[at + len(last) :]
                if renamed not in mapping:
                    changed = {(renamed if k == key else k): v for k, v in mapping.items()}
                    row.append([*args[:index], changed, *args[index + 1 :]])
            rows.append(row)
        # round robin over the keys: the cap cuts each key's last substitutes, never a whole key
        out += [row[rank] for rank in range(3) for row in rows if rank < len(row)]
    return out[:MAX_OVERLAPS]


def _text_of(value: Any, depth: int = 0) -> str:
    if depth > 6:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return " ".join(f"{_text_of(k, depth + 1)} {_text_of(v, depth + 1)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return " ".join(_text_of(item, depth + 1) for item in value)
    return ""
