"""Typed grading options: a misspelled or mistyped option is an error that names the valid ones."""

from __future__ import annotations

import gymnasium as gym
import pytest

import rlvr  # noqa: F401  (registers the rlvr/ env ids)
from rlvr.core.pack import StaticPack
from rlvr.core.types import Task
from rlvr.graders.base import make_grader
from rlvr.graders.code.options import CodeOptions
from rlvr.graders.compose import WeightsError
from rlvr.graders.options import GraderOptions, OptionsError


def _pack(family: str = "code", **kwargs: object) -> StaticPack:
    task = Task(id="t", prompt="", family=family, hidden={"answer": "1"})
    return StaticPack("opts", [task], family=family, **kwargs)  # type: ignore[arg-type]


def test_unknown_option_names_the_key_and_suggests_the_close_one() -> None:
    with pytest.raises(OptionsError, match=r"'timout'.*did you mean 'timeout'.*Valid options:.*weights"):
        CodeOptions.from_mapping({"timout": 3}, family="code")


@pytest.mark.parametrize(
    ("key", "value"), [("timeout", "3"), ("types", "no"), ("jobs", 1.5), ("feedback", "loud"), ("jobs", True)]
)
def test_wrong_type_is_an_error(key: str, value: object) -> None:
    with pytest.raises(OptionsError, match=repr(key)):
        CodeOptions.from_mapping({key: value}, family="code")


def test_caller_overrides_pack_and_weights_merge_per_component() -> None:
    pack = _pack(weights={"perf": 0.0}, options={"timeout": 9.0, "feedback": "visible"})
    options = CodeOptions.resolve(pack, {"timeout": 2.0, "weights": {"types": 0.0}})
    assert options.timeout == 2.0 and options.feedback == "visible"
    assert options.weights == {"perf": 0.0, "types": 0.0}


def test_pack_option_typo_is_an_error_too() -> None:
    with pytest.raises(OptionsError, match="'feedbak'"):
        GraderOptions.resolve(_pack(options={"feedbak": "visible"}), {})


def test_make_grader_and_gym_make_refuse_a_misspelled_option() -> None:
    with pytest.raises(OptionsError, match="'timeot'"):
        make_grader(_pack("math"), timeot=1)
    with pytest.raises(OptionsError, match="'sandbx'"):
        gym.make("rlvr/Math-v0", pack=_pack("math"), sandbx="docker").reset(seed=0)


@pytest.mark.parametrize("family", ["math", "proof", "tool"])
def test_unknown_weight_names_are_errors_in_every_family(family: str) -> None:
    with pytest.raises(WeightsError, match="unknown reward component 'bogus'"):
        make_grader(_pack(family), weights={"bogus": 1.0})


NOT_HONOURED = {
    "sql": {"weights": {"hidden": 1.0}, "timeout": 3.0, "jobs": 2, "sandbox": "docker", "runtime": "runsc"},
    "math": {"jobs": 2, "sandbox": "docker", "runtime": "runsc"},
    "proof": {"jobs": 2, "sandbox": "docker", "runtime": "runsc"},
    "tool": {"timeout": 3.0, "jobs": 2, "sandbox": "docker", "runtime": "runsc"},
}


@pytest.mark.parametrize(
    ("family", "key", "value"), [(f, k, v) for f, options in NOT_HONOURED.items() for k, v in options.items()]
)
def test_an_option_the_family_would_ignore_is_refused_with_the_reason(
    family: str, key: str, value: object
) -> None:
    with pytest.raises(OptionsError, match=rf"the {family} grader does not take option '{key}': \w+"):
        make_grader(_pack(family), **{key: value})
    with pytest.raises(OptionsError, match=f"'{key}'"):
        gym.make(
            f"rlvr/{ {'sql': 'SQL'}.get(family, family.title()) }-v0", pack=_pack(family), **{key: value}
        )


@pytest.mark.parametrize("family", sorted(NOT_HONOURED))
def test_the_defaults_every_caller_passes_still_stand(family: str) -> None:
    """`rlvr grade`, `rlvr bench` and the trainer pass sandbox="local", jobs=None, runtime=None to
    every family: those are the defaults, not requests, and are accepted."""
    grader = make_grader(_pack(family), sandbox="local", jobs=None, runtime=None, timeout=None)
    assert grader.options.jobs is None and grader.options.sandbox == "local"
    grader.close()


def test_a_pack_that_sets_weights_for_sql_is_refused_at_load() -> None:
    with pytest.raises(OptionsError, match="does not take option 'weights'"):
        make_grader(_pack("sql", weights={"hidden": 1.0}))
    with pytest.raises(OptionsError, match="It takes no options"):
        make_grader(_pack("sql"), timout=1)
