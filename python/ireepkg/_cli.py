"""Finding and running the native ``ireepkg`` command.

Every operation of the Python package runs the ``ireepkg`` executable that
was installed with it (the wheel puts it in the environment's ``bin/``
directory), with ``--json`` where the command has it, and turns a failure
into :class:`ireepkg.Error` with the command's own message and hint.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

__all__ = ["Error", "executable", "run", "run_json"]


class Error(Exception):
    """An ireepkg operation failed.

    ``message`` and ``hint`` are those the ``ireepkg`` command prints
    (``ireepkg: error: <message>`` and ``hint: <hint>``); ``code`` is the
    command's error code (``"invalid"``, ``"not-found"``, ...) when it
    reported one; ``diagnostics`` lists every problem it found (each a dict
    with ``message`` and, where known, ``file``, ``line``, ``column``,
    ``pointer``, ``package``, ``hint``); ``exit_code`` is the command's exit
    status (1 failure, 2 usage error); ``command`` is what was run;
    ``report`` is the command's whole ``--json`` report, when it printed one.
    """

    def __init__(
        self,
        message: str,
        hint: str = "",
        *,
        code: str = "",
        diagnostics: Sequence[Mapping[str, Any]] = (),
        exit_code: int = 1,
        command: Sequence[str] = (),
        report: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.code = code
        self.diagnostics: list[dict[str, Any]] = [dict(d) for d in diagnostics]
        self.exit_code = exit_code
        self.command: list[str] = list(command)
        self.report: dict[str, Any] | None = dict(report) if report else None

    def __str__(self) -> str:
        return self.message + (f"\n  hint: {self.hint}" if self.hint else "")


@lru_cache(maxsize=None)
def _installed_executable() -> str | None:
    """The ``ireepkg`` executable that this distribution installed."""
    try:
        from importlib.metadata import PackageNotFoundError, distribution
    except ImportError:  # pragma: no cover
        return None
    try:
        dist = distribution("ireepkg")
    except PackageNotFoundError:
        return None
    for f in dist.files or ():
        if f.name == "ireepkg" and f.parent.name in ("bin", "scripts"):
            path = Path(str(dist.locate_file(f))).resolve()
            if path.is_file() and os.access(path, os.X_OK):
                return str(path)
    return None


def executable() -> str:
    """The path of the ``ireepkg`` command this package runs.

    ``IREEPKG_EXECUTABLE`` names another one (a development build); else the
    one installed with this package; else ``ireepkg`` on ``PATH``.
    """
    env = os.environ.get("IREEPKG_EXECUTABLE")
    if env:
        return env
    found = _installed_executable() or shutil.which("ireepkg")
    if not found:
        raise Error(
            "cannot find the ireepkg command",
            "reinstall the ireepkg distribution (pip install ireepkg), or set "
            "IREEPKG_EXECUTABLE to the path of an ireepkg executable",
        )
    return found


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    # The IREE in use is the one of this interpreter's environment, even
    # when that environment is not activated in the shell.
    if sys.prefix != sys.base_prefix and not env.get("VIRTUAL_ENV"):
        env["VIRTUAL_ENV"] = sys.prefix
    return env


def _error_from(
    cmd: Sequence[str], code: int, stdout: str, stderr: str
) -> Error:
    """The Error for a failed run: the message and hint the command printed
    (``ireepkg: error: ...`` and ``hint: ...`` on stderr), with the code and
    diagnostics of its JSON report when it printed one."""
    message, hint = "", ""
    for line in stderr.splitlines():
        if line.startswith("ireepkg: error: ") and not message:
            message = line[len("ireepkg: error: ") :]
        elif line.startswith("  hint: ") and message and not hint:
            hint = line[len("  hint: ") :]
    try:
        report = json.loads(stdout) if stdout.strip() else None
    except ValueError:
        report = None
    if not isinstance(report, dict):
        report = None
    e = report.get("error") if report else None
    if isinstance(e, dict):
        return Error(
            message or str(e.get("message", "")),
            hint or str(e.get("hint", "")),
            code=str(e.get("code", "")),
            diagnostics=e.get("diagnostics") or (),
            exit_code=code,
            command=cmd,
            report=report,
        )
    if not message:
        message = stderr.strip() or f"ireepkg exited with status {code}"
    return Error(message, hint, exit_code=code, command=cmd, report=report)


def run(
    args: Sequence[str], *, cwd: str | os.PathLike[str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Runs ``ireepkg args...``; raises :class:`Error` when it fails."""
    cmd = [executable(), *map(str, args)]
    try:
        r = subprocess.run(
            cmd,
            cwd=cwd,
            env=_environment(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
        )
    except OSError as e:
        raise Error(
            f"cannot run {cmd[0]}: {e.strerror or e}",
            "reinstall the ireepkg distribution, or set IREEPKG_EXECUTABLE",
            command=cmd,
        ) from e
    if r.returncode != 0:
        raise _error_from(cmd, r.returncode, r.stdout, r.stderr)
    return r


def run_json(
    args: Sequence[str], *, cwd: str | os.PathLike[str] | None = None
) -> Any:
    """Runs ``ireepkg args...`` (which must print JSON) and parses it."""
    r = run(args, cwd=cwd)
    try:
        return json.loads(r.stdout)
    except ValueError as e:
        raise Error(
            f"ireepkg {' '.join(map(str, args[:2]))} printed no JSON report",
            "this ireepkg executable may be of another version (see "
            "ireepkg.executable())",
            command=[executable(), *map(str, args)],
        ) from e
