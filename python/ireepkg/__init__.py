"""ireepkg: packages, versions and automatic activation for IREE plugins.

The Python side of ireepkg. It runs the native ``ireepkg`` command installed
with it (one implementation of prefixes, checks, messages and hints), and
finds the prefix and its runtime flags in-process with the C discovery
library (``libireepkg_runtime``, which the command uses too), so everything
here behaves exactly as the command line does::

    import ireepkg

    prefix = ireepkg.activate()          # runtime plugins -> iree.runtime
    vmfb = ireepkg.compile_file("model.mlir", target_backends=["llvm-cpu"])
    prefix.compiler_flags()              # -> extra_args for iree.compiler

Failures raise :class:`ireepkg.Error`, with the command's message and hint.
See docs/python.md.
"""

from __future__ import annotations

import importlib
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence, Union

from . import _runtime
from ._cli import Error, executable, run, run_json

try:
    from importlib.metadata import version as _dist_version

    __version__ = _dist_version("ireepkg")
except Exception:  # not installed as a distribution (a source checkout)
    __version__ = "0+unknown"

__all__ = [
    "Error",
    "Package",
    "Prefix",
    "activate",
    "compile_file",
    "compile_str",
    "executable",
    "install",
    "lock",
    "remove",
    "sync",
    "version",
    "__version__",
]

PathLike = Union[str, "os.PathLike[str]"]
OptionValue = Union[str, int, float, bool]


def version() -> str:
    """The version of the ``ireepkg`` command (``ireepkg --version``)."""
    out = run(["--version"]).stdout
    first = out.splitlines()[0] if out else ""
    return first.split()[-1] if first else ""


@dataclass(frozen=True)
class Package:
    """One installed package, as ``ireepkg list --json`` reports it."""

    name: str
    version: str
    #: "explicit" (asked for) or "dependency" (installed for another).
    reason: str
    path: str
    summary: str = ""
    #: Names of its runtime (executable) plugins.
    runtime_plugins: tuple[str, ...] = ()
    #: Ids of its compiler plugins.
    compiler_plugins: tuple[str, ...] = ()
    #: Its compiler hooks (each a dict with "point" and "pipeline" or "file").
    hooks: tuple[dict[str, Any], ...] = field(default=(), hash=False)
    #: The whole report of ``ireepkg list --json`` for the package.
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def explicit(self) -> bool:
        """True when the package was installed by name, not as a dependency."""
        return self.reason == "explicit"

    @property
    def plugins(self) -> tuple[str, ...]:
        """Its runtime plugin names, then its compiler plugin ids."""
        return self.runtime_plugins + self.compiler_plugins

    @classmethod
    def _from_json(cls, j: Mapping[str, Any]) -> "Package":
        return cls(
            name=str(j.get("name", "")),
            version=str(j.get("version", "")),
            reason=str(j.get("reason", "")),
            path=str(j.get("path", "")),
            summary=str(j.get("summary", "")),
            runtime_plugins=tuple(
                str(p.get("name", "")) for p in j.get("runtime_plugins") or ()
            ),
            compiler_plugins=tuple(
                str(p.get("id", "")) for p in j.get("compiler_plugins") or ()
            ),
            hooks=tuple(dict(h) for h in j.get("hooks") or ()),
            raw=dict(j),
        )


def _option_args(options: Mapping[str, OptionValue] | None) -> list[str]:
    args: list[str] = []
    for name, value in (options or {}).items():
        if isinstance(value, bool):
            text = "true" if value else "false"
        else:
            text = str(value)
        args += ["--set", f"{name.lstrip('-')}={text}"]
    return args


