"""The C discovery library (``libireepkg_runtime``, ireepkg/runtime.h)
through ctypes: finding the prefix and the runtime flags in this process,
from the prefix's memory-mapped activation index, with the same code the
``ireepkg`` command and IREE applications use. The wheel ships the library
in ``ireepkg/_lib``; without it (a source checkout), the command is run
instead.
"""

from __future__ import annotations

import ctypes
from ctypes import POINTER, byref, c_char, c_char_p, c_int, c_size_t, c_uint32, c_void_p
from functools import lru_cache
from pathlib import Path
from typing import Any

from ._cli import Error

_LIBRARY = Path(__file__).resolve().parent / "_lib" / "libireepkg_runtime.so"
# ireepkg_runtime_flag_style_t: "--executable_plugin=<spec>" + NUL each.
_FLAGS_NUL = 2


class _PrefixLocation(ctypes.Structure):
    _fields_ = [
        ("path", c_char_p),
        ("source", c_int),
        ("source_name", c_char_p),
        ("project_file", c_char_p),
    ]


@lru_cache(maxsize=None)
def _library() -> Any:
    if not _LIBRARY.is_file():
        return None
    try:
        lib = ctypes.CDLL(str(_LIBRARY))
    except OSError:
        return None
    err = POINTER(c_void_p)
    signatures: dict[str, tuple[Any, list[Any]]] = {
        "ireepkg_runtime_error_message": (c_char_p, [c_void_p]),
        "ireepkg_runtime_error_hint": (c_char_p, [c_void_p]),
        "ireepkg_runtime_free_error": (None, [c_void_p]),
        "ireepkg_runtime_locate_prefix": (
            c_int,
            [c_char_p, c_char_p, POINTER(POINTER(_PrefixLocation)), err],
        ),
        "ireepkg_runtime_free_prefix_location": (None, [POINTER(_PrefixLocation)]),
        "ireepkg_runtime_open": (c_int, [c_char_p, c_uint32, POINTER(c_void_p), err]),
        "ireepkg_runtime_close": (None, [c_void_p]),
        "ireepkg_runtime_list_plugins": (
            c_int,
            [c_void_p, c_char_p, c_uint32, POINTER(c_void_p), err],
        ),
        "ireepkg_runtime_free_plugin_list": (None, [c_void_p]),
        "ireepkg_runtime_format_flags": (
            c_int,
            [c_void_p, c_int, POINTER(POINTER(c_char)), POINTER(c_size_t), err],
        ),
        "ireepkg_runtime_free_string": (None, [POINTER(c_char)]),
    }
    for name, (restype, argtypes) in signatures.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


def available() -> bool:
    """Whether the C discovery library is installed with this package."""
    return _library() is not None


def _raise(lib: Any, error: c_void_p) -> None:
    message = lib.ireepkg_runtime_error_message(error) or b"unknown error"
    hint = lib.ireepkg_runtime_error_hint(error) or b""
    lib.ireepkg_runtime_free_error(error)
    raise Error(message.decode(errors="replace"), hint.decode(errors="replace"))


def locate_prefix() -> str:
    """The prefix the command line would choose here (not checked)."""
    lib = _library()
    location = POINTER(_PrefixLocation)()
    error = c_void_p()
    if lib.ireepkg_runtime_locate_prefix(None, None, byref(location), byref(error)):
        _raise(lib, error)
    try:
        return str(location.contents.path.decode())
    finally:
        lib.ireepkg_runtime_free_prefix_location(location)


def runtime_flags(prefix: str, platform: str | None) -> list[str]:
    """``ireepkg flags runtime`` for `prefix`, in this process."""
    lib = _library()
    index = c_void_p()
    error = c_void_p()
    if lib.ireepkg_runtime_open(prefix.encode(), 0, byref(index), byref(error)):
        _raise(lib, error)
    plugins = c_void_p()
    text = POINTER(c_char)()
    size = c_size_t()
    try:
        target = (platform or "host").encode()
        if lib.ireepkg_runtime_list_plugins(
            index, target, 0, byref(plugins), byref(error)
        ):
            _raise(lib, error)
        if lib.ireepkg_runtime_format_flags(
            plugins, _FLAGS_NUL, byref(text), byref(size), byref(error)
        ):
            _raise(lib, error)
        raw = ctypes.string_at(text, size.value)
        return [f.decode() for f in raw.split(b"\0") if f]
    finally:
        lib.ireepkg_runtime_free_string(text)
        lib.ireepkg_runtime_free_plugin_list(plugins)
        lib.ireepkg_runtime_close(index)
