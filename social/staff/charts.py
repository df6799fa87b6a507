"""Server-side SVG charts: geometry here, drawing in templates/staff/_chart.html.

Each chart shows the current period as bars and the period before it as a faint dashed line
over the same days, with a labelled value axis and the first, middle and last dates, so the
trend reads at a glance with no JavaScript and no network.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.utils import dateformat
from django.utils.translation import gettext, pgettext

from social.repository.moderation.stats import DailySeries

WIDTH, HEIGHT = 480, 196
LEFT, RIGHT, TOP, BOTTOM = 44, 474, 10, 168  # the plot area inside the viewBox


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    value: int
    label: str


@dataclass(frozen=True)
class Chart:
    """What _chart.html draws for one DailySeries."""

    series: DailySeries
    bars: list[Bar]
    previous_points: str
    y_ticks: list[tuple[float, int]]
    x_labels: list[tuple[float, str, str]]
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    right: int = RIGHT
    bottom: int = BOTTOM

    @property
    def label(self) -> str:
        """The series' name in the reader's language ("New users")."""
        return gettext(self.series.label)

    @property
    def summary(self) -> str:
        """A sentence a screen reader (or a hurried person) gets instead of the picture."""
        s = self.series
        change = s.change_percent
        values = {"label": self.label, "average": s.average, "total": s.total}
        if change is not None:
            values["change"] = f"{change:+d}"
            if s.is_average:
                text = gettext(
                    "%(label)s: %(average)s a day on average over the last 30 days, "
                    "%(change)s%% on the 30 days before."
                )
            else:
                text = gettext(
                    "%(label)s: %(total)s in the last 30 days, %(change)s%% on the 30 days before."
                )
        elif s.is_average:
            text = gettext("%(label)s: %(average)s a day on average over the last 30 days.")
        else:
            text = gettext("%(label)s: %(total)s in the last 30 days.")
        return text % values


def nice_ceiling(value: int) -> int:
    """Return the smallest of 1, 2, 5 x 10^n that is at least value (at least 1)."""
    step = 1
    while True:
        for m in (1, 2, 5):
            if m * step >= value:
                return m * step
        step *= 10


def build_chart(series: DailySeries) -> Chart:
    """Lay out series (current as bars, previous as a line) on a shared value axis."""
    top_value = nice_ceiling(max(series.current + series.previous + [1]))
    n = max(1, len(series.current))
    slot = (RIGHT - LEFT) / n
    plot_h = BOTTOM - TOP

    def y(value: int) -> float:
        return round(BOTTOM - plot_h * value / top_value, 1)

    bars = [
        Bar(
            x=round(LEFT + i * slot + slot * 0.15, 1),
            y=y(value),
            width=round(slot * 0.7, 1),
            height=round(BOTTOM - y(value), 1),
            value=value,
            # Translators: a day under a chart's bar, a Django date format ("Mon 3 Nov").
            label=dateformat.format(day, pgettext("chart bar day", "D j M")),
        )
        for i, (day, value) in enumerate(zip(series.days, series.current))
    ]
    points = " ".join(
        f"{round(LEFT + (i + 0.5) * slot, 1)},{y(v)}" for i, v in enumerate(series.previous)
    )
    # A middle tick only when it is a whole number (not for ceilings of 1 or 5).
    middle = {top_value // 2} if top_value % 2 == 0 else set()
    ticks = [(y(v), v) for v in sorted({0, top_value} | middle)]
    # First and last labels hang inwards so they stay inside the picture.
    anchors = {0: "start", n - 1: "end"}
    # Translators: a date on a chart's axis, a Django date format ("3 Nov").
    axis_format = pgettext("chart axis day", "j M")
    labels = [
        (
            round(LEFT + (i + 0.5) * slot, 1),
            dateformat.format(series.days[i], axis_format),
            anchors.get(i, "middle"),
        )
        for i in sorted({0, n // 2, n - 1})
        if i < len(series.days)
    ]
    return Chart(series, bars, points, ticks, labels)
