"""``python -m privacy_checklist.app.cli``: the same as ``pcheck``."""

from privacy_checklist.app.cli import main

raise SystemExit(main())
