#!/usr/bin/env python3
"""Per-section times of saved `.ci/run` logs, as Markdown tables.

    python3 scripts/ci-times.py [--reference-wall S] LABEL=LOG[+LOG...] [LABEL=LOG[+LOG...] ...]

LOG+LOG: one run measured in parts (for example the release sections on a clone of their own);
a section takes its numbers from the first of the logs that has it, unless the run was stopped
in it there (its CPU is then incomplete). Each LOG is the saved output of `.ci/run` (stdout and
stderr). What is read from it:

- the timer lines `.ci/run` prints at the end of every section and at the end of the run,
  `== time: <section>: wall W s, cpu C s (user U, sys S)`;
- `/usr/bin/time -v`'s summary, when the run was wrapped in it (wall clock, user, system);
- cargo test's per-binary lines (`Running <target> (...)` then `... finished in X s`), for the
  slowest test binaries;
- LOG.uptime beside it, when present: one `uptime` line every 30 s while the run went
  (the machine's load average, to say how shared it was).

Every number it prints comes from these lines; nothing is typed in by hand, except S: the wall
time of a run of the first LOG's commit on an unshared machine, if one is known. With it, each
run's wall time on that machine is estimated as S times its CPU time over the first run's (the
CPU a run needs does not depend on how busy the machine is; its wall time does). A section
measured in the last run but not in an earlier one counts, for the earlier run, with the last
run's numbers (said where it happens): the total it gives the earlier run is then a lower bound.
The scaled estimate is printed only when every section `.ci/run` has was measured in some run.
"""
import re
import statistics
import sys
from pathlib import Path

