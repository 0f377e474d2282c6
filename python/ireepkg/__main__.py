"""``python -m ireepkg ...`` runs the ireepkg command."""

import os
import sys

from ._cli import Error, executable


def main() -> None:
    try:
        exe = executable()
    except Error as e:
        sys.exit(f"ireepkg: error: {e.message}\n  hint: {e.hint}")
    os.execv(exe, [exe, *sys.argv[1:]])


if __name__ == "__main__":
    main()
