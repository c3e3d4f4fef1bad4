"""Generated step sequences: an object's public methods, or a script's commands, in orders the listed
scenarios never use (issue 31).

A listed object scenario replays one hand-written method sequence; a method written to be right on it
can still be wrong on another (the history of a deleted key, a counter bumped on one path only, a
running total over every entity instead of one). For each class a task's object scenarios construct,
and for each script argument (a list of commands, each `[name, *arguments]`) a call scenario passes,
this derives a few more sequences:

- **steps** drawn from the steps the listed scenarios make on that target, plus the public methods of
  the class the reference changes that no scenario calls (their arguments drawn by parameter name
  from the values the other steps pass for a parameter of the same name);
- **arguments** from the values the scenarios use: each step's first string argument (a key, an
  account, a room) replaced by one of two or three entities picked for the sequence (so keys repeat,
  existing keys are deleted and updated, two entities interleave), its other arguments by a value
  another step passes for the same parameter;
- **a touched method in every sequence** (the method the task is about), last and at one other place;
- **several results and boundary coincidences**: the origin's first two steps (what makes the
  entities) in reverse order followed at once by each touched step, so a listing reads every entity
  (an order "by name" that insertion order already had shows); and the origin up to a step that
  stores a range (two adjacent increasing numbers), then a touched step whose range ends exactly
  where the stored one starts or starts where it ends (`coincidences`: where `<` and `<=` differ);
- seeded by the target's name: the same task always derives the same sequences, within
  `MAX_SEQUENCES` per task (`MAX_PER_TARGET` per target) of at most `MAX_STEPS` steps.

A sequence is compared only where the reference finishes every step without raising
(`sequence_kept`): the reference's answer to a call its documented preconditions reject is not a
behaviour any visible text states.
"""

from __future__ import annotations

import ast
import itertools
import json
import random
import re
import zlib
from dataclasses import dataclass
from typing import Any

MAX_SEQUENCES = 28  # per task
MAX_PER_TARGET = 16  # per class or script target
MAX_STEPS = 8
MIN_STEPS = 4
OBJECT_SEQUENCE = "object-sequence"
SCRIPT_SEQUENCE = "script-sequence"
SEQUENCE_LABELS = (OBJECT_SEQUENCE, SCRIPT_SEQUENCE)


@dataclass(frozen=True)
class StepPool:
    """What a target's sequences are drawn from: its step templates (`[name, args]`), the names that
    must appear in each sequence, the entity values (first string arguments) and, per parameter
    name, the values the templates pass for it."""

    templates: list[tuple[str, list[Any]]]
    required: list[str]
    entities: list[str]
    parameters: dict[str, list[str]]  # step name -> its parameters' names
    values: dict[str, list[Any]]  # parameter name -> values seen for it


def _module_path(target: str) -> tuple[str, str]:
    module, _, attribute = target.partition(":")
    return module.replace(".", "/") + ".py", attribute


def _class_node(source: str, name: str) -> ast.ClassDef | None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name), None)


def _methods(node: ast.ClassDef | None) -> dict[str, ast.FunctionDef]:
    if node is None:
        return {}
    return {n.name: n for n in node.body if isinstance(n, ast.FunctionDef)}


def _source(files: dict[str, str], target: str) -> tuple[str, str]:
    path, attribute = _module_path(target)
    package_init = path[: -len(".py")] + "/__init__.py"
    return files.get(path, files.get(package_init, "")), attribute


def touched_methods(base: dict[str, str], reference: dict[str, str], target: str) -> list[str]:
    """Public methods of class `target` ("module:Class") the reference defines differently from the base."""
    reference_source, name = _source(reference, target)
    base_source, _ = _source(base, target)
    after = _methods(_class_node(reference_source, name))
    before = _methods(_class_node(base_source, name))
    return [
        method
        for method, node in after.items()
        if not method.startswith("_") and (method not in before or ast.dump(before[method]) != ast.dump(node))
    ]


