"""Shared fixtures for ireepkg's CLI tests: where the binary and the test data
are, and a helper that runs the CLI and returns (exit code, stdout, stderr)."""
import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"


def ireepkg_path() -> pathlib.Path:
    return pathlib.Path(os.environ.get("IREEPKG_BIN", REPO / "build" / "bin" / "ireepkg"))


class Result:
    def __init__(self, proc: subprocess.CompletedProcess):
        self.code = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    def __repr__(self):
        return f"Result(code={self.code}, out={self.out!r}, err={self.err!r})"


def run(*args, cwd=None, env=None, input=None, timeout=120) -> Result:
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    proc = subprocess.run(
        [str(ireepkg_path()), *map(str, args)],
        cwd=cwd, env=full_env, input=input, capture_output=True, text=True,
        timeout=timeout)
    return Result(proc)


@pytest.fixture
def ireepkg():
    return run
