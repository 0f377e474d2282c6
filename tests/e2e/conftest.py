"""pytest's set-up for the end-to-end tests: tests/cli's own.

The files here run ireepkg as the CLI tests do, and with it the real IREE
tools and Python packages of .venv. They share tests/cli's conftest.py (its
helpers, fixtures and hooks, loaded here under the name cli_conftest and
re-exported, so that `from conftest import run` works in both folders) and
the helper modules beside it (tests/cli is put on sys.path)."""
import importlib.util
import pathlib
import sys

CLI = pathlib.Path(__file__).resolve().parents[1] / "cli"
sys.path.insert(0, str(CLI))

_spec = importlib.util.spec_from_file_location("cli_conftest", CLI / "conftest.py")
_cli_conftest = importlib.util.module_from_spec(_spec)
sys.modules["cli_conftest"] = _cli_conftest
_spec.loader.exec_module(_cli_conftest)

from cli_conftest import *  # noqa: E402,F401,F403