def _definitions(tree: ast.Module) -> dict[str, str]:
    """{qualified name: its dump} for a module's top-level functions and its classes' methods."""
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found[node.name] = ast.dump(node)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    found[f"{node.name}.{item.name}"] = ast.dump(item)
    return found


def touched_names(base: dict[str, str], reference: dict[str, str]) -> set[str]:
    """Names of every function and method the reference changes (a script command of that name runs it)."""
    names: set[str] = set()
    for path, source in reference.items():
        if not path.endswith(".py") or base.get(path) == source:
            continue
        try:
            after, before = _definitions(ast.parse(source)), _definitions(ast.parse(base.get(path, "")))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        names.update(name.rsplit(".", 1)[-1] for name, dump in after.items() if before.get(name) != dump)
    return names


def _add(values: dict[str, list[Any]], name: str, value: Any) -> None:
    row = values.setdefault(name, [])
    if value not in row:
        row.append(value)


def _entities(templates: list[tuple[str, list[Any]]]) -> list[str]:
    found: list[str] = []
    for _, args in templates:
        first = next((a for a in args if isinstance(a, str)), None)
        if first and first not in found:
            found.append(first)
    return found


def object_pool(
    scenarios: list[dict[str, Any]], base: dict[str, str], reference: dict[str, str], target: str
) -> StepPool:
    """The pool of an object target's sequences: its listed steps and the touched methods no step calls."""
    reference_source, name = _source(reference, target)
    methods = _methods(_class_node(reference_source, name))
    parameters = {m: [a.arg for a in node.args.args[1:]] for m, node in methods.items()}
    templates: list[tuple[str, list[Any]]] = []
    values: dict[str, list[Any]] = {}
    for scenario in scenarios:
        for method, args in scenario.get("steps") or []:
            step = (str(method), list(args))
            if step not in templates:
                templates.append(step)
            for parameter, value in zip(parameters.get(str(method), []), args, strict=False):
                _add(values, parameter, value)
    touched = touched_methods(base, reference, target)
    called = {method for method, _ in templates}
    for method in touched:
        if method in called:
            continue
        node = methods[method]
        wanted = parameters[method]
        if node.args.vararg or node.args.kwonlyargs:
            continue
        required_count = len(wanted) - len(node.args.defaults)
        if all(p in values for p in wanted[:required_count]):
            templates.append((method, [values[p][0] for p in wanted[:required_count]]))
    present = {method for method, _ in templates}
    return StepPool(templates, [m for m in touched if m in present], _entities(templates), parameters, values)


def runs_touched(head: str, touched: set[str]) -> bool:
    """Whether a script command named `head` reads as running a touched function or method: its name,
    or one word of it (`free` for `free_rooms`, `history` for `key_history`)."""
    return any(head == name or head in name.split("_") for name in touched)


def script_pool(scripts: list[list[Any]], touched: set[str]) -> StepPool:
    """The pool of a script argument's sequences: its commands (`[name, *arguments]`)."""
    templates: list[tuple[str, list[Any]]] = []
    values: dict[str, list[Any]] = {}
    for script in scripts:
        for command in script:
            if not (isinstance(command, list) and command and isinstance(command[0], str)):
                continue
            step = (command[0], list(command[1:]))
            if step not in templates:
                templates.append(step)
            for index, value in enumerate(command[1:]):
                _add(values, f"{command[0]}#{index}", value)
    parameters = {head: [f"{head}#{i}" for i in range(len(args))] for head, args in templates}
    required = sorted({head for head, _ in templates if runs_touched(head, touched)})
    return StepPool(templates, required, _entities(templates), parameters, values)


