"""Progress of a run in the terminal: one bar per target, its phase and its latest step."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TaskID, TextColumn

_MEASURED = {"iteration.baseline", "iteration.measured", "iteration.reverted"}


class RunProgress:
    """Bars on a terminal (a measured version advances its target's bar), log lines otherwise."""

    def __init__(self, console: Console, functions: list[str], iterations: int, quiet: bool) -> None:
        self.console = console
        self.quiet = quiet
        self.live = console.is_terminal and not quiet
        self.total = iterations + 1  # the baseline measurement, then each iteration
        self.progress = Progress(
            SpinnerColumn(), TextColumn("[bold]{task.fields[function]}"), BarColumn(),
            MofNCompleteColumn(), TextColumn("{task.fields[phase]}"),
            TextColumn("[dim]{task.fields[step]}"), console=console, transient=False)
        self.tasks: dict[str, TaskID] = {}
        if self.live:
            for name in functions:
                self.tasks[name] = self.progress.add_task(
                    name, total=self.total, function=name, phase="compilation", step="queued")

    def __enter__(self) -> RunProgress:
        if self.live:
            self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live:
            self.progress.stop()

    def __call__(self, function: str, step: str, record: dict[str, Any]) -> None:
        """The runner's progress callback."""
        if self.quiet:
            return
        if not self.live:
            self.console.log(f"[bold]{function}[/]: {step}")
            return
        task = self.tasks[function]
        fields: dict[str, Any] = {"step": step}
        if step == "iteration.baseline":
            fields["phase"] = "optimization"
        if step in _MEASURED:
            self.progress.advance(task)
        if step in ("done", "failed") or step.startswith("skipped"):
            fields["phase"] = "done" if step != "failed" else "[red]failed"
            self.progress.update(task, completed=self.total)
        self.progress.update(task, **fields)
