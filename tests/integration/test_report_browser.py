"""The report in a real headless Chromium (Debian's package), driven over its DevTools pipe.

The browser loads ``report.html`` from disk; the test collects console errors, uncaught
exceptions, failed or outside requests, measures the laid-out charts and takes a full-page
screenshot. A control page with known faults proves the fault collection works. Set
``LOGICFUZZ_REPORT_SCREENSHOT_DIR`` to keep the screenshots for a look.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import struct
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent_graph.context import Context
from logicfuzz.report_write import write_report
from logicfuzz.runner import RunOptions, run_benchmark
from tests.conftest import harness
from tests.fake_openai import FakeOpenAI, Reply, Request, by_role, error, text
from tests.unit.test_report import write_run

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian's chromium is not installed (apt-get install -y chromium); the browser check needs it",
)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-pipe", "--window-size=1280,2000"]


class Browser:
    """One Chromium process and one page, spoken to over ``--remote-debugging-pipe``."""

    def __init__(self, profile: Path) -> None:
        to_browser, self._out = os.pipe()
        self._in, from_browser = os.pipe()

        def wire() -> None:  # Chromium reads commands on fd 3 and writes replies on fd 4
            a, b = os.dup(to_browser), os.dup(from_browser)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            pass_fds=(3, 4), preexec_fn=wire, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser)
        os.close(from_browser)
        self._buf = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", page=True)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": 1280, "height": 2000, "deviceScaleFactor": 1, "mobile": False}, page=True)

    def _recv(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._in], [], [], max(0.0, left))
            if not ready:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise EOFError("Chromium closed its DevTools pipe")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return dict(json.loads(raw))

    def call(self, method: str, params: dict[str, Any] | None = None, *, page: bool = False,
             timeout: float = 15.0) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if page:
            message["sessionId"] = self.session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._recv(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return dict(reply["result"])
            self.events.append(reply)

    def open(self, path: Path) -> None:
        """Load a file and wait for its load event."""
        self.events.clear()
        self.call("Page.navigate", {"url": path.as_uri()}, page=True)
        deadline = time.monotonic() + 15
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            self.events.append(self._recv(deadline))
        self.evaluate("1")  # drains events queued before the load event reached us

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                           page=True)
        return result["result"].get("value")

    def problems(self, page: Path) -> list[str]:
        """Console errors, uncaught exceptions, failed loads and requests for anything but ``page``."""
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params") or {}
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append("console: " + " ".join(str(a.get("value")) for a in params.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails") or {}
                found.append(f"exception: {details.get('text')} "
                             f"{(details.get('exception') or {}).get('description', '')}")
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                found.append(f"log: {params['entry'].get('text')} {params['entry'].get('url', '')}")
            elif method == "Network.requestWillBeSent" and params["request"]["url"] != page.as_uri():
                found.append(f"request: {params['request']['url']}")
        return found

    def screenshot(self, path: Path) -> tuple[int, int]:
        """A full-page PNG; returns its (width, height) read from the file."""
        height = int(self.evaluate("document.documentElement.scrollHeight"))
        shot = self.call("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": 1280, "height": height, "scale": 1}}, page=True)
        data = base64.b64decode(shot["data"])
        path.write_bytes(data)
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        width, high = struct.unpack(">II", data[16:24])
        return width, high

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=5)
        except (TimeoutError, EOFError, RuntimeError, OSError):
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        for fd in (self._in, self._out):
            os.close(fd)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    chrome = Browser(tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield chrome
    finally:
        chrome.close()


def keep(shot: Path) -> None:
    target = os.environ.get("LOGICFUZZ_REPORT_SCREENSHOT_DIR")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, Path(target) / shot.name)


LAYOUT = """JSON.stringify({
  charts: [...document.querySelectorAll('svg.chart')].map(svg => {
    const box = svg.getBoundingClientRect();
    return {title: svg.getAttribute('aria-label'), width: box.width, height: box.height,
            top: box.top + window.scrollY, left: box.left,
            lines: [...svg.querySelectorAll('polyline')].map(p => p.getTotalLength()),
            bars: [...svg.querySelectorAll('rect')].map(r => r.getBBox().height)};
  }),
  summaryRows: document.querySelectorAll('h2 + table tbody tr').length,
  overflowX: document.documentElement.scrollWidth - window.innerWidth,
  overlaps: [...document.querySelectorAll('.pair, .charts')].flatMap(grid => {
    const boxes = [...grid.children].map(c => c.getBoundingClientRect());
    return boxes.flatMap((a, i) => boxes.slice(i + 1).filter(b =>
      Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 &&
      Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1).map(() => grid.className));
  }),
  statuses: [...document.querySelectorAll('h2 + table .pill')].map(p => p.textContent),
})"""


def test_faults_on_a_page_are_caught(browser: Browser, tmp_path: Path) -> None:
    page = tmp_path / "faulty.html"
    page.write_text('<html><body><img src="missing.png">'
                    '<script>console.error("boom"); notDefined();</script></body></html>')
    browser.open(page)
    problems = browser.problems(page)
    assert any(p == "console: boom" for p in problems), problems
    assert any(p.startswith("exception:") and "notDefined" in p for p in problems), problems
    assert any("missing.png" in p for p in problems), problems


def test_report_renders_without_errors(browser: Browser, tmp_path: Path) -> None:
    run = write_run(tmp_path / "run")
    html, _ = write_report(run)
    browser.open(html)
    assert browser.problems(html) == []
    layout = json.loads(browser.evaluate(LAYOUT))
    assert layout["overflowX"] <= 0  # nothing sticks out sideways at 1280 px
    assert layout["overlaps"] == []  # nor into a neighbour in its grid
    assert layout["summaryRows"] == 4
    assert layout["statuses"] == ["runs", "crash", "builds", "error"]
    charts = layout["charts"]
    assert len(charts) == 6
    for chart in charts:
        assert chart["width"] > 450 and chart["height"] > 250, chart
    # One target has three iterations, the other only its baseline (a single point, no length).
    assert [length > 50 for length in charts[0]["lines"]] == [True, False]
    assert all(length > 50 for chart in charts[1:5] for length in chart["lines"]), charts
    assert sum(h > 0 for h in charts[-1]["bars"]) == 4  # the trust histogram's non-empty bins
    # Two per row: the first two charts share a row and do not overlap.
    first, second = charts[0], charts[1]
    assert first["top"] == second["top"] and first["left"] + first["width"] <= second["left"]
    shot = tmp_path / "report-synthetic.png"
    width, height = browser.screenshot(shot)
    assert width == 1280 and height > 2000
    keep(shot)


ANALYSIS = {"archetype": "stateless_parser", "confidence": "HIGH", "reasoning": "parses one string",
            "constraints": ["text must be NUL-terminated"], "related_functions": ["kv_free", "kv_count"]}


def c_reply(payload: dict[str, Any], body: str) -> Reply:
    return text(f"```json\n{json.dumps(payload)}\n```\n```c\n{harness(body)}```")


def kv_script() -> dict[str, list[Reply]]:
    improved = ("kv_t *kv = kv_parse(text);\n"
                "if (kv) { (void)kv_count(kv); (void)kv_get(kv, \"a\"); }\nkv_free(kv);")
    return {
        "function_analyzer": [text(json.dumps(ANALYSIS))],
        "prototyper": [c_reply({"notes": ["one call"]}, "kv_free(kv_parse(text));")],
        "coverage_analyzer": [text(json.dumps({"summary": "getters never ran", "strategies": [
            {"strategy": "call kv_count and kv_get", "target_functions": ["kv_count", "kv_get"],
             "expected_gain": "HIGH"}]}))],
        "enhancer:improve": [c_reply({"directions": ["query the parsed list"]}, improved)],
    }


@pytest.mark.toolchain
@pytest.mark.e2e
def test_report_of_a_real_run(browser: Browser, kv_benchmark: Path, tmp_path: Path,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A real build, fuzz run and coverage of two targets through ``openai:`` (scripted server).

    The second target's model is down for good: the run goes on, and the report shows both.
    """
    bench = yaml.safe_load(kv_benchmark.read_text())
    bench["functions"].append({"name": "kv_count", "signature": "int kv_count(const kv_t * kv)",
                               "return_type": "int", "params": [{"name": "kv", "type": "const kv_t *"}]})
    two = tmp_path / "kv2.yaml"
    two.write_text(yaml.safe_dump(bench))
    parse_replies = by_role(kv_script())

    def respond(request: Request) -> Reply:
        target = request.text().split("## Target function", 1)[-1].strip().splitlines()[0]
        if "kv_count(" in target:
            return error(503, "model backend down", retry_after_ms=10)
        return parse_replies(request)

    monkeypatch.setenv("LOGICFUZZ_TEST_FAKE_KEY", "sk-fake-report-key")
    out = tmp_path / "run"
    with FakeOpenAI(respond, lifetime=300, max_requests=30) as fake:
        ctx = Context(model="openai:fake-model", base_url=fake.url, api_key_env="LOGICFUZZ_TEST_FAKE_KEY",
                      max_retries=1, fuzz_seconds=2, max_iterations=1,
                      fallback="")  # the report must show a failed target, not the offline floor
        summary = run_benchmark(RunOptions(two, [], out, ctx, jobs=1))
    assert summary["failed"] == ["kv_count"] and summary["running"] == 1
    html, md = write_report(out)
    for path in out.rglob("*"):
        if path.is_file():
            assert b"sk-fake-report-key" not in path.read_bytes(), path
    browser.open(html)
    assert browser.problems(html) == []
    layout = json.loads(browser.evaluate(LAYOUT))
    assert layout["statuses"] == ["runs", "error"] and layout["overflowX"] <= 0
    assert layout["overlaps"] == []
    titles = [c["title"] for c in layout["charts"]]
    assert titles == ["Line coverage per iteration (phase 2)", "Coverage over time: kv_parse"]
    iteration, timeline = layout["charts"]
    assert len(iteration["lines"]) == 1 and iteration["lines"][0] > 0  # iterations 0 and 1
    assert len(timeline["lines"]) == 2 and min(timeline["lines"]) > 0  # harness v1 and v2
    assert "503 - model backend down" in md.read_text()
    shot = tmp_path / "report-real.png"
    browser.screenshot(shot)
    keep(shot)
