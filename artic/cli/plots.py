"""What the CLI's figures share: distinct line colours, legends beside the data, log axes only where they help."""

from __future__ import annotations

import colorsys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.axes import Axes

# a legend to the right of its axes, outside the data (the figure's layout leaves room for it)
LEGEND_BESIDE = {"fontsize": 7, "loc": "center left", "bbox_to_anchor": (1.01, 0.5), "frameon": False}


def colours(n: int) -> list:
    """n distinct colours: hues a golden-ratio step apart, alternately darker, so that no two lines of a panel
    share one (tab10 repeats after ten lines, and tab20 pairs light and dark shades of ten hues)."""
    return [colorsys.hls_to_rgb((0.6 + 0.618034 * i) % 1.0, 0.38 if i % 2 else 0.5, 0.75) for i in range(n)]


def log_if_wide(ax: Axes, values: Sequence[float]) -> None:
    """A log y axis where the values span more than a decade (a fit's first epochs), labelled 1, 2, 5, 10, 20 ...
    rather than 2 x 10^0; a linear one otherwise, where a log axis would show no label at all."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    lo, hi = min(values), max(values)
    if not (lo > 0 and hi / lo > 10):
        return
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
