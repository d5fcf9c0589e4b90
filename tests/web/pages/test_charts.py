"""kbsync.web.pages.charts: SVG bar charts with their numbers as a table."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from kbsync.web.pages.charts import Chart, nice_max, svg, table

NS = "{http://www.w3.org/2000/svg}"


def _chart(layout: str = "stacked") -> Chart:
    return Chart("c1", "Sessions <per> month", ("2025-05", "2025-06"), ("部署", "git"), ((1, 2), (3, 0)),
                 layout)  # type: ignore[arg-type]


def test_the_table_holds_every_number_and_a_total() -> None:
    header, rows = table(_chart())
    assert header == ["category", "部署", "git", "total"]  # no empty header cell
    assert rows == [["2025-05", "1", "3", "4"], ["2025-06", "2", "0", "2"]]


def test_stacked_bars_are_well_formed_svg_labelled_by_the_title() -> None:
    root = ET.fromstring(svg(_chart()))
    assert root.get("role") == "img" and root.get("aria-labelledby") == "c1-title"
    assert root.find(f"{NS}title").text == "Sessions <per> month"  # type: ignore[union-attr]
    bars = [r for r in root.iter(f"{NS}rect") if r.find(f"{NS}title") is not None]
    assert sorted(r.find(f"{NS}title").text for r in bars) == [  # type: ignore[union-attr]
        "2025-05 · git: 3", "2025-05 · 部署: 1", "2025-06 · 部署: 2"]
    first = [r for r in bars if r.find(f"{NS}title").text.startswith("2025-05")]  # type: ignore[union-attr]
    assert len({r.get("x") for r in first}) == 1  # stacked: one column


def test_grouped_bars_stand_side_by_side_and_nothing_is_inline_style_or_script() -> None:
    text = svg(_chart("grouped"))
    root = ET.fromstring(text)
    bars = [r for r in root.iter(f"{NS}rect") if (t := r.find(f"{NS}title")) is not None
            and t.text.startswith("2025-05")]  # type: ignore[union-attr]
    assert len({r.get("x") for r in bars}) == 2
    assert "style=" not in text and "<script" not in text


def test_hostile_labels_are_escaped_and_an_empty_chart_says_so() -> None:
    hostile = Chart("c2", "t", ("<script>alert(1)</script>",), ("x\" onload=\"y",), ((5,),))
    text = svg(hostile)
    assert "<script>" not in text and 'onload="y' not in text
    ET.fromstring(text)
    assert "no data yet" in svg(Chart("c3", "empty", (), (), ()))
    assert [nice_max(n) for n in (0, 1, 3, 7, 10, 11, 230)] == [1, 1, 5, 10, 10, 20, 500]
