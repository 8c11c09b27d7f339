"""Write a run's report files: ``report.html`` and ``report.md`` (see :mod:`logicfuzz.report`)."""

from __future__ import annotations

from pathlib import Path

from logicfuzz.report import load_run
from logicfuzz.report_html import render_html
from logicfuzz.report_md import render_markdown


def write_report(run_dir: Path) -> tuple[Path, Path]:
    """Write ``report.html`` and ``report.md`` into ``run_dir``; returns their paths."""
    data = load_run(Path(run_dir))
    html_path, md_path = data.run_dir / "report.html", data.run_dir / "report.md"
    for path, text in ((html_path, render_html(data)), (md_path, render_markdown(data))):
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    return html_path, md_path
