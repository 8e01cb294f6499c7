"""`python -m desktop.preflight`: before `make run` starts the window, name any missing system
library the Qt window needs, with the package to install, instead of Qt's plugin error (which
names only the first missing library, and not its package).

On Linux with the xcb platform (the default, and the fallback on Wayland) it runs `ldd` on the
xcb platform plugin and the Qt libraries it loads, and reports every library `ldd` cannot find.
Elsewhere, or when the check itself cannot run (no `ldd`, no plugin file), it says nothing and
lets the app start: it never blocks a machine that has everything. It also says when there is
no display to open the window on (no `DISPLAY` or `WAYLAND_DISPLAY`). Exit code 1 means
something is missing; 0 otherwise.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

LDD_TIMEOUT_S = 10

# Library file -> the Debian/Ubuntu package that ships it: every library the xcb platform plugin,
# its GL integrations and QtGui/QtWidgets/QtDBus load from the system (ldd on PySide6 6.11).
DEBIAN_PACKAGES: dict[str, str] = {
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-glx.so.0": "libxcb-glx0",
    "libxcb-xinerama.so.0": "libxcb-xinerama0",
    "libxcb.so.1": "libxcb1",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libX11.so.6": "libx11-6",
    "libXau.so.6": "libxau6",
    "libXdmcp.so.6": "libxdmcp6",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libGLX.so.0": "libglx0",
    "libGLdispatch.so.0": "libglvnd0",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libdbus-1.so.3": "libdbus-1-3",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0",
}

# What `ldd` is run on, relative to the PySide6 package folder.
_CHECKED = (
    "Qt/plugins/platforms/libqxcb.so",
    "Qt/plugins/xcbglintegrations/libqxcb-glx-integration.so",
    "Qt/plugins/xcbglintegrations/libqxcb-egl-integration.so",
    "Qt/lib/libQt6Widgets.so.6",
    "Qt/lib/libQt6DBus.so.6",
)

Ldd = Callable[[Path], str | None]


@dataclass(frozen=True)
class Missing:
    library: str
    package: str | None  # None: not one we know the package of

    def describe(self) -> str:
        return f"{self.library} (package {self.package})" if self.package else self.library


def missing_in(ldd_output: str) -> list[str]:
    """Library names `ldd` reports as `not found`, in order, once each."""
    found: list[str] = []
    for line in ldd_output.splitlines():
        name, arrow, where = line.strip().partition("=>")
        if arrow and where.strip() == "not found" and name.strip() not in found:
            found.append(name.strip())
    return found


def run_ldd(path: Path) -> str | None:
    """`ldd path`'s output, or None when ldd is missing or fails to run."""
    ldd = shutil.which("ldd")
    if ldd is None:
        return None
    try:
        done = subprocess.run(
            [ldd, str(path)], capture_output=True, text=True, timeout=LDD_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout


def uses_xcb(env: Mapping[str, str], platform: str = sys.platform) -> bool:
    """Whether Qt would load the xcb plugin (Linux, unless another platform is asked for)."""
    if not platform.startswith("linux"):
        return False
    asked = env.get("QT_QPA_PLATFORM", "").split(":", 1)[0].split(";", 1)[0].strip()
    return asked in ("", "xcb")


def display_problem(env: Mapping[str, str]) -> str | None:
    """Why the window could not open on this session's display, or None."""
    if env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"):
        return None
    return (
        "Atrium's window needs a display, and this session has none (DISPLAY and "
        "WAYLAND_DISPLAY are not set). Start it from a desktop session; over SSH use "
        "`ssh -X`; on a server run it under `xvfb-run make run`."
    )


def find_missing(pyside_dir: Path, ldd: Ldd = run_ldd) -> list[Missing]:
    """Every system library of `_CHECKED` files (those present) that the loader cannot find."""
    names: list[str] = []
    for relative in _CHECKED:
        path = pyside_dir / relative
        if not path.exists():
            continue
        output = ldd(path)
        if output is None:
            return []  # the check cannot run here: say nothing rather than guess
        names.extend(name for name in missing_in(output) if name not in names)
    return [Missing(name, DEBIAN_PACKAGES.get(name)) for name in names]


def report(missing: Iterable[Missing]) -> str:
    """What the author reads: each missing library with its package, and one install command."""
    missing = list(missing)
    lines = ["Atrium's window cannot start: these system libraries are missing:"]
    lines += [f"  - {item.describe()}" for item in missing]
    packages = sorted({item.package for item in missing if item.package})
    if packages:
        lines += [
            "",
            "On Debian or Ubuntu install them with:",
            "  sudo apt-get install " + " ".join(packages),
        ]
    lines += ["", "The README lists every library the window needs (System requirements)."]
    return "\n".join(lines)


def _pyside_dir() -> Path | None:
    try:
        import PySide6
    except ImportError:
        return None
    return Path(PySide6.__file__).parent


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    del argv
    env = os.environ if env is None else env
    if not uses_xcb(env):
        return 0
    problems: list[str] = []
    pyside_dir = _pyside_dir()
    missing = find_missing(pyside_dir) if pyside_dir is not None else []
    if missing:
        problems.append(report(missing))
    display = display_problem(env)
    if display is not None:
        problems.append(display)
    if not problems:
        return 0
    print("\n\n".join(problems), file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
