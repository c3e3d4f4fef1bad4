"""A time-to-live cache; time is passed in explicitly so behaviour is deterministic."""

from lrucache.stats import CacheStats


class TTLCache:
    """Entries expire `ttl` time units after they were stored (an entry at exactly ttl is expired)."""

    def __init__(self, ttl: int) -> None:
        if ttl <= 0:
            raise ValueError("ttl must be positive")
        self.ttl = ttl
        self._data: dict[str, tuple[int, int]] = {}
        self.stats = CacheStats()

    def put(self, key: str, value: int, now: int) -> None:
        self._data[key] = (value, now)

    def get(self, key: str, now: int) -> int | None:
        """The value if stored less than ttl ago, else None (expired entries are dropped)."""
        entry = self._data.get(key)
        if entry is None:
            self.stats.misses += 1
            return None
        value, stored = entry
        if now - stored >= self.ttl:
            del self._data[key]
            self.stats.misses += 1
            self.stats.expirations += 1
            return None
        self.stats.hits += 1
        return value

    def purge(self, now: int) -> int:
        """Drop every expired entry; returns how many were dropped."""
        expired = [key for key, (_, stored) in self._data.items() if now - stored >= self.ttl]
        for key in expired:
            del self._data[key]
        self.stats.expirations += len(expired)
        return len(expired)
