"""`python -m sidecar` / `atrium-sidecar`: the sidecar process on stdin/stdout."""

from __future__ import annotations

import asyncio


def main() -> None:
    from sidecar.app import amain

    asyncio.run(amain())


if __name__ == "__main__":
    main()
