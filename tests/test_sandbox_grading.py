"""The adversarial corpus through the real code grader (HumanEval/53, `add(x, y)`): every hostile
candidate fails the hidden-tests gate and scores below the honest control, the host is unchanged,
and the grader keeps serving. Runs on the local sandbox and on docker (runc and runsc)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from adversarial.corpus import GRADER_TIMEOUT_SECONDS, HostProbe, load_cases
from adversarial.docker_support import require_docker

from rlvr.core.types import Verdict
from rlvr.graders.base import Grader, make_grader

TASK_ID = "HumanEval/53"
HONEST = "def add(x: int, y: int) -> int:\n    return x + y\n"
ADD_CASES = [case for case in load_cases() if case.task == "add"]
# Grading-layer denial of service: sources aimed at the parser and the type checker.
DOS_SOURCES = {
    "huge_source": "def add(x: int, y: int) -> int:\n    return -1\n" + "z = 0\n" * 200_000,
    "deep_nesting": "def add(x: int, y: int) -> int:\n    return "
    + "(" * 50_000
    + "-1"
    + ")" * 50_000
    + "\n",
    "type_suppression": (
        "# pyright: basic\n# type: ignore\n"
        "def add(x: int, y: int) -> int:  # type: ignore[return-value]\n"
        "    return str(x + y)  # pyright: ignore\n"
    ),
    "null_bytes": "def add(x, y):\n    return x + y\x00\n",
}


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostProbe]:
    host = HostProbe(tmp_path_factory.mktemp("grading"))
    yield host
    host.close()


def check_batch(grader: Grader, probe: HostProbe, sources: dict[str, str]) -> None:
    names = list(sources)
    completions = [HONEST] + [sources[name] for name in names] + [HONEST]
    verdicts = grader.grade_many([TASK_ID] * len(completions), completions)
    first, hostile, last = verdicts[0], verdicts[1:-1], verdicts[-1]
    for verdict in (first, last):  # honest controls pass before and after the hostile batch
        assert verdict.passed and verdict.error is None, verdict.to_json()
    for name, verdict in zip(names, hostile, strict=True):
        assert isinstance(verdict, Verdict)
        assert not verdict.passed, f"{name} passed"
        assert verdict.gates or verdict.error, f"{name}: {verdict.to_json()}"
        tests = verdict.components.get("tests")
        assert tests is None or tests.score < tests.max, f"{name} earned test credit"
        assert verdict.reward < first.reward, f"{name} scored as high as the honest control"
    assert probe.written_files() == []
    assert probe.accepted_connections() == 0


def test_corpus_through_grader_local(corpus_grader: Grader, probe: HostProbe) -> None:
    check_batch(corpus_grader, probe, {case.name: probe.render(case.template) for case in ADD_CASES})


def test_grading_layer_dos_local(corpus_grader: Grader, probe: HostProbe) -> None:
    check_batch(corpus_grader, probe, DOS_SOURCES)


@pytest.mark.parametrize(
    "runtime", ["runc", pytest.param("runsc", marks=pytest.mark.slow)]
)  # runsc: slow, see test_sandbox_adversarial
def test_corpus_through_grader_docker(humaneval_pack: object, probe: HostProbe, runtime: str) -> None:
    require_docker(runtime)
    grader = make_grader(
        humaneval_pack,
        sandbox="docker",
        jobs=2,
        runtime=None if runtime == "runc" else runtime,
        timeout=GRADER_TIMEOUT_SECONDS,
    )  # type: ignore[arg-type]
    try:
        check_batch(grader, probe, {case.name: probe.render(case.template) for case in ADD_CASES})
    finally:
        grader.close()
