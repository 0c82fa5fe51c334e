"""PNG charts for benchmark rows (matplotlib, optional: without it, charts are skipped with a note).

`bar_chart` draws one panel per measurement group: a horizontal bar per contender (throughput
when the work is known, else median seconds), whiskers from min to max, tokkit's bar highlighted.
`line_chart` draws the scaling curves.
"""
from __future__ import annotations

import math

from tokkit._charts import OTHER_COLOR, TOKKIT_COLOR, _pyplot, _save, have_matplotlib, missing_note  # noqa: F401


def _fmt(v: float) -> str:
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


def bar_chart(rows: list[dict], path: str, *, title: str) -> str | None:
    """One PNG for a suite's rows; returns the path, or None when there is nothing to draw."""
    groups: dict[str, list[dict]] = {}
    for r in rows:
        if r.get("times"):
            groups.setdefault(r["group"], []).append(r)
    if not groups:
        return None
    plt = _pyplot()
    heights = [0.5 + 0.35 * len(g) for g in groups.values()]
    fig, axes = plt.subplots(len(groups), 1, figsize=(8, sum(heights) + 0.8), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for ax, (group, grows) in zip(axes[:, 0], groups.items()):
        use_tp = all(r.get("throughput") is not None for r in grows)
        names = [r["name"] for r in grows][::-1]
        grows = grows[::-1]
        if use_tp:
            values = [r["throughput"] for r in grows]
            lo = [v - r["work"] / r["max"] for v, r in zip(values, grows)]
            hi = [r["work"] / r["min"] - v for v, r in zip(values, grows)]
            label = grows[0]["unit"] + " (higher is better)"
        else:
            values = [r["median"] for r in grows]
            lo = [v - r["min"] for v, r in zip(values, grows)]
            hi = [r["max"] - v for v, r in zip(values, grows)]
            label = "median seconds (lower is better)"
        colors = [TOKKIT_COLOR if r.get("baseline") else OTHER_COLOR for r in grows]
        ax.barh(range(len(values)), values, xerr=[lo, hi], color=colors, capsize=3)
        ax.set_yticks(range(len(values)), names, fontsize=8)
        ax.set_title(group, fontsize=9, loc="left")
        ax.set_xlabel(label, fontsize=8)
        ax.tick_params(axis="x", labelsize=8)
        for i, (v, h) in enumerate(zip(values, hi)):
            ax.text(v + h, i, f"  {_fmt(v)}", va="center", fontsize=7)
        ax.margins(x=0.18)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
    return path


def line_chart(series: dict[str, list[tuple[float, float]]], path: str, *, title: str, xlabel: str,
               ylabel: str = "seconds", log: bool = False, panels: dict[str, dict] | None = None) -> str | None:
    """Line chart(s): `series` maps a label to (x, y) points; `panels` maps a panel title to such a dict."""
    panels = panels or {title: series}
    panels = {k: v for k, v in panels.items() if any(v.values())}
    if not panels:
        return None
    plt = _pyplot()
    cols = min(2, len(panels))
    nrows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 3.8 * nrows), squeeze=False)
    palette = ["#d95f02", "#1b9e77", "#7570b3", "#e7298a", "#66a61e"]
    for ax, (ptitle, pseries) in zip(axes.flat, panels.items()):
        colors: dict[str, str] = {}
        for label, points in pseries.items():
            if not points:
                continue
            xs, ys = zip(*sorted(points))
            # One colour per series; tokkit's lines solid, the contenders' dashed.
            color = colors.setdefault(label, palette[len(colors) % len(palette)])
            tokkit = label.startswith("tokkit")
            ax.plot(xs, ys, marker="o" if tokkit else "s", linestyle="-" if tokkit else "--", color=color,
                    linewidth=2 if tokkit else 1.2, label=label)
        if log:
            ax.set_xscale("log")
            ax.set_yscale("log")
            first = next((sorted(p) for p in pseries.values() if len(p) > 1), None)
            if first:  # a slope-1 guide through the first series' start: parallel means linear cost
                (x0, y0), x1 = first[0], first[-1][0]
                ax.plot([x0, x1], [y0, y0 * x1 / x0], color="grey", linestyle=":", linewidth=1, label="linear")
        else:
            ax.set_xlim(left=0)
            ax.set_ylim(bottom=0)
        ax.set_title(ptitle, fontsize=9)
        ax.set_xlabel(xlabel, fontsize=8)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    if len(panels) > 1:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
    return path
