#!/usr/bin/env python3
"""Runs a command and samples the CPU time of each of its threads while it runs.

    scripts/thread-cpu.py OUT.jsonl [--every SECONDS] -- COMMAND...

Every `--every` seconds (default 0.005) it reads, for each thread of the command's process,
its name (/proc/PID/task/TID/comm), the CPU time it has used (/proc/PID/task/TID/schedstat,
nanoseconds; /proc/PID/task/TID/stat's utime + stime where schedstat is missing) and, from
/proc/PID/task/TID/stat, how much of it was in the kernel (stime, clock ticks turned into
nanoseconds: page-locking memory, faults and waits show there), and appends one line to
OUT.jsonl: `{"t": seconds since start, "threads": {TID: [comm, cpu_ns, sys_ns], ...}}`. At the end it prints,
per thread name, the CPU seconds the threads of that name used and how many there were, so one
sees which threads of a GPU run burn the host's time (the GPU machine has no perf). Exits with
the command's status. Needs Linux's /proc; no third-party packages.
"""
import json
import os
import subprocess
import sys
import time

TICK_NS = 1e9 / os.sysconf("SC_CLK_TCK")


def read_threads(pid):
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        base = f"/proc/{pid}/task/{tid}"
        try:
            with open(f"{base}/comm") as f:
                comm = f.read().strip()
            with open(f"{base}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            user, system = int(fields[11]) * TICK_NS, int(fields[12]) * TICK_NS
            try:
                with open(f"{base}/schedstat") as f:
                    ns = int(f.read().split()[0])
            except OSError:
                ns = int(user + system)
        except (OSError, ValueError, IndexError):
            continue
        out[tid] = [comm, ns, int(system)]
    return out


def main():
    args = sys.argv[1:]
    if len(args) < 3 or "--" not in args:
        sys.exit("usage: thread-cpu.py OUT.jsonl [--every SECONDS] -- COMMAND...")
    split = args.index("--")
    opts, cmd = args[:split], args[split + 1:]
    out_path, every = opts[0], 0.005
    if "--every" in opts:
        every = float(opts[opts.index("--every") + 1])
    start = time.monotonic()
    proc = subprocess.Popen(cmd)
    last = {}
    with open(out_path, "w") as out:
        while proc.poll() is None:
            sample = read_threads(proc.pid)
            if sample:
                for tid, v in sample.items():
                    last[tid] = v
                out.write(json.dumps({"t": round(time.monotonic() - start, 4), "threads": sample}) + "\n")
            time.sleep(every)
    by_name = {}
    for comm, ns, sys_ns in last.values():
        total, kernel, count = by_name.get(comm, (0, 0, 0))
        by_name[comm] = (total + ns, kernel + sys_ns, count + 1)
    print("thread-cpu: CPU seconds per thread name (last sample of each thread), of which in the kernel")
    for comm, (ns, sys_ns, count) in sorted(by_name.items(), key=lambda kv: -kv[1][0]):
        print(f"  {comm:<20} {ns / 1e9:9.3f} s  kernel {sys_ns / 1e9:8.2f} s  ({count} thread{'s' if count != 1 else ''})")
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main()
