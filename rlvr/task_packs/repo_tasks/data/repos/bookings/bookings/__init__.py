"""Room bookings on sqlite: rooms, stays without overlaps, quotes and invoices, versioned schema migrations."""

from bookings.pricing import quote
from bookings.store import Bookings, run_script

__all__ = ["Bookings", "quote", "run_script"]
