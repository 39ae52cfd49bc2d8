"""The `artic` command's one voice for warnings: each as ``warning: <message>`` on stderr, each text once, whichever
part of artic (or a library under it) raised it; the import's notes about parts of a file that do not change the
dynamics (visual, sensing, keyframes: `MJCF file ...: not used by artic, without effect on the simulated dynamics`)
only with --verbose, counted in one line otherwise."""

from __future__ import annotations

import sys
from typing import TextIO

_NOTE = "without effect on the simulated dynamics"  # the MJCF report's wording for what changes nothing simulated


class Voice:
    """Installed as `warnings.showwarning` for the length of a command (cli/main.py)."""

    def __init__(self, verbose: bool):
        self.verbose, self.seen, self.hidden = verbose, set(), 0

    def warn(self, message: Warning | str) -> None:
        text = str(message)
        if text in self.seen:
            return
        self.seen.add(text)
        if not self.verbose and _NOTE in text:
            self.hidden += 1
            return
        print(f"warning: {text}", file=sys.stderr)

    def showwarning(
        self,
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        self.warn(message)

    def close(self) -> None:
        if self.hidden:
            print(
                f"note: {self.hidden} import note(s) on parts of the file without effect on the dynamics (visual, "
                "sensing); --verbose shows them",
                file=sys.stderr,
            )
