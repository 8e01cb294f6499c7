#!/usr/bin/env bash
# Build a one-folder bundle of Atrium with PyInstaller (see packaging/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/python -m pip install --quiet "pyinstaller>=6.10,<7"
.venv/bin/pyinstaller --noconfirm --clean packaging/atrium.spec
echo "built dist/atrium/"
