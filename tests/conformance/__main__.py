"""`python -m tests.conformance`: see `tests.conformance.runner`."""

from tests.conformance.runner import main

raise SystemExit(main())