class Prefix:
    """An ireepkg prefix: a directory of installed packages.

    ``Prefix()`` is the prefix the command line would use here:
    ``$IREEPKG_PREFIX``, else the ``.iree-plugins`` of the project whose
    ``plugins.json`` is found upward from the current directory, else the
    user prefix (``$XDG_DATA_HOME/ireepkg``). ``Prefix(path)`` is that
    directory.
    """

    def __init__(self, path: PathLike | None = None) -> None:
        if path is None:
            if _runtime.available():
                self._path = Path(_runtime.locate_prefix())
            else:
                self._path = Path(str(run_json(["list", "--json"])["prefix"]))
        else:
            self._path = Path(os.path.abspath(os.fspath(path)))

    @property
    def path(self) -> Path:
        """The prefix directory."""
        return self._path

    def __repr__(self) -> str:
        return f"ireepkg.Prefix({str(self._path)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Prefix) and other._path == self._path

    def __hash__(self) -> int:
        return hash(self._path)

    def __fspath__(self) -> str:
        return str(self._path)

    def _args(self) -> list[str]:
        return ["--prefix", str(self._path)]

    def packages(self) -> list[Package]:
        """The installed packages, in activation order."""
        report = run_json(["list", "--json", *self._args()])
        return [Package._from_json(p) for p in report.get("packages") or ()]

    def runtime_flags(self, platform: str | None = None) -> list[str]:
        """The IREE runtime flags (``--executable_plugin=...``) that load
        the prefix's runtime plugins, for the host or ``platform``
        (``linux-aarch64``, ...); as ``ireepkg flags runtime``."""
        if _runtime.available():
            return _runtime.runtime_flags(str(self._path), platform)
        args = ["flags", "runtime", "--format", "json", *self._args()]
        if platform:
            args += ["--platform", platform]
        return [str(f) for f in run_json(args).get("flags") or ()]

    def compiler_flags(
        self,
        tool: str = "iree-compile",
        options: Mapping[str, OptionValue] | None = None,
    ) -> list[str]:
        """The compiler flags of the prefix's compiler plugins and hooks for
        ``tool`` (``iree-compile``, ``iree-opt`` or ``mlir-opt``), with
        plugin ``options`` (``{"iree-llvmcpu-distribution-size": 64}``)
        checked against the plugins' option schemas, as
        ``ireepkg flags compiler --set``. Pass them to ``iree.compiler``
        as ``extra_args=``."""
        args = ["flags", "compiler", "--tool", tool, "--format", "json"]
        args += [*self._args(), *_option_args(options)]
        return [str(f["flag"]) for f in run_json(args).get("flags") or ()]

    def verify(self) -> dict[str, Any]:
        """Re-hashes every installed file and checks the prefix's state
        (``ireepkg verify``). Returns the report; raises :class:`Error`
        naming the problems when there are any."""
        try:
            return dict(run_json(["verify", "--json", *self._args()]))
        except Error as e:
            problems = (e.report or {}).get("problems")
            if not problems:
                raise
            lines = [
                f"{p.get('kind')}: {p.get('package')}/{p.get('path')}: "
                f"{p.get('detail')}"
                for p in problems
            ]
            raise Error(
                f"{self._path}: {len(problems)} problem(s): " + "; ".join(lines),
                "reinstall the packages named (ireepkg install), or see "
                "`ireepkg verify`",
                code="verify",
                diagnostics=[
                    {"message": line, "package": p.get("package", "")}
                    for line, p in zip(lines, problems)
                ],
                exit_code=e.exit_code,
                command=e.command,
                report=e.report,
            ) from None

    def install(self, *packages: PathLike, **options: Any) -> dict[str, Any]:
        """:func:`ireepkg.install` into this prefix."""
        return install(*packages, prefix=self, **options)

    def remove(self, *names: str, **options: Any) -> dict[str, Any]:
        """:func:`ireepkg.remove` from this prefix."""
        return remove(*names, prefix=self, **options)


def _prefix_of(prefix: Prefix | PathLike | None) -> Prefix:
    return prefix if isinstance(prefix, Prefix) else Prefix(prefix)


def _common_args(
    prefix: Prefix | PathLike | None, options: Mapping[str, Any]
) -> list[str]:
    """``--name value`` / ``--flag`` for keyword options (``offline=True``,
    ``registry="..."``, ``iree_version="3.13.0"``)."""
    args: list[str] = []
    if prefix is not None:
        args += ["--prefix", os.fspath(prefix)]
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        elif isinstance(value, (list, tuple)):
            for v in value:
                args += [flag, v if isinstance(v, str) else os.fspath(v)]
        elif isinstance(value, (str, int, float)):
            args += [flag, str(value)]
        else:
            args += [flag, os.fspath(value)]
    return args


def install(
    *packages: PathLike,
    prefix: Prefix | PathLike | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Installs package archives (``"x.ireepkg"``) or packages by name
    (``"simple-mul@^1.2"``) in one transaction, as ``ireepkg install``.

    Keyword options are the command's (``registry=``, ``offline=True``,
    ``bundle=``, ``iree_version=``, ``ignore_iree_version=True``,
    ``platform=``, ...). Returns the command's ``--json`` report
    (``changes``, ``prefix``, ...)."""
    args = ["install", "--json", *_common_args(prefix, options)]
    return dict(run_json([*args, *(os.fspath(p) for p in packages)]))


def remove(
    *names: str, prefix: Prefix | PathLike | None = None, **options: Any
) -> dict[str, Any]:
    """Removes installed packages in one transaction (``ireepkg remove``);
    returns the ``--json`` report."""
    args = ["remove", "--json", *_common_args(prefix, options)]
    return dict(run_json([*args, *names]))


def sync(
    project: PathLike | None = None,
    *,
    prefix: Prefix | PathLike | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Makes the project's prefix exactly its lockfile (``ireepkg sync``).
    ``project`` is the project directory (default: found upward from the
    current directory); options: ``locked=True``, ``frozen=True``,
    ``offline=True``, ``bundle=``, ... Returns the ``--json`` report."""
    args = ["sync", "--json", *_common_args(prefix, options)]
    return dict(run_json(args, cwd=project))