TIME = re.compile(
    r"^== time: (?P<name>.*): wall (?P<wall>[\d.]+) s, cpu (?P<cpu>[\d.]+) s "
    r"\(user (?P<user>[\d.]+), sys (?P<sys>[\d.]+)\)$"
)
RUNNING = re.compile(r"^\s+Running (?P<target>\S+(?: \S+)?) \(")
DOCTESTS = re.compile(r"^\s+Doc-tests (?P<target>\S+)")
FINISHED = re.compile(r"^test result: .*finished in (?P<s>[\d.]+)s")
LOAD = re.compile(r"load average: ([\d.]+), ([\d.]+), ([\d.]+)")
GNU_TIME = {
    "wall": re.compile(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (.*)$"),
    "user": re.compile(r"User time \(seconds\): ([\d.]+)"),
    "sys": re.compile(r"System time \(seconds\): ([\d.]+)"),
}


def clock(text):
    parts = [float(p) for p in text.strip().split(":")]
    s = 0.0
    for p in parts:
        s = s * 60 + p
    return s


def parse(path):
    sections, tests, gnu = {}, [], {}
    total = None
    target = None
    last = None
    for line in Path(path).read_text(errors="replace").splitlines():
        m = TIME.match(line)
        if m:
            row = {k: float(m[k]) for k in ("wall", "cpu", "user", "sys")}
            if m["name"].startswith("total"):
                total = (m["name"], row)
                # A run stopped from outside (or failed) ends its last section early: that
                # section's numbers are not what it costs (and the CPU of children killed
                # with it is not in them).
                if m["name"] != "total (exit 0)" and last:
                    sections[last]["stopped"] = True
            else:
                sections[m["name"]] = row
                last = m["name"]
            continue
        m = RUNNING.match(line) or DOCTESTS.match(line)
        if m:
            target = m["target"]
            continue
        m = FINISHED.match(line)
        if m and target:
            tests.append((float(m["s"]), target))
            target = None
            continue
        for key, rx in GNU_TIME.items():
            m = rx.search(line)
            if m:
                gnu[key] = clock(m[1]) if key == "wall" else float(m[1])
    loads = []
    up = Path(str(path) + ".uptime")
    if up.exists():
        for line in up.read_text().splitlines():
            m = LOAD.search(line)
            if m:
                loads.append(float(m[1]))
    return sections, total, tests, gnu, loads


def main(args):
    ref = None
    if args and args[0] == "--reference-wall":
        ref = float(args[1])
        args = args[2:]
    runs, parts = [], []
    for arg in args:
        label, _, paths = arg.partition("=")
        merged = None
        for path in paths.split("+"):
            one = parse(path)
            parts.append((f"{label}: {Path(path).name}", one))
            if merged is None:
                merged = (dict(one[0]), one[1], list(one[2]), one[3], list(one[4]))
            else:
                for n, r in one[0].items():
                    if n not in merged[0] or (merged[0][n].get("stopped") and not r.get("stopped")):
                        merged[0][n] = r
                merged[2].extend(one[2])
        runs.append((label, merged))
    names = []
    for _, (sections, *_rest) in runs:
        for n in sections:
            if n not in names:
                names.append(n)

    change = len(runs) >= 2
    head = "| section | " + " | ".join(f"{l} wall s | {l} cpu s" for l, _ in runs)
    head += f" | cpu {runs[-1][0]} / {runs[0][0]} |" if change else " |"
    print(head)
    print("|---|" + "---:|---:|" * len(runs) + ("---:|" if change else ""))
    both = {"wall": [0.0] * len(runs), "cpu": [0.0] * len(runs)}
    for n in names:
        cells = []
        rows = [sections.get(n) for _, (sections, *_rest) in runs]
        for r in rows:
            if r and r.get("stopped"):
                cells += [f"stopped at {r['wall']:.1f}", "-"]
            else:
                cells += [f"{r['wall']:.1f}", f"{r['cpu']:.1f}"] if r else ["not reached", "-"]
        rows = [None if r and r.get("stopped") else r for r in rows]
        if change:
            first, last = rows[0], rows[-1]
            cells.append(f"{last['cpu'] / first['cpu']:.2f}" if first and last and first["cpu"] > 0 else "-")
        if all(rows):
            for i, r in enumerate(rows):
                both["wall"][i] += r["wall"]
                both["cpu"][i] += r["cpu"]
        print(f"| {n} | " + " | ".join(cells) + " |")
    cells = []
    for i in range(len(runs)):
        cells += [f"**{both['wall'][i]:.1f}**", f"**{both['cpu'][i]:.1f}**"]
    if change:
        cells.append(f"**{both['cpu'][-1] / both['cpu'][0]:.2f}**" if both["cpu"][0] else "-")
    print("| **sections every run reached** | " + " | ".join(cells) + " |\n")

    print("| log | total line | /usr/bin/time wall s | user+sys s | load avg (1 min) min / median / max, samples |")
    print("|---|---|---:|---:|---|")
    for label, (_, total, _, gnu, loads) in parts:
        t = f"{total[0]}: wall {total[1]['wall']:.1f} s, cpu {total[1]['cpu']:.1f} s" if total else "none (stopped before the end)"
        if gnu:
            g = f"{gnu.get('wall', 0):.1f} | {gnu.get('user', 0) + gnu.get('sys', 0):.1f}"
        else:
            g = "- | -"
        ld = (
            f"{min(loads):.2f} / {statistics.median(loads):.2f} / {max(loads):.2f}, {len(loads)}"
            if loads
            else "-"
        )
        print(f"| {label} | {t} | {g} | {ld} |")
    print()

    # Whole-run CPU with stand-ins: a section the first run did not reach (or was stopped in)
    # takes the last run's numbers. The commands of those sections are the same in both; the
    # changes can only have made them cheaper, so the first run's total is then a lower bound,
    # and the last run's share of it an upper bound.
    if change:
        full = [0.0] * len(runs)
        stand_in = []
        for n in names:
            rows = [sections.get(n) for _, (sections, *_rest) in runs]
            rows = [None if r and r.get("stopped") else r for r in rows]
            if rows[-1] is None:
                continue
            for i, r in enumerate(rows):
                if r is None:
                    r = rows[-1]
                    stand_in.append((runs[i][0], n))
                full[i] += r["cpu"]
        print("CPU of every section the last run measured, with stand-ins (the last run's numbers")
        print("for a section an earlier run did not measure: " + (", ".join(f"{l}: {n}" for l, n in stand_in) or "none") + "):\n")
        for i, (label, _) in enumerate(runs):
            print(f"- {label}: {full[i]:.0f} s CPU{' (a lower bound)' if any(l == label for l, _ in stand_in) else ''}; over 2 cores busy throughout: {full[i] / 2:.0f} s")
        expected = re.findall(r'^section "([^"]+)"', (Path(__file__).parent.parent / ".ci" / "run").read_text(), re.M)
        missing = [n for n in expected if n not in names or all(
            (sections.get(n) is None or sections[n].get("stopped")) for _, (sections, *_r) in runs)]
        if missing:
            print("- measured in no run (so not in these sums): " + ", ".join(missing))
        early = [n for n in names if n not in missing and (runs[-1][1][0].get(n) is None or runs[-1][1][0][n].get("stopped"))]
        if early:
            print(f"- not measured in the {runs[-1][0]} run (so not in these sums): " + ", ".join(early))
        if ref is not None and full[0] > 0 and not missing:
            print(f"- estimate for an unshared 2-core machine, scaling the reference run ({ref:.0f} s) by CPU: "
                  + ", ".join(f"{label} {ref * full[i] / full[0]:.0f} s" for i, (label, _) in enumerate(runs)))
        print()

    for label, (_, _, tests, _, _) in runs:
        slow = sorted(tests, reverse=True)[:8]
        total = sum(s for s, _ in tests)
        print(f"{label}: {len(tests)} test binaries (cargo's `finished in`), {total:.1f} s in all" + ("; slowest:\n" if tests else "."))
        for s, t in slow:
            print(f"- {s:.2f} s `{t}`")
        print()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
