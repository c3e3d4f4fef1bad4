from router.app import Router, demo_router, main
from router.patterns import compile_pattern


def test_pattern() -> None:
    assert compile_pattern("/a/<n:int>").match("/a/12/") == {"n": 12}
    assert compile_pattern("/a/<n:int>").match("/a/x") is None


def test_dispatch() -> None:
    router = demo_router()
    assert router.dispatch("get", "/users/3") == (200, "user 3")
    assert router.dispatch("DELETE", "/users/3") == (405, "method not allowed")
    assert router.dispatch("GET", "/nope") == (404, "not found")


def test_first_route_wins() -> None:
    router = Router()
    router.add("GET", "/x/<a>", lambda p: "first")
    router.add("GET", "/x/<b>", lambda p: "second")
    assert router.dispatch("GET", "/x/1") == (200, "first")
    assert main(["GET", "/health"]) == 0
