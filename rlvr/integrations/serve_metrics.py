"""Prometheus metrics of `rlvr serve` (GET /metrics), on a registry of the app's own.

Queue and throughput figures are read from the batcher at scrape time; request outcomes, the
latency histogram and verdict counts are recorded as requests are answered. Flags are labels, so
the number of distinct flag labels is capped (later new flags count as "other").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from rlvr.core.types import Verdict
from rlvr.integrations.batcher import MicroBatcher

LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)
MAX_FLAG_LABELS = 64
OTHER_FLAG = "other"


class _QueueCollector(Collector):
    def __init__(self, batcher: MicroBatcher, requests_in_progress: Callable[[], int]) -> None:
        self.batcher = batcher
        self.requests_in_progress = requests_in_progress

    def collect(self) -> Iterator[Metric]:
        stats = self.batcher.stats()
        gauges = [
            ("rlvr_queue_items", "Items waiting to be graded", stats.queued_items),
            ("rlvr_queue_requests", "Requests with items waiting to be graded", stats.queued_requests),
            ("rlvr_grading_items", "Items in the batch being graded", stats.grading_items),
            ("rlvr_queue_capacity_items", "Items the queue admits", stats.capacity_items or 0),
            ("rlvr_queue_drain_seconds", "Estimated time to grade what is queued", stats.drain_seconds),
            ("rlvr_items_per_second", "Items graded per second over the last minute", stats.items_per_second),
            (
                "rlvr_requests_in_progress",
                "Reward requests being received or waiting",
                self.requests_in_progress(),
            ),
        ]
        for name, documentation, value in gauges:
            yield GaugeMetricFamily(name, documentation, value=value)
        counters = [
            ("rlvr_items_graded", "Distinct items graded", stats.items_graded),
            ("rlvr_batches_graded", "Grading batches run", stats.batches_graded),
            ("rlvr_cache_hits", "Items answered from the verdict cache", stats.cache_hits),
        ]
        for name, documentation, value in counters:
            yield CounterMetricFamily(name, documentation, value=value)


class ServeMetrics:
    """The metrics of one reward server."""

    def __init__(self, batcher: MicroBatcher, requests_in_progress: Callable[[], int]) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.requests = Counter(
            "rlvr_requests", "Reward requests answered, by HTTP status", ["status"], registry=self.registry
        )
        self.latency = Histogram(
            "rlvr_request_duration_seconds",
            "Time from receipt to answer of reward requests answered with rewards (200)",
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.verdicts = Counter(
            "rlvr_verdicts",
            "Verdicts served, by outcome (passed, failed, error)",
            ["outcome"],
            registry=self.registry,
        )
        self.flags = Counter(
            "rlvr_verdict_flags", "Verdicts served carrying each flag", ["flag"], registry=self.registry
        )
        self._flag_labels: set[str] = set()
        self.registry.register(_QueueCollector(batcher, requests_in_progress))

    def observe_request(self, status: int, seconds: float) -> None:
        self.requests.labels(status=str(status)).inc()
        if status == 200:
            self.latency.observe(seconds)

    def observe_verdicts(self, verdicts: Iterable[Verdict]) -> None:
        for verdict in verdicts:
            outcome = "error" if verdict.error is not None else "passed" if verdict.passed else "failed"
            self.verdicts.labels(outcome=outcome).inc()
            for flag in verdict.flags:
                self.flags.labels(flag=self._flag_label(flag)).inc()

    def _flag_label(self, flag: str) -> str:
        if flag in self._flag_labels:
            return flag
        if len(self._flag_labels) >= MAX_FLAG_LABELS:
            return OTHER_FLAG
        self._flag_labels.add(flag)
        return flag

    def render(self) -> tuple[bytes, str]:
        """The exposition text and its content type."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