def lock(project: PathLike | None = None, **options: Any) -> dict[str, Any]:
    """Resolves the project's ``plugins.json`` into ``plugins.lock.json``
    (``ireepkg lock``); options: ``upgrade=True``, ``check=True``,
    ``offline=True``, ... Returns the ``--json`` report."""
    args = ["lock", "--json", *_common_args(None, options)]
    return dict(run_json(args, cwd=project))


def _iree(module: str) -> Any:
    """An IREE module (IREE's Python packages ship no type information)."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        wheel = "iree-base-compiler" if "compiler" in module else "iree-base-runtime"
        raise Error(
            f"cannot import {module}: {e}",
            f"install IREE in this environment: pip install {wheel}",
        ) from e


# What activate() gave iree.runtime in this process.
_activated: Prefix | None = None
_activated_flags: list[str] = []


def activate(prefix: Prefix | PathLike | None = None) -> Prefix:
    """Makes the prefix's runtime plugins active in this interpreter's
    ``iree.runtime``, and returns the :class:`Prefix`.

    The flags go through ``iree.runtime.flags.parse_flags`` and apply to
    every device created afterwards: call it before the first device
    (``iree.runtime.get_device``, ``SystemContext``, ...). When a device
    exists already, :class:`Error` is raised (IREE creates a device's
    plugin loaders with the device, so the plugins could no longer apply).
    Activating the same prefix again, or the one ``ireepkg exec`` gave
    through ``IREE_PY_RUNTIME_FLAGS``, does nothing."""
    global _activated, _activated_flags
    p = _prefix_of(prefix)
    flags = p.runtime_flags()
    if _activated is not None:
        if _activated == p and _activated_flags == flags:
            return p
        raise Error(
            f"the runtime plugins of {_activated.path} are already active in "
            f"this process; those of {p.path} cannot be added",
            "IREE's runtime flags are process-wide: activate one prefix per "
            "process (run another process for another prefix)",
        )
    runtime_flags = _iree("iree.runtime.flags")
    system_setup = _iree("iree.runtime.system_setup")
    devices = [
        uri
        for uri, d in getattr(system_setup, "_GLOBAL_DEVICES_BY_URI", {}).items()
        if not isinstance(d, Exception)
    ]
    env_flags = shlex.split(os.environ.get("IREE_PY_RUNTIME_FLAGS", ""))
    if env_flags == flags:
        # iree.runtime parsed exactly these when it was imported.
        _activated, _activated_flags = p, flags
        return p
    if devices:
        raise Error(
            "cannot activate the runtime plugins of "
            f"{p.path}: iree.runtime already has a device "
            f"({', '.join(sorted(devices))}), which would not load them",
            "call ireepkg.activate() before creating any device (before "
            "iree.runtime.get_device, get_first_device or SystemContext), "
            "or run the program with `ireepkg exec -- python ...`",
        )
    if flags:
        try:
            runtime_flags.parse_flags(*flags)
        except ValueError as e:
            raise Error(
                f"iree.runtime refused the runtime flags of {p.path}: {e}",
                "check the prefix with `ireepkg doctor`",
            ) from e
    _activated, _activated_flags = p, flags
    return p


def _compile_kwargs(
    prefix: Prefix | PathLike | None,
    options: Mapping[str, OptionValue] | None,
    kwargs: dict[str, Any],
) -> dict[str, Any]:
    flags = _prefix_of(prefix).compiler_flags("iree-compile", options)
    extra = list(kwargs.pop("extra_args", None) or ())
    # The packages' flags first: flags given later win.
    kwargs["extra_args"] = [*flags, *extra]
    return kwargs


def compile_file(
    input_file: PathLike,
    *,
    prefix: Prefix | PathLike | None = None,
    options: Mapping[str, OptionValue] | None = None,
    **kwargs: Any,
) -> Any:
    """``iree.compiler.compile_file`` with the prefix's compiler plugins,
    option values (``options``, checked against the plugins' schemas) and
    hook pipelines. Other keyword arguments are ``compile_file``'s
    (``target_backends=``, ``output_file=``, ``extra_args=``, ...)."""
    return _iree("iree.compiler").compile_file(
        os.fspath(input_file), **_compile_kwargs(prefix, options, kwargs)
    )


def compile_str(
    input_str: Union[str, bytes],
    *,
    prefix: Prefix | PathLike | None = None,
    options: Mapping[str, OptionValue] | None = None,
    **kwargs: Any,
) -> Any:
    """``iree.compiler.compile_str`` with the prefix's compiler
    configuration (see :func:`compile_file`)."""
    return _iree("iree.compiler").compile_str(
        input_str, **_compile_kwargs(prefix, options, kwargs)
    )