def _varied(
    rng: random.Random, pool: StepPool, step: tuple[str, list[Any]], entities: list[str]
) -> list[Any]:
    method, args = step
    out = list(args)
    first = next((i for i, a in enumerate(args) if isinstance(a, str) and a in pool.entities), None)
    names = pool.parameters.get(method, [])
    for index, value in enumerate(args):
        if index == first and entities:
            out[index] = rng.choice(entities)
        elif index < len(names) and rng.random() < 0.5:
            seen = [v for v in pool.values.get(names[index], []) if type(v) is type(value)]
            if seen:
                out[index] = rng.choice(seen)
    return out


def _on_entity(pool: StepPool, step: tuple[str, list[Any]], entity: str) -> tuple[str, list[Any]]:
    """`step` with its first entity argument replaced by `entity`."""
    method, args = step
    first = next((i for i, a in enumerate(args) if isinstance(a, str) and a in pool.entities), None)
    if first is None:
        return method, list(args)
    return method, [*args[:first], entity, *args[first + 1 :]]


Steps = list[tuple[str, list[Any]]]


def paired_sequences(pool: StepPool, origins: list[Steps]) -> list[tuple[int, Steps]]:
    """(origin index, steps) for the first origin with entities: the origin with its first two steps
    swapped (entities made in another order: a listing "by name" the listed order already has); with
    its amounts in reverse order (`reversed_amounts`) and scaled past a thousands separator
    (`scaled_amount`); its
    first steps, then each other kind of step on its first entity followed by each touched method on
    that entity (a key written then deleted, then its history read), and that with the same step on
    the origin's second entity first (two accounts' postings interleaved)."""
    number = next((i for i, o in enumerate(origins) if _entities(o[:PREFIX_STEPS])), None)
    if number is None:
        return []
    origin = origins[number]
    prefix = origin[:PREFIX_STEPS]
    entity, second = (_entities(prefix) + [None])[:2]
    assert entity is not None
    swapped = [prefix[::-1] + origin[PREFIX_STEPS:MAX_STEPS]] if len(prefix) == PREFIX_STEPS else []
    rows: list[list[Steps]] = []
    mixed_rows: list[list[Steps]] = []
    done = {method for method, _ in prefix}  # kinds the prefix already makes come last
    for required in pool.required:
        touched = next(t for t in pool.templates if t[0] == required)
        kinds: list[str] = []
        row: list[Steps] = []
        mixed: list[Steps] = []
        for step in sorted(pool.templates, key=lambda t: t[0] in done):
            if step[0] == required or step[0] in kinds:
                continue
            kinds.append(step[0])
            row.append([*prefix, _on_entity(pool, step, entity), _on_entity(pool, touched, entity)])
            if second is not None:  # the same step on the other entity first: two entities interleaved
                step_twice = [_on_entity(pool, step, second), _on_entity(pool, step, entity)]
                mixed.append([*prefix, *step_twice, _on_entity(pool, touched, entity)])
        rows.append(row)
        mixed_rows.append(mixed)
    # taken in turn, so a budget cut keeps some pairs of every touched method
    paired, interleaved = (
        [sequence for group in itertools.zip_longest(*table) for sequence in group if sequence is not None]
        for table in (rows, mixed_rows)
    )
    scaled = [[(m, [scaled_amount(a) for a in args]) for m, args in origin[:MAX_STEPS]]]
    scaled = [steps for steps in scaled if steps != origin[:MAX_STEPS]]
    reversed_ = [steps for steps in [reversed_amounts(origin[:MAX_STEPS])] if steps != origin[:MAX_STEPS]]
    # the entities made in another order and read at once, while every one of them is still a result
    several = (
        [[*prefix[::-1], _template(pool, r)] for r in pool.required] if len(prefix) == PREFIX_STEPS else []
    )
    coincident = [(i, steps) for i, steps in coincidences(pool, origins) if steps not in several]
    # the first pair first (the touched method after the step most likely to matter), then the rest
    firsts = paired[:1] + swapped + several[:1] + reversed_ + scaled + interleaved[:1]
    return (
        [(number, steps) for steps in firsts]
        + coincident
        + [(number, steps) for steps in several[1:] + paired[1:] + interleaved[1:]]
    )


