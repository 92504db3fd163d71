"""new-units.py DIR [DIR...]: for each cargo build whose unit graph unit-graphs.sh wrote into DIR,
in order, how many of its units no earlier build of the run had (those compile again).

A unit is the same as an earlier one when its package, target, mode, features, platform and
profile settings are, and its dependencies are the same units: cargo's own reuse rule (the
fingerprint hashes these). With --list, the new units of each build are named."""
import glob
import hashlib
import json
import sys


def unit_ids(path):
    units = json.load(open(path))["units"]
    memo = {}

    def uid(i):
        if i not in memo:
            u = units[i]
            profile = {k: v for k, v in u["profile"].items() if k != "name"}
            deps = sorted(uid(d["index"]) for d in u["dependencies"])
            key = [u["pkg_id"], u["target"]["name"], u["target"]["kind"], u["mode"],
                   sorted(u["features"]), u.get("platform"), profile, deps]
            memo[i] = hashlib.sha1(json.dumps(key, sort_keys=True).encode()).hexdigest()
        return memo[i]

    return {uid(i): units[i] for i in range(len(units))}


def name(u):
    return f'{u["pkg_id"].split("#")[-1]} {u["target"]["name"]} ({u["mode"]})'


args = [a for a in sys.argv[1:] if a != "--list"]
for d in args:
    seen = {}
    print(f"{d}:")
    print("| build | units | new | new outside the workspace |")
    print("|---|---:|---:|---:|")
    for f in sorted(glob.glob(f"{d}/*.json")):
        ids = unit_ids(f)
        new = [u for k, u in ids.items() if k not in seen]
        outside = [u for u in new if not u["pkg_id"].startswith("path+")]
        print(f"| {f.split('/')[-1][:-5]} | {len(ids)} | {len(new)} | {len(outside)} |")
        if "--list" in sys.argv:
            for u in sorted(map(name, outside)):
                print(f"|   {u} | | | |")
        seen.update(ids)
    print()
