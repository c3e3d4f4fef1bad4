"""Procedural templates of `tool-worlds`: each draws a world (entities and distractors), a goal, a policy and a
reference solution from a seeded RNG at a difficulty level.

Difficulty: 1 = one write call whose arguments the instruction states; 2 = a read, then a write (or an answer)
computed from what was read; 3 = a listing, then several writes chosen by a condition. A template drawn one
level above its base adds distractors and a stricter policy (read-only resources, a tool it must not use, a
tight call budget), each stated in the instruction.

`TRAIN_NAMES` and `TEST_NAMES` are disjoint vocabularies: test-split templates also run in held-out worlds
(other directories, accounts, titles, items and month). Training templates are also drawn from a second seed
stream (`unseen_world`) for the `test_worlds` split: the skills trained on, in worlds never trained on.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Spec = dict[str, Any]  # text, world, state, goal, policy, reference, optional allowed_changes


@dataclass(frozen=True)
class Names:
    directories: tuple[str, ...]
    stems: tuple[str, ...]
    words: tuple[str, ...]
    accounts: tuple[str, ...]
    titles: tuple[str, ...]
    items: tuple[str, ...]
    month: str


TRAIN_NAMES = Names(
    directories=("/docs", "/notes", "/inbox", "/projects", "/reports"),
    stems=("alpha", "beacon", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "iris", "juniper"),
    words=("budget", "plan", "draft", "summary", "todo", "minutes", "idea", "list"),
    accounts=(
        "checking",
        "savings",
        "rent",
        "food",
        "travel",
        "acme",
        "globex",
        "initech",
        "payroll",
        "bonus",
    ),
    titles=("standup", "review", "lunch", "planning", "demo", "retro", "sync", "kickoff"),
    items=("bolt", "nut", "washer", "hinge", "bracket", "spring", "gear", "pulley"),
    month="2026-03",
)
TEST_NAMES = Names(
    directories=("/memos", "/drafts", "/letters", "/shared"),
    stems=("maple", "nickel", "onyx", "pepper", "quartz", "raven", "sierra", "tundra"),
    words=("invoice", "agenda", "report", "outline", "memo", "notice"),
    accounts=("vault", "petty", "umbrella", "wayne", "stark", "reserve", "tyrell", "cyberdyne"),
    titles=("dentist", "interview", "offsite", "training", "workshop", "checkup"),
    items=("valve", "gasket", "rivet", "clamp", "axle", "sprocket"),
    month="2026-05",
)


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


@dataclass
class Draw:
    """What one template draws: the rest (policy text, budget) is added by `with_policy`."""

    text: str
    world: str
    state: dict[str, Any]
    reference: list[Any]
    goal: dict[str, Any]
    tools_used: tuple[str, ...]
    protected: tuple[str, ...] = ()  # resource patterns the solution never writes (read-only candidates)


TOOLS_BY_WORLD = {
    "files": ("list_files", "read_file", "write_file", "delete_file", "move_file"),
    "ledger": ("list_accounts", "get_balance", "transfer"),
    "calendar": ("list_events", "create_event", "delete_event"),
    "inventory": ("list_items", "check_stock", "adjust_stock", "set_price"),
}


def with_policy(rng: random.Random, draw: Draw, strict: bool) -> Spec:
    """The spec of a draw; `strict` adds a read-only rule, a forbidden tool and a budget, told in the text."""
    optimal = sum(len(turn) for turn in draw.reference if isinstance(turn, list))
    policy: dict[str, Any] = {}
    rules: list[str] = []
    if strict:
        if draw.protected:
            policy["read_only"] = list(draw.protected)
            shown = ", ".join(draw.protected)
            rules.append("Change nothing." if draw.protected == ("*",) else f"Never modify {shown}.")
        unused = [t for t in TOOLS_BY_WORLD[draw.world] if t not in draw.tools_used]
        if unused:
            banned = rng.choice(unused)
            policy["forbidden_tools"] = [banned]
            rules.append(f"Do not use {banned}.")
        policy["budget"] = optimal + rng.randint(0, 1)
        rules.append(f"Use at most {policy['budget']} tool call{'s' * (policy['budget'] > 1)}.")
    text = " ".join([draw.text, *rules])
    return {
        "text": text,
        "world": draw.world,
        "state": draw.state,
        "goal": draw.goal,
        "policy": policy,
        "reference": draw.reference,
    }


# ---------------------------------------------------------------- files


def _file_world(rng: random.Random, names: Names, count: int) -> dict[str, str]:
    files: dict[str, str] = {}
    while len(files) < count:
        path = f"{rng.choice(names.directories)}/{rng.choice(names.stems)}.{rng.choice(['txt', 'md', 'log'])}"
        files[path] = f"{rng.choice(names.words)} {rng.randint(1, 99)}"
    return files


def _fresh_path(rng: random.Random, names: Names, taken: dict[str, str], directory: str | None = None) -> str:
    while True:
        path = f"{directory or rng.choice(names.directories)}/{rng.choice(names.stems)}.{rng.choice(['txt', 'md'])}"
        if path not in taken:
            return path


def _config(files: dict[str, str], rng: random.Random) -> tuple[str, ...]:
    files["/etc/app.conf"] = f"mode=prod\nport={rng.randint(3000, 9000)}"
    return ("/etc/*",)


def create_file(rng: random.Random, names: Names, extra: int) -> Draw:
    files = _file_world(rng, names, 1 + extra)
    protected = _config(files, rng)
    path = _fresh_path(rng, names, files)
    content = f"{rng.choice(names.words)} {rng.randint(100, 999)}"
    return Draw(
        f"Create the file {path} with the content: {content}",
        "files",
        {"files": files},
        [[call("write_file", path=path, content=content)], "done"],
        {"state": {"files": {path: content}}},
        ("write_file",),
        protected,
    )


def remove_file(rng: random.Random, names: Names, extra: int) -> Draw:
    files = _file_world(rng, names, 2 + extra)
    protected = _config(files, rng)
    path = rng.choice(sorted(p for p in files if not p.startswith("/etc/")))
    return Draw(
        f"Delete the file {path}.",
        "files",
        {"files": files},
        [[call("delete_file", path=path)], "done"],
        {"absent": [["files", path]]},
        ("delete_file",),
        protected,
    )


def rename_file(rng: random.Random, names: Names, extra: int) -> Draw:
    files = _file_world(rng, names, 2 + extra)
    protected = _config(files, rng)
    source = rng.choice(sorted(p for p in files if not p.startswith("/etc/")))
    target = _fresh_path(rng, names, files)
    return Draw(
        f"Rename {source} to {target}.",
        "files",
        {"files": files},
        [[call("move_file", source=source, target=target)], "done"],
        {"state": {"files": {target: files[source]}}, "absent": [["files", source]]},
        ("move_file",),
        protected,
    )


def append_line(rng: random.Random, names: Names, extra: int) -> Draw:
    files = _file_world(rng, names, 2 + extra)
    protected = _config(files, rng)
    path = rng.choice(sorted(p for p in files if not p.startswith("/etc/")))
    line = f"{rng.choice(names.words)} {rng.randint(100, 999)}"
    after = files[path] + "\n" + line
    return Draw(
        f"Append the line '{line}' to {path}: its new content is the old content, a newline, then that line.",
        "files",
        {"files": files},
        [[call("read_file", path=path)], [call("write_file", path=path, content=after)], "done"],
        {"state": {"files": {path: after}}},
        ("read_file", "write_file"),
        protected,
    )


def copy_file(rng: random.Random, names: Names, extra: int) -> Draw:
    files = _file_world(rng, names, 2 + extra)
    protected = _config(files, rng)
    source = rng.choice(sorted(p for p in files if not p.startswith("/etc/")))
    target = _fresh_path(rng, names, files)
    return Draw(
        f"Copy {source} to {target} (same content); keep {source} as it is.",
        "files",
        {"files": files},
        [[call("read_file", path=source)], [call("write_file", path=target, content=files[source])], "done"],
        {"state": {"files": {source: files[source], target: files[source]}}},
        ("read_file", "write_file"),
        protected,
    )


def trash_file(rng: random.Random, names: Names, extra: int) -> Draw:
    files = _file_world(rng, names, 2 + extra)
    protected = _config(files, rng)
    source = rng.choice(sorted(p for p in files if not p.startswith("/etc/")))
    target = "/trash/" + source.rsplit("/", 1)[1]
    return Draw(
        f"Move {source} into /trash, keeping its file name.",
        "files",
        {"files": files},
        [[call("move_file", source=source, target=target)], "done"],
        {"state": {"files": {target: files[source]}}, "absent": [["files", source]]},
        ("move_file",),
        protected,
    )


def archive_by_extension(rng: random.Random, names: Names, extra: int) -> Draw:
    directory, archive = rng.sample(names.directories, 2)
    extension = rng.choice(["txt", "md"])
    files = _file_world(rng, names, 1 + extra)
    stems = rng.sample(names.stems, 4)
    for i, stem in enumerate(stems):
        files[f"{directory}/{stem}.{extension if i < 2 or rng.random() < 0.5 else 'log'}"] = (
            f"{rng.choice(names.words)} {rng.randint(1, 99)}"
        )
    protected = _config(files, rng)
    moves = [
        (p, f"{archive}/{p.rsplit('/', 1)[1]}")
        for p in sorted(files)
        if p.startswith(directory + "/") and p.endswith("." + extension)
    ]
    files = {p: c for p, c in files.items() if not p.startswith(archive + "/")}
    return Draw(
        f"Move every .{extension} file in {directory} to {archive}, keeping its file name.",
        "files",
        {"files": files},
        [
            [call("list_files", directory=directory)],
            [call("move_file", source=s, target=t) for s, t in moves],
            "done",
        ],
        {"state": {"files": {t: files[s] for s, t in moves}}, "absent": [["files", s] for s, _ in moves]},
        ("list_files", "move_file"),
        protected,
    )


# ---------------------------------------------------------------- ledger


def _accounts(rng: random.Random, names: Names, count: int) -> dict[str, int]:
    return {
        name: rng.randint(0, 900) * 100 + rng.randint(0, 99) for name in rng.sample(names.accounts, count)
    }


def _ledger(accounts: dict[str, int]) -> dict[str, Any]:
    return {"accounts": accounts, "transfers": []}


def transfer_exact(rng: random.Random, names: Names, extra: int, verb: str = "Transfer") -> Draw:
    accounts = _accounts(rng, names, 3 + extra)
    source, target, *others = list(accounts)
    accounts[source] = max(accounts[source], 1000)
    amount = rng.randint(1, accounts[source] // 100) * 100 + rng.choice([0, 25, 50])
    amount = min(amount, accounts[source])
    if verb == "Refund":
        text = f"Refund {amount} cents to {target} from {source}."
    else:
        text = f"Transfer {amount} cents from {source} to {target}."
    return Draw(
        text,
        "ledger",
        _ledger(accounts),
        [[call("transfer", source=source, target=target, amount=amount)], "done"],
        {"state": {"accounts": {source: accounts[source] - amount, target: accounts[target] + amount}}},
        ("transfer",),
        tuple(others[:1]),
    )


def refund(rng: random.Random, names: Names, extra: int) -> Draw:
    return transfer_exact(rng, names, extra, verb="Refund")


def top_up_to(rng: random.Random, names: Names, extra: int) -> Draw:
    accounts = _accounts(rng, names, 3 + extra)
    source, target, *others = list(accounts)
    accounts[target] = rng.randint(0, 300) * 10
    wanted = accounts[target] + rng.randint(1, 200) * 10
    accounts[source] = max(accounts[source], wanted + 1000)
    shortfall = wanted - accounts[target]
    return Draw(
        f"Make sure {target} holds exactly {wanted} cents by moving the shortfall from {source}.",
        "ledger",
        _ledger(accounts),
        [
            [call("get_balance", account=target)],
            [call("transfer", source=source, target=target, amount=shortfall)],
            "done",
        ],
        {"state": {"accounts": {source: accounts[source] - shortfall, target: wanted}}},
        ("get_balance", "transfer"),
        tuple(others[:1]),
    )


def sweep_account(rng: random.Random, names: Names, extra: int) -> Draw:
    accounts = _accounts(rng, names, 3 + extra)
    source, target, *others = list(accounts)
    accounts[source] = max(accounts[source], 1)
    return Draw(
        f"Move all the money in {source} to {target}, leaving {source} at 0.",
        "ledger",
        _ledger(accounts),
        [
            [call("get_balance", account=source)],
            [call("transfer", source=source, target=target, amount=accounts[source])],
            "done",
        ],
        {"state": {"accounts": {source: 0, target: accounts[target] + accounts[source]}}},
        ("get_balance", "transfer"),
        tuple(others[:1]),
    )


def balance_answer(rng: random.Random, names: Names, extra: int) -> Draw:
    accounts = _accounts(rng, names, 3 + extra)
    account = rng.choice(list(accounts))
    return Draw(
        f"What is the balance of {account}, in cents? Answer with the number only.",
        "ledger",
        _ledger(accounts),
        [[call("get_balance", account=account)], str(accounts[account])],
        {"answer": str(accounts[account])},
        ("get_balance",),
        ("*",),
    )


def split_evenly(rng: random.Random, names: Names, extra: int) -> Draw:
    accounts = _accounts(rng, names, 4 + extra)
    source, *rest = list(accounts)
    targets = rest[: rng.randint(2, 3)]
    each = rng.randint(1, 50) * 100
    accounts[source] = max(accounts[source], each * len(targets) + rng.randint(0, 5000))
    goal = {source: accounts[source] - each * len(targets), **{t: accounts[t] + each for t in targets}}
    others = [a for a in rest if a not in targets]
    return Draw(
        f"Send {each} cents from {source} to each of {', '.join(targets)}.",
        "ledger",
        _ledger(accounts),
        [[call("transfer", source=source, target=t, amount=each) for t in targets], "done"],
        {"state": {"accounts": goal}},
        ("transfer",),
        tuple(others[:1]),
    )


# ---------------------------------------------------------------- calendar


def _day(rng: random.Random, names: Names) -> str:
    return f"{names.month}-{rng.randint(10, 28)}"


def _events(rng: random.Random, names: Names, days: list[str], per_day: int) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for day in days:
        hours = sorted(rng.sample(range(8, 18), per_day))
        titles = rng.sample(names.titles, per_day)
        for hour, title in zip(hours, titles, strict=True):
            events.append({"id": len(events) + 1, "title": title, "day": day, "start": hour, "end": hour + 1})
    return events


def _other_days(rng: random.Random, names: Names, day: str, count: int) -> list[str]:
    # in draw order (iterating a set would follow the per-process string hash: worlds differing by run)
    return [d for d in dict.fromkeys(_day(rng, names) for _ in range(count)) if d != day]


def book_at(rng: random.Random, names: Names, extra: int) -> Draw:
    day = _day(rng, names)
    events = _events(rng, names, [day, *_other_days(rng, names, day, 1 + extra)], 2)
    busy = {h for e in events if e["day"] == day for h in range(e["start"], e["end"])}
    start = rng.choice([h for h in range(8, 18) if h not in busy and h + 1 not in busy])
    end = start + 1 if start + 1 in busy or start + 2 in busy or rng.random() < 0.5 else start + 2
    title = rng.choice([t for t in names.titles if all(t != e["title"] for e in events if e["day"] == day)])
    new_id = 1 + max(e["id"] for e in events)
    created = {"id": new_id, "title": title, "day": day, "start": start, "end": end}
    return Draw(
        f"Book '{title}' on {day} from {start}:00 to {end}:00.",
        "calendar",
        {"events": events},
        [[call("create_event", title=title, day=day, start=start, end=end)], "done"],
        {"state": {"events": [created, *events]}},
        ("create_event",),
        (),
    )


def delete_by_id(rng: random.Random, names: Names, extra: int) -> Draw:
    day = _day(rng, names)
    events = _events(rng, names, [day, *_other_days(rng, names, day, 1 + extra)], 2)
    victim = rng.choice(events)
    keep = [e for e in events if e is not victim]
    return Draw(
        f"Delete event {victim['id']} ('{victim['title']}' on {victim['day']}).",
        "calendar",
        {"events": events},
        [[call("delete_event", event_id=victim["id"])], "done"],
        {"state": {"events": keep}},
        ("delete_event",),
        (),
    )


def _cancel(rng: random.Random, names: Names, extra: int, by_hour: bool) -> Draw:
    day = _day(rng, names)
    events = _events(rng, names, [day, *_other_days(rng, names, day, 1 + extra)], 2 + extra)
    victim = rng.choice([e for e in events if e["day"] == day])
    keep = [e for e in events if e is not victim]
    text = (
        f"Cancel the event that starts at {victim['start']}:00 on {day}."
        if by_hour
        else f"Cancel the '{victim['title']}' event on {day}."
    )
    return Draw(
        text,
        "calendar",
        {"events": events},
        [[call("list_events", day=day)], [call("delete_event", event_id=victim["id"])], "done"],
        {"state": {"events": keep}},
        ("list_events", "delete_event"),
        (),
    )


def cancel_by_title(rng: random.Random, names: Names, extra: int) -> Draw:
    return _cancel(rng, names, extra, by_hour=False)


def cancel_at_hour(rng: random.Random, names: Names, extra: int) -> Draw:
    return _cancel(rng, names, extra, by_hour=True)


def count_events(rng: random.Random, names: Names, extra: int) -> Draw:
    day = _day(rng, names)
    events = _events(rng, names, [day], rng.randint(1, 4))
    events += [
        {**e, "id": e["id"] + len(events)}
        for e in _events(rng, names, _other_days(rng, names, day, 1 + extra), 2)
    ]
    count = sum(e["day"] == day for e in events)
    return Draw(
        f"How many events are there on {day}? Answer with the number only.",
        "calendar",
        {"events": events},
        [[call("list_events", day=day)], str(count)],
        {"answer": str(count)},
        ("list_events",),
        ("*",),
    )


def book_earliest_free(rng: random.Random, names: Names, extra: int) -> Draw:
    day = _day(rng, names)
    events = _events(rng, names, [day, *_other_days(rng, names, day, 1 + extra)], 3 + extra)
    duration = rng.randint(1, 2)
    start = next(
        h
        for h in range(8, 23 - duration)
        if all(not (e["day"] == day and h < e["end"] and e["start"] < h + duration) for e in events)
    )
    title = rng.choice([t for t in names.titles if all(t != e["title"] for e in events if e["day"] == day)])
    created = {"id": 1 + max(e["id"] for e in events), "title": title, "day": day, "start": start}
    created["end"] = start + duration
    return Draw(
        f"Book a {duration}-hour '{title}' on {day} at the earliest free time from 8:00 on.",
        "calendar",
        {"events": events},
        [
            [call("list_events", day=day)],
            [call("create_event", title=title, day=day, start=start, end=start + duration)],
            "done",
        ],
        {"state": {"events": [created, *events]}},
        ("list_events", "create_event"),
        (),
    )


# ---------------------------------------------------------------- inventory


def _items(rng: random.Random, names: Names, count: int) -> dict[str, dict[str, Any]]:
    skus = rng.sample(range(100, 1000), count)
    return {
        f"SKU-{sku}": {"name": name, "qty": rng.randint(0, 40), "price": round(rng.uniform(0.5, 20.0), 2)}
        for sku, name in zip(skus, rng.sample(names.items, count), strict=True)
    }


def _untouched(items: dict[str, Any], sku: str) -> tuple[str, ...]:
    return tuple(s for s in sorted(items) if s != sku)[:1]


def set_price(rng: random.Random, names: Names, extra: int) -> Draw:
    items = _items(rng, names, 3 + extra)
    sku = rng.choice(sorted(items))
    price = round(rng.uniform(0.5, 30.0), 2)
    return Draw(
        f"Set the price of {sku} to {price}.",
        "inventory",
        {"items": items},
        [[call("set_price", sku=sku, price=price)], "done"],
        {"state": {"items": {sku: {"price": price, "qty": items[sku]["qty"]}}}},
        ("set_price",),
        _untouched(items, sku),
    )


def receive_shipment(rng: random.Random, names: Names, extra: int) -> Draw:
    items = _items(rng, names, 3 + extra)
    sku = rng.choice(sorted(items))
    count = rng.randint(1, 30)
    return Draw(
        f"{count} units of {sku} arrived: add them to its stock.",
        "inventory",
        {"items": items},
        [[call("adjust_stock", sku=sku, delta=count)], "done"],
        {"state": {"items": {sku: {"qty": items[sku]["qty"] + count, "price": items[sku]["price"]}}}},
        ("adjust_stock",),
        _untouched(items, sku),
    )


def sell_units(rng: random.Random, names: Names, extra: int) -> Draw:
    items = _items(rng, names, 3 + extra)
    sku = rng.choice(sorted(items))
    items[sku]["qty"] = max(items[sku]["qty"], 1)
    count = rng.randint(1, items[sku]["qty"])
    return Draw(
        f"We sold {count} units of {sku}: take them out of its stock.",
        "inventory",
        {"items": items},
        [[call("adjust_stock", sku=sku, delta=-count)], "done"],
        {"state": {"items": {sku: {"qty": items[sku]["qty"] - count, "price": items[sku]["price"]}}}},
        ("adjust_stock",),
        _untouched(items, sku),
    )


def restock_to(rng: random.Random, names: Names, extra: int) -> Draw:
    items = _items(rng, names, 3 + extra)
    sku = rng.choice(sorted(items))
    wanted = items[sku]["qty"] + rng.randint(1, 30)
    return Draw(
        f"Restock {sku} to exactly {wanted} units.",
        "inventory",
        {"items": items},
        [
            [call("check_stock", sku=sku)],
            [call("adjust_stock", sku=sku, delta=wanted - items[sku]["qty"])],
            "done",
        ],
        {"state": {"items": {sku: {"qty": wanted, "price": items[sku]["price"]}}}},
        ("check_stock", "adjust_stock"),
        _untouched(items, sku),
    )


def stock_answer(rng: random.Random, names: Names, extra: int) -> Draw:
    items = _items(rng, names, 3 + extra)
    sku = rng.choice(sorted(items))
    return Draw(
        f"How many units of {sku} are in stock? Answer with the number only.",
        "inventory",
        {"items": items},
        [[call("check_stock", sku=sku)], str(items[sku]["qty"])],
        {"answer": str(items[sku]["qty"])},
        ("check_stock",),
        ("*",),
    )


def price_answer(rng: random.Random, names: Names, extra: int) -> Draw:
    items = _items(rng, names, 3 + extra)
    sku = rng.choice(sorted(items))
    return Draw(
        f"What is the price of {sku}? Answer with the number only.",
        "inventory",
        {"items": items},
        [[call("list_items")], str(items[sku]["price"])],
        {"answer": str(items[sku]["price"])},
        ("list_items",),
        ("*",),
    )


def restock_all_low(rng: random.Random, names: Names, extra: int) -> Draw:
    items = _items(rng, names, 4 + extra)
    threshold = rng.choice([5, 8, 10])
    low = sorted(sku for sku, item in items.items() if item["qty"] < threshold)
    if not low:
        first = sorted(items)[0]
        items[first]["qty"], low = rng.randint(0, threshold - 1), [first]
    target = threshold + rng.randint(2, 10)
    return Draw(
        f"Every item with fewer than {threshold} units in stock must be restocked to exactly {target} units.",
        "inventory",
        {"items": items},
        [
            [call("list_items")],
            [call("adjust_stock", sku=s, delta=target - items[s]["qty"]) for s in low],
            "done",
        ],
        {"state": {"items": {s: {"qty": target, "price": items[s]["price"]} for s in low}}},
        ("list_items", "adjust_stock"),
        (),
    )


# ---------------------------------------------------------------- the catalogue

Template = Callable[[random.Random, Names, int], Draw]

# name -> (base difficulty, template). Each is drawn at its base difficulty and one level above.
TRAIN_TEMPLATES: dict[str, tuple[int, Template]] = {
    "create_file": (1, create_file),
    "remove_file": (1, remove_file),
    "rename_file": (1, rename_file),
    "append_line": (2, append_line),
    "archive_by_extension": (3, archive_by_extension),
    "transfer_exact": (1, transfer_exact),
    "top_up_to": (2, top_up_to),
    "balance_answer": (2, balance_answer),
    "split_evenly": (2, split_evenly),
    "book_at": (1, book_at),
    "delete_by_id": (1, delete_by_id),
    "cancel_by_title": (2, cancel_by_title),
    "count_events": (2, count_events),
    "book_earliest_free": (3, book_earliest_free),
    "set_price": (1, set_price),
    "receive_shipment": (1, receive_shipment),
    "restock_to": (2, restock_to),
    "stock_answer": (2, stock_answer),
    "restock_all_low": (3, restock_all_low),
}
HELD_OUT_TEMPLATES: dict[str, tuple[int, Template]] = {
    "copy_file": (2, copy_file),
    "trash_file": (1, trash_file),
    "refund": (1, refund),
    "sweep_account": (2, sweep_account),
    "cancel_at_hour": (2, cancel_at_hour),
    "sell_units": (1, sell_units),
    "price_answer": (2, price_answer),
}


def draw_spec(template: str, difficulty: int, index: int, unseen_world: bool = False) -> Spec:
    """The spec of one procedural task; the same arguments give the same spec on every machine.
    `unseen_world`: a training template drawn from a seed stream of its own (the `test_worlds` split:
    states, goals and amounts never trained on, named from the training vocabulary)."""
    held_out = template in HELD_OUT_TEMPLATES
    base, function = HELD_OUT_TEMPLATES[template] if held_out else TRAIN_TEMPLATES[template]
    if difficulty not in (base, base + 1):
        raise ValueError(f"template {template!r} has difficulties {base} and {base + 1}, not {difficulty}")
    if unseen_world and held_out:
        raise ValueError(f"template {template!r} is held out: its tasks are all in the test split")
    stream = "tool-worlds/unseen" if unseen_world else "tool-worlds"
    rng = random.Random(f"{stream}/{template}/d{difficulty}/{index}")
    strict = difficulty > base
    draw = function(rng, TEST_NAMES if held_out else TRAIN_NAMES, 2 * strict + rng.randint(0, 1))
    return with_policy(rng, draw, strict)
