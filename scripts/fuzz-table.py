#!/usr/bin/env python3
"""The table of long fuzz runs in docs/results/2026-11-27-fuzz.md, from the raw files that
scripts/fuzz-long-runs.sh wrote (docs/results/2026-11-27-fuzz/*.txt): per target, the seconds
it ran (wall clock), the CPU seconds it got (user + system), the cases it ran, its peak
memory (`/usr/bin/time -v`), its exit status and what it found (the first panic message, or
"none" when every case passed).

    python3 scripts/fuzz-table.py [DIR]
    python3 scripts/fuzz-table.py --plan    (the table of scripts/fuzz-plan-memory.sh's log)
"""

import pathlib
import re
import sys


def row(path: pathlib.Path) -> list[str]:
    text = path.read_text(errors="replace")
    head = dict(re.findall(r"^# (\w[\w ]*): (.*)$", text, re.M))
    # libtest prints `test NAME ... ` before the driver's line, so it is not at a line start.
    summary = re.search(r"memhc-fuzz (\S+): (\d+) cases in ([\d.]+) s$", text, re.M)
    user = re.search(r"User time \(seconds\): ([\d.]+)", text)
    system = re.search(r"System time \(seconds\): ([\d.]+)", text)
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
    cpu = f"{float(user.group(1)) + float(system.group(1)):,.0f}" if user and system else "?"
    return [
        head.get("target", path.stem),
        head.get("commit", "?"),
        seconds,
        cpu,
        cases,
        peak,
        exit_status,
        found,
    ]


def plan_table(log: pathlib.Path) -> None:
    """What `memhc plan` took per file (scripts/fuzz-plan-memory.sh's log)."""
    print("| file | exit | peak RSS | node_bytes | refused with |")
    print("|---|---|---|---|---|")
    for block in log.read_text().split("## file: ")[1:]:
        name = block.splitlines()[0].strip()
        rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", block)
        code = re.search(r"Exit status: (\d+)", block)
        node = re.search(r'"node_bytes": (\d+)', block)
        err = re.search(r"^memhc: [^:]*: (.*)$", block, re.M)
        print(
            f"| `{name}` | {code.group(1) if code else '?'} "
            f"| {int(rss.group(1)) / 1024:,.1f} MiB | "
            f"{f'{int(node.group(1)):,}' if node else '-'} | {(err.group(1)[:90] + ('…' if len(err.group(1)) > 90 else '')) if err else ''} |"
            if rss
            else f"| `{name}` | ? | ? | ? | |"
        )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--plan":
        plan_table(pathlib.Path("docs/results/2026-11-27-fuzz/plan-memory.log"))
        return
    d = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "docs/results/2026-11-27-fuzz")
    rows = [row(p) for p in sorted(d.glob("*.txt"))]
    head = ["target", "commit", "seconds", "CPU seconds", "cases", "peak RSS", "exit", "found"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
