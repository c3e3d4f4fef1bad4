"""The router: routes by method and pattern; handlers return a body; dispatch returns (status, body)."""

from collections.abc import Callable

from router.patterns import Pattern, compile_pattern

Handler = Callable[[dict[str, int | str]], str]


class Router:
    def __init__(self) -> None:
        self._routes: list[tuple[str, Pattern, Handler]] = []

    def add(self, method: str, pattern: str, handler: Handler) -> None:
        self._routes.append((method.upper(), compile_pattern(pattern), handler))

    def dispatch(self, method: str, path: str) -> tuple[int, str]:
        """(200, body) for the first matching route; 405 if the path matches another method; else 404."""
        path_matched = False
        for route_method, pattern, handler in self._routes:
            params = pattern.match(path)
            if params is None:
                continue
            if route_method != method.upper():
                path_matched = True
                continue
            return 200, handler(params)
        return (405, "method not allowed") if path_matched else (404, "not found")


def demo_router() -> Router:
    """The router the CLI and examples use."""
    router = Router()
    router.add("GET", "/users/<id:int>", lambda p: f"user {p['id']}")
    router.add("GET", "/users/<id:int>/posts/<slug>", lambda p: f"post {p['slug']} by {p['id']}")
    router.add("POST", "/users", lambda p: "created")
    router.add("GET", "/health", lambda p: "ok")
    return router


def main(argv: list[str]) -> int:
    """main(["GET", "/users/7"]) prints "STATUS BODY"; exit status 0 for 2xx, 1 otherwise."""
    if len(argv) != 2:
        print("usage: METHOD PATH")
        return 2
    status, body = demo_router().dispatch(argv[0], argv[1])
    print(f"{status} {body}")
    return 0 if 200 <= status < 300 else 1
