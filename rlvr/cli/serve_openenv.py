"""`rlvr serve --protocol openenv`: an OpenEnv environment server of a pack's agent env."""

from __future__ import annotations

import argparse
import sys


def run_openenv(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from rlvr.integrations.openenv import ServerOptions, close_app, create_app
    except ImportError as exc:
        print(
            f"rlvr serve --protocol openenv needs the openenv extra (pip install 'rlvr[openenv]'): {exc}",
            file=sys.stderr,
        )
        return 2
    if args.max_sessions < 1 or not args.idle_timeout > 0:
        print("--max-sessions must be at least 1 and --idle-timeout above 0", file=sys.stderr)
        return 2
    options = {"jobs": args.jobs} if args.jobs else {}
    try:
        app = create_app(
            args.pack,
            split=args.split,
            options=ServerOptions(max_sessions=args.max_sessions, idle_timeout=args.idle_timeout),
            **options,
        )
    except (ValueError, TypeError, KeyError) as exc:
        print(f"rlvr serve: {exc}", file=sys.stderr)
        return 2
    sessions = app.state.rlvr_sessions
    print(
        f"rlvr serve: {sessions.env_id} on pack {sessions.pack.name!r} as an OpenEnv server on "
        f"ws://{args.host}:{args.port}/ws",
        file=sys.stderr,
        flush=True,
    )
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level, ws_max_size=16 << 20)
    finally:
        close_app(app)
    return 0