def _template(pool: StepPool, method: str) -> tuple[str, list[Any]]:
    return next(t for t in pool.templates if t[0] == method)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _ordered_pairs(args: list[Any]) -> list[int]:
    """Positions i where arguments i and i + 1 are numbers in increasing order (a start and its end)."""
    return [
        i for i in range(len(args) - 1) if _number(args[i]) and _number(args[i + 1]) and args[i] < args[i + 1]
    ]


MAX_COINCIDENCES = 4  # per target


def coincidences(pool: StepPool, origins: list[Steps]) -> list[tuple[int, Steps]]:
    """(origin index, steps): an origin's steps up to one that stores a range (two adjacent numbers in
    increasing order: a stay from 1 to 4), then a touched step whose range has its width but ends
    exactly where the stored one starts, or starts where it ends (free from 0 to 1, from 4 to 5): the
    boundary coincidence that independently drawn values never hit, where `<` and `<=` differ. At
    most MAX_COINCIDENCES, ending-where-it-starts first, spread over the stored ranges."""
    rows: list[list[tuple[int, Steps]]] = [[], []]
    for number, origin in enumerate(origins):
        for position, (method, args) in enumerate(origin[: MAX_STEPS - 1]):
            if method in pool.required or not _ordered_pairs(args):
                continue
            stored = _ordered_pairs(args)[0]
            start, end = args[stored], args[stored + 1]
            for required in pool.required:
                touched, wanted = _template(pool, required)
                pairs = _ordered_pairs(wanted)
                if not pairs:
                    continue
                at = pairs[0]
                width = wanted[at + 1] - wanted[at]
                for side, (low, high) in enumerate(((start - width, start), (end, end + width))):
                    step = (touched, [*wanted[:at], low, high, *wanted[at + 2 :]])
                    rows[side].append((number, [*origin[: position + 1], step]))
    out: list[tuple[int, Steps]] = []
    for candidate in itertools.chain.from_iterable(itertools.zip_longest(*rows)):
        if candidate is not None and candidate not in out:
            out.append(candidate)
    return out[:MAX_COINCIDENCES]


def _amount(value: Any) -> bool:
    return (isinstance(value, int | float) and not isinstance(value, bool)) or (
        isinstance(value, str) and DECIMAL.fullmatch(value) is not None
    )


def reversed_amounts(steps: Steps) -> Steps:
    """`steps` with the amounts each kind of step passes at each position in reverse order over its
    occurrences (times 1, 2, 3 written as 3, 2, 1): an order by a number (oldest first, by priority)
    that the listed order of the steps already has shows."""
    columns: dict[tuple[str, int], list[int]] = {}
    for row, (method, args) in enumerate(steps):
        for index, value in enumerate(args):
            if _amount(value):
                columns.setdefault((method, index), []).append(row)
    out = [(method, list(args)) for method, args in steps]
    for (_, index), rows in columns.items():
        values = [steps[row][1][index] for row in rows]
        for row, value in zip(rows, reversed(values), strict=True):
            out[row][1][index] = value
    return out


DECIMAL = re.compile(r"-?\d+(\.\d+)?")
SCALE = 1001


