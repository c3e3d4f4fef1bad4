"""A ticketing API as a tool world of this pack's own (declared in pack.toml: `worlds = ["world.py"]`).

State is plain data: tickets by id (title, status, assignee, labels, security flag), the users, and the
comment log. Every tool is a typed, documented method; its type hints become the JSON Schema the agent sees,
and the model's arguments reach it only after that schema accepted them. `ToolError` is a refused request
(the episode shows the message and the state is left as it was).
"""

from __future__ import annotations

from typing import Any, Literal

from rlvr.specs.tool_worlds import ToolError, World, tool

Status = Literal["open", "in_progress", "closed"]


class Tickets(World):
    name = "tickets"
    journal_keys = ("comments",)
    # security tickets are never touched by an agent, in every task of this world
    default_policy = {"read_only": ["SEC-*"]}

    def initial_state(self) -> dict[str, Any]:
        return {"tickets": {}, "users": [], "comments": []}

    def _ticket(self, ticket_id: str) -> dict[str, Any]:
        if ticket_id not in self.state["tickets"]:
            raise ToolError(f"no such ticket: {ticket_id}")
        return self.state["tickets"][ticket_id]

    @tool("read")
    def search_tickets(
        self, status: Status | None = None, assignee: str | None = None, label: str | None = None
    ) -> list[dict[str, Any]]:
        """List tickets (id, title, status, assignee, labels), optionally only those with a status, an
        assignee (use "" for unassigned) or a label."""
        found = []
        for ticket_id, ticket in sorted(self.state["tickets"].items()):
            if status is not None and ticket["status"] != status:
                continue
            if assignee is not None and (ticket["assignee"] or "") != assignee:
                continue
            if label is not None and label not in ticket["labels"]:
                continue
            found.append({"id": ticket_id, **ticket})
        return found

    @tool("read", "ticket_id")
    def get_ticket(self, ticket_id: str) -> dict[str, Any]:
        """One ticket with its comments."""
        ticket = self._ticket(ticket_id)
        comments = [c["text"] for c in self.state["comments"] if c["ticket"] == ticket_id]
        return {"id": ticket_id, **ticket, "comments": comments}

    @tool("read")
    def list_users(self) -> list[str]:
        """The users a ticket can be assigned to."""
        return sorted(self.state["users"])

    @tool("write", "ticket_id")
    def assign(self, ticket_id: str, user: str) -> str:
        """Assign a ticket to a user (a name from list_users)."""
        ticket = self._ticket(ticket_id)
        if user not in self.state["users"]:
            raise ToolError(f"no such user: {user}")
        ticket["assignee"] = user
        return "ok"

    @tool("write", "ticket_id")
    def set_status(self, ticket_id: str, status: Status) -> str:
        """Set a ticket's status: open, in_progress or closed. A ticket is closed only once it has a comment."""
        ticket = self._ticket(ticket_id)
        if status == "closed" and not any(c["ticket"] == ticket_id for c in self.state["comments"]):
            raise ToolError("add a comment saying why before closing a ticket")
        ticket["status"] = status
        return "ok"

    @tool("write", "ticket_id")
    def add_comment(self, ticket_id: str, text: str) -> int:
        """Add a comment to a ticket; returns the number of comments it now has."""
        self._ticket(ticket_id)
        if not text.strip() or len(text) > 2000:
            raise ToolError("a comment is 1-2000 characters")
        self.state["comments"].append({"ticket": ticket_id, "text": text})
        return sum(c["ticket"] == ticket_id for c in self.state["comments"])

    @tool("write", "ticket_id")
    def set_labels(self, ticket_id: str, labels: list[str]) -> str:
        """Replace a ticket's labels with this list (give every label it should keep)."""
        ticket = self._ticket(ticket_id)
        if len(labels) > 10 or any(not label.strip() for label in labels):
            raise ToolError("at most 10 non-empty labels")
        ticket["labels"] = sorted(set(labels))
        return "ok"
