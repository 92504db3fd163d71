#!/usr/bin/env python3
"""The table of long fuzz runs in docs/results/2026-11-27-fuzz.md, from the raw files that
scripts/fuzz-long-runs.sh wrote (docs/results/2026-11-27-fuzz/*.txt): per target, the seconds it
ran, the cases it ran, its peak memory (`/usr/bin/time -v`), its exit status and what it found
(the first panic message, or "none" when every case passed).

    python3 scripts/fuzz-table.py [DIR]
"""

import pathlib
import re
import sys


def row(path: pathlib.Path) -> list[str]:
    text = path.read_text(errors="replace")
    head = dict(re.findall(r"^# (\w[\w ]*): (.*)$", text, re.M))
    summary = re.search(r"^memhc-fuzz (\S+): (\d+) cases in ([\d.]+) s$", text, re.M)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    exit_status = head.get("exit", "(still running or killed)")
    passed = re.search(r"^test result: ok\. 1 passed", text, re.M) is not None
    panic = re.search(r"panicked at [^\n]*\n(.*)", text)
    if passed and exit_status == "0":
        found = "none"
    elif panic:
        found = panic.group(1).strip()[:160]
    else:
        found = "did not finish"
    cases = f"{int(summary.group(2)):,}" if summary else "?"
    seconds = f"{float(summary.group(3)):,.0f}" if summary else "?"
    peak = f"{int(rss.group(1)) / 1024:,.0f} MiB" if rss else "?"
    return [
        head.get("target", path.stem),
        head.get("commit", "?"),
        seconds,
        cases,
        peak,
        exit_status,
        found,
    ]


def main() -> None:
    d = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "docs/results/2026-11-27-fuzz")
    rows = [row(p) for p in sorted(d.glob("*.txt"))]
    head = ["target", "commit", "seconds", "cases", "peak RSS", "exit", "found"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