def scaled_amount(value: Any) -> Any:
    """A number (or a decimal string) times SCALE: signs, zeros and every order between amounts kept
    (what a precondition reads), the digits past a thousands separator (what a formatter shows)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value * SCALE
    if isinstance(value, str) and DECIMAL.fullmatch(value):
        places = len(value.partition(".")[2])
        return f"{float(value) * SCALE:.{places}f}" if places else str(int(value) * SCALE)
    return value


PREFIX_STEPS = 2  # the origin scenario's first steps, kept as they are (what sets the entities up)


def draw_sequences(pool: StepPool, seed: str, count: int, origins: list[Steps]) -> list[tuple[int, Steps]]:
    """`count` (origin index, steps) drawn from `pool`, the same for the same seed: the paired
    sequences first, then random ones, each starting with the first steps of an origin (in turn),
    its entities those they name (one more on every other sequence); the touched methods appear in
    each, one of them as the last step."""
    if not pool.templates or count <= 0 or not origins:
        return []
    rng = random.Random(zlib.crc32(seed.encode()))
    sequences: list[tuple[int, Steps]] = []
    seen: set[str] = set()
    for number, drawn in paired_sequences(pool, origins)[: count - count // 6]:
        if json.dumps(drawn) not in seen:
            seen.add(json.dumps(drawn))
            sequences.append((number, drawn))
    for attempt in range(count * 4):
        if len(sequences) >= count:
            break
        number = attempt % len(origins)
        prefix = origins[number][:PREFIX_STEPS]
        entities = _entities(prefix)[:2]
        others = [e for e in pool.entities if e not in entities]
        wanted = 2 + attempt % 2 - len(entities)
        entities += rng.sample(others, min(len(others), max(0, wanted)))
        length = rng.randint(MIN_STEPS, MAX_STEPS) - len(prefix)
        steps = [rng.choice(pool.templates) for _ in range(max(2, length))]
        for required in pool.required:
            chosen = [t for t in pool.templates if t[0] == required]
            if not any(step[0] == required for step in steps[:-1]):
                steps[rng.randrange(len(steps) - 1)] = rng.choice(chosen)
        last = rng.choice(pool.required) if pool.required else None
        if last is not None:
            steps[-1] = rng.choice([t for t in pool.templates if t[0] == last])
        drawn = [*prefix, *((step[0], _varied(rng, pool, step, entities)) for step in steps)]
        if json.dumps(drawn) not in seen:
            seen.add(json.dumps(drawn))
            sequences.append((number, drawn))
    return sequences


def _script_position(args: list[Any]) -> int | None:
    return next(
        (
            i
            for i, value in enumerate(args)
            if isinstance(value, list)
            and value
            and all(isinstance(c, list) and c and isinstance(c[0], str) for c in value)
        ),
        None,
    )


COMMAND_SEPARATOR = ":"
ARGV_POSITION = -1  # a command line whose words are commands (`deposit:a:10.50`), not an argument


def _argv_commands(argv: list[Any]) -> list[list[Any]] | None:
    """A command line whose words are all commands `name:arg:...` (three or more, two or more of
    them with arguments) as a script; None otherwise."""
    words = [w for w in argv if isinstance(w, str)]
    if len(words) != len(argv) or len(words) < 3 or any(w.startswith("-") or not w for w in words):
        return None
    commands = [w.split(COMMAND_SEPARATOR) for w in words]
    if sum(len(c) > 1 for c in commands) < 2 or not all(c[0].isidentifier() for c in commands):
        return None
    return [list(c) for c in commands]


def _script_of(scenario: dict[str, Any], position: int) -> list[list[Any]]:
    if position == ARGV_POSITION:
        return _argv_commands(list(scenario.get("argv") or [])) or []
    return scenario["args"][position]


def _with_script(scenario: dict[str, Any], position: int, steps: Steps) -> dict[str, Any]:
    if position == ARGV_POSITION:
        argv = [COMMAND_SEPARATOR.join([m, *(str(a) for a in args)]) for m, args in steps]
        return {**scenario, "argv": argv, "derived": SCRIPT_SEQUENCE}
    args = list(scenario.get("args") or [])
    args[position] = [[m, *a] for m, a in steps]
    return {**scenario, "args": args, "derived": SCRIPT_SEQUENCE}


def sequence_checks(
    scenarios: list[dict[str, Any]], base: dict[str, str], reference: dict[str, str]
) -> list[dict[str, Any]]:
    """The generated sequences of a task (see the module docstring), at most MAX_SEQUENCES in all,
    shared between its object targets and script targets (script arguments and command lines)."""
    listed = [s for s in scenarios if not s.get("generated") and not s.get("derived")]
    objects: dict[str, list[dict[str, Any]]] = {}
    scripts: dict[str, list[tuple[dict[str, Any], int]]] = {}
    for s in listed:
        target = str(s.get("target"))
        if s.get("kind") == "object" and s.get("steps"):
            objects.setdefault(target, []).append(s)
        position = _script_position(list(s.get("args") or [])) if s.get("kind") == "call" else None
        if s.get("kind") == "cli" and _argv_commands(list(s.get("argv") or [])):
            position = ARGV_POSITION
        if position is not None:
            scripts.setdefault(target, []).append((s, position))
    touched = touched_names(base, reference)
    makers: list[tuple[str, StepPool, list[Steps]]] = []
    for target, group in objects.items():
        origins = [[(str(m), list(a)) for m, a in s.get("steps") or []] for s in group]
        makers.append((target, object_pool(group, base, reference, target), origins))
    for target, entries in scripts.items():
        commands = [_script_of(s, p) for s, p in entries]
        origins = [[(c[0], list(c[1:])) for c in script] for script in commands]
        makers.append((target, script_pool(commands, touched), origins))
    if not makers:
        return []
    even = [MAX_SEQUENCES // len(makers) + (i < MAX_SEQUENCES % len(makers)) for i in range(len(makers))]
    share = [min(MAX_PER_TARGET, count) for count in even]
    checks: list[dict[str, Any]] = []
    for (target, pool, origins), count in zip(makers, share, strict=True):
        for number, steps in draw_sequences(pool, target, count, origins):
            if target in objects:
                origin = objects[target][number]
                checks.append({**origin, "steps": [[m, a] for m, a in steps], "derived": OBJECT_SEQUENCE})
            else:
                scenario, position = scripts[target][number]
                checks.append(_with_script(scenario, position, steps))
    return checks


def sequence_kept(check: dict[str, Any], value: Any) -> bool:
    """Whether a generated sequence is compared: only where the reference finishes it without raising."""
    if check.get("derived") not in SEQUENCE_LABELS:
        return True
    if not isinstance(value, dict) or "raises" in value or "init" in value:
        return False
    if "exit" in value:  # a command line: only where the reference exits with success
        return value.get("exit") == 0
    return not any(isinstance(step, dict) and "raises" in step for step in value.get("steps") or [])


def observed_attributes(base: dict[str, str], reference: dict[str, str], target: str) -> list[str]:
    """Public attributes (`self.name = ...`) the reference's class `target` sets that the base's class
    sets too: state of the object the agent can see and a caller reads (`cache.stats`)."""
    found: list[list[str]] = []
    for files in (reference, base):
        source, name = _source(files, target)
        node = _class_node(source, name)
        names: list[str] = []
        for item in ast.walk(node) if node is not None else []:
            targets = (
                item.targets
                if isinstance(item, ast.Assign)
                else [item.target]
                if isinstance(item, ast.AugAssign | ast.AnnAssign)
                else []
            )
            for t in targets:
                if (
                    isinstance(t, ast.Attribute)
                    and isinstance(t.value, ast.Name)
                    and t.value.id == "self"
                    and not t.attr.startswith("_")
                    and t.attr not in names
                ):
                    names.append(t.attr)
        found.append(names)
    return [n for n in found[0] if n in found[1]]


def with_observed_state(
    scenarios: list[dict[str, Any]], base: dict[str, str], reference: dict[str, str]
) -> list[dict[str, Any]]:
    """Object scenarios marked with the public attributes the sandbox reads after each step."""
    cache: dict[str, list[str]] = {}
    out: list[dict[str, Any]] = []
    for s in scenarios:
        if s.get("kind") == "object":
            target = str(s.get("target"))
            if target not in cache:
                cache[target] = observed_attributes(base, reference, target)
            if cache[target]:
                s = {**s, "observe": cache[target]}
        out.append(s)
    return out
