"""Counters shared by the caches."""

from dataclasses import dataclass


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    evictions: int = 0
    expirations: int = 0

    def hit_ratio(self) -> float:
        """Hits over lookups, rounded to 3 places; 0.0 before any lookup."""
        lookups = self.hits + self.misses
        return round(self.hits / lookups, 3) if lookups else 0.0

    def as_dict(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses, "evictions": self.evictions, "expirations": self.expirations}
