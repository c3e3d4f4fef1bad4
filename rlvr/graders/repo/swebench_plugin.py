"""A pytest plugin for the SWE-bench-style adapter. It is never imported by rlvr: its file is mounted
read-only into the test container and loaded there with `-p rlvr_swe_report`, in the same process as
the candidate's code. It records each test's outcome by node id and prints one report line at the end,
tagged with a nonce taken out of the environment before any test module is imported.

That raises the bar against naive forgery (printing a fake report) and nothing more: code running in
this process can reach this module and forge its report. Verdicts built on it are flagged
`untrusted_runner`.
"""

import json
import os

_NONCE = os.environ.pop("RLVR_REPORT_NONCE", "")
_OUT = os.dup(1)  # the container's stdout, before pytest captures it
_RESULTS = {}


def pytest_runtest_logreport(report):
    previous = _RESULTS.get(report.nodeid)
    if report.failed:
        _RESULTS[report.nodeid] = "failed" if report.when == "call" else "error"
    elif report.when == "call" and previous is None:
        _RESULTS[report.nodeid] = "xfail" if hasattr(report, "wasxfail") else report.outcome
    elif report.skipped and previous is None:
        _RESULTS[report.nodeid] = "skipped"


def pytest_collectreport(report):
    if report.failed:
        _RESULTS[report.nodeid or "<collection>"] = "error"


def pytest_sessionfinish(session, exitstatus):
    payload = json.dumps({"results": _RESULTS, "exitstatus": int(exitstatus)})
    os.write(_OUT, ("\nRLVR-SWE-REPORT " + _NONCE + " " + payload + "\n").encode("utf-8", "replace"))
