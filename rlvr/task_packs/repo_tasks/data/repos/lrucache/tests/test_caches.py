from lrucache.lru import LRUCache
from lrucache.ttl import TTLCache


def test_lru_evicts_least_recent() -> None:
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1
    assert cache.put("c", 3) == "b"
    assert cache.keys() == ["a", "c"]


def test_lru_stats() -> None:
    cache = LRUCache(1)
    cache.put("a", 1)
    cache.get("a")
    cache.get("z")
    assert cache.stats.hit_ratio() == 0.5


def test_ttl() -> None:
    cache = TTLCache(10)
    cache.put("k", 5, now=0)
    assert cache.get("k", now=9) == 5
    assert cache.get("k", now=10) is None
    cache.put("j", 1, now=0)
    assert cache.purge(now=20) == 1
