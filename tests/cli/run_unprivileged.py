"""Runs pytest on CLI test files as an ordinary user, the way most people
run ireepkg.

The suite runs as root in CI, and root may rename, write and delete what
an ordinary user cannot: a prefix whose directories its owner cannot move
or delete passes every test run as root. So the tests of the commands that
change prefixes, caches and projects run a second time through this script:

    run_unprivileged.py [pytest arguments...]

As root it makes a scratch directory owned by an unprivileged user (uid and
gid 65534, "nobody", unless IREEPKG_TEST_UID/IREEPKG_TEST_GID say otherwise),
gives the tests a HOME, TMPDIR and cache there, and runs pytest under
`setpriv` with that user's ids, no supplementary groups and no capabilities.
Run as a non-root user, it runs pytest as that user in the same kind of
scratch directory.

Afterwards the user itself must be able to delete everything the tests left
behind (`rm -rf`, as people delete `.iree-plugins` or a cache): a tree that
its owner cannot delete fails the run, naming what is left.
"""
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

UID = int(os.environ.get("IREEPKG_TEST_UID", "65534"))
GID = int(os.environ.get("IREEPKG_TEST_GID", "65534"))


def as_user(cmd: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return cmd
    setpriv = shutil.which("setpriv")
    if not setpriv:
        sys.exit("run_unprivileged.py: setpriv (util-linux) is needed to run "
                 "the tests as an ordinary user")
    return [setpriv, f"--reuid={UID}", f"--regid={GID}", "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all", *cmd]


def main() -> int:
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="ireepkg-unprivileged-"))
    try:
        for sub in ("home", "tmp", "cache"):
            (scratch / sub).mkdir()
        if os.geteuid() == 0:
            for p in [scratch, *scratch.iterdir()]:
                os.chown(p, UID, GID)
        env = dict(os.environ)
        env.update({
            "HOME": str(scratch / "home"),
            "TMPDIR": str(scratch / "tmp"),
            "XDG_CACHE_HOME": str(scratch / "cache"),
            "IREEPKG_CACHE_DIR": str(scratch / "cache" / "ireepkg"),
            "IREEPKG_UNPRIVILEGED_RUN": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        })
        env.pop("USER", None)
        cmd = as_user([sys.executable, "-m", "pytest", "-q", "-p",
                       "no:cacheprovider", f"--basetemp={scratch / 'pytest'}",
                       *sys.argv[1:]])
        code = subprocess.run(cmd, env=env).returncode
        # Whatever the commands left must be deletable by its owner.
        rm = subprocess.run(as_user(["rm", "-rf", "--", str(scratch / "pytest"),
                                     str(scratch / "tmp"), str(scratch / "cache"),
                                     str(scratch / "home")]),
                            capture_output=True, text=True)
        if rm.returncode != 0:
            left = rm.stderr.strip().splitlines()
            print(f"FAILED: the user cannot delete what the tests left "
                  f"({len(left)} errors), e.g.:", *left[:10], sep="\n  ")
            return code or 1
        return code
    finally:
        subprocess.run(["rm", "-rf", "--", str(scratch)])


if __name__ == "__main__":
    sys.exit(main())
