"""An LRU cache with hit/miss counters."""

from collections import OrderedDict

from lrucache.stats import CacheStats


class LRUCache:
    """At most `capacity` entries; inserting into a full cache evicts the least recently used."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._data: OrderedDict[str, int] = OrderedDict()
        self.stats = CacheStats()

    def get(self, key: str) -> int | None:
        """The value, marking it most recently used; None (a miss) when absent."""
        if key not in self._data:
            self.stats.misses += 1
            return None
        self._data.move_to_end(key)
        self.stats.hits += 1
        return self._data[key]

    def put(self, key: str, value: int) -> str | None:
        """Store a value; returns the evicted key, if any."""
        if key in self._data:
            self._data.move_to_end(key)
            self._data[key] = value
            return None
        self._data[key] = value
        if len(self._data) > self.capacity:
            evicted, _ = self._data.popitem(last=False)
            self.stats.evictions += 1
            return evicted
        return None

    def keys(self) -> list[str]:
        """Keys from least to most recently used."""
        return list(self._data)

    def __len__(self) -> int:
        return len(self._data)
