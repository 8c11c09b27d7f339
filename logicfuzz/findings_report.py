"""``report.md`` of one finding: what a maintainer needs to file it, in the order they read it."""

from __future__ import annotations

from typing import Any

MAX_HEX_BYTES = 512


def hex_dump(data: bytes) -> str:
    """16 bytes a line: offset, hex and the printable characters (``xxd``'s layout)."""
    lines = []
    for at in range(0, len(data), 16):
        chunk = data[at:at + 16]
        hexes = " ".join(f"{b:02x}" for b in chunk)
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{at:08x}: {hexes:<47}  {text}")
    return "\n".join(lines)


def _title(entry: dict[str, Any]) -> str:
    frame = entry.get("top_frame") or ""
    where = f" in {frame.split(' ')[0]}" if frame else ""
    return f"{entry.get('kind') or 'crash'}{where}"


def _reproducer_section(entry: dict[str, Any], data: bytes) -> list[str]:
    size = len(data)
    how = (f"minimized from {entry.get('original_bytes')} bytes with libFuzzer's `-minimize_crash`"
           if entry.get("minimized") else "as the fuzzer found it (minimizing kept no smaller input "
           "that crashes the same way)")
    out = ["## Reproducer", "", f"`reproducer` in this folder: {size} bytes, {how}.", ""]
    if size <= MAX_HEX_BYTES:
        out += ["```text", hex_dump(data) or "(empty input)", "```", ""]
    return out


def render_report(entry: dict[str, Any], stack: str, harness: str, reproducer: bytes) -> str:
    """The Markdown report of the finding ``entry`` (as ``finding.json`` holds it)."""
    targets = ", ".join(f"`{t}`" for t in entry.get("targets") or [])
    out = [f"# {_title(entry)}", ""]
    if entry.get("unclear"):
        out += [f"> **Not a confirmed library bug** ({entry['unclear']}): read the stack and the "
                "harness before filing.", ""]
    source = f" ({entry['source']})" if entry.get("source") else ""
    summary = f": {entry['summary']}" if entry.get("summary") else ""
    frames = " < ".join(f"`{f}`" for f in entry.get("frames") or []) or "none"
    out += [f"- **Library:** {entry.get('project')}{source}", f"- **Kind:** {entry.get('kind')}{summary}",
            f"- **Top library frames:** {frames}",
            f"- **Found by:** the LogicFuzz harnesses of {targets}",
            f"- **Replays alone:** {'yes' if entry.get('replays') else 'no'}", ""]
    out += ["## Stack", "", "The sanitizer's report of the reproducer run alone:", "", "```text",
            stack.strip() or "(no report)", "```", ""]
    out += _reproducer_section(entry, reproducer)
    out += ["## Harness", "", "`harness.c` in this folder, a libFuzzer entry point calling the library's "
            "public API:", "", "```c", harness.rstrip(), "```", ""]
    out += ["## Replay", "",
            "Build the harness with the library (both with `-g -fsanitize=address,fuzzer`, e.g. "
            "`clang -g -fsanitize=address,fuzzer harness.c <library sources> -I<include dir> -o harness`), "
            "then run it on the input:", "", "```sh", "./harness reproducer", "```", "",
            "In the LogicFuzz run directory, `./replay.sh` in this folder runs the harness binary the run "
            f"built: `{entry.get('replay')}`.", ""]
    return "\n".join(out)
