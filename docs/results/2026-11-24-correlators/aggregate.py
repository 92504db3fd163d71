import json, statistics, sys, os
os.chdir(os.path.dirname(os.path.abspath(__file__)))
def load(name):
    reps = [json.load(open(f'rep{r}/{name}.json')) for r in (1, 2, 3)]
    rows = []
    for i, rec in enumerate(reps[0]):
        walls = [reps[r][i]['wall_s'] for r in range(3)]
        for key in ('h2d_bytes', 'd2h_bytes', 'hits', 'misses', 'evictions', 'writebacks', 'peak_device_bytes'):
            vals = {reps[r][i]['stats'][key] for r in range(3)}
            if len(vals) != 1:
                print(f"NOTE {name} {rec['policy']} {rec['mode']} {key} varies: {sorted(vals)}", file=sys.stderr)
        rows.append((rec, walls))
    return rows
def table(name):
    rows = load(name)
    print(f"budget {rows[0][0]['budget']}\n")
    print("| policy | mode | wall_s (median of 3) | runs | h2d_bytes | d2h_bytes | hits | misses | evictions | writebacks |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for rec, walls in rows:
        s = rec['stats']
        print(f"| {rec['policy']} | {rec['mode']} | {statistics.median(walls):.3f} | {', '.join(f'{w:.2f}' for w in walls)} | {s['h2d_bytes']} | {s['d2h_bytes']} | {s['hits']} | {s['misses']} | {s['evictions']} | {s['writebacks']} |")
    med = {(r['policy'], r['mode']): (statistics.median(w), r['stats']) for r, w in rows}
    out = []
    for pol in ('lru', 'pp-lru', 'belady'):
        if (pol, 'naive') in med and (pol, 'optimal') in med:
            (tn, sn), (to, so) = med[(pol, 'naive')], med[(pol, 'optimal')]
            out.append(f"{pol}: time naive/optimal {tn/to:.2f}x, h2d {sn['h2d_bytes']/so['h2d_bytes']:.1f}x, h2d+d2h {(sn['h2d_bytes']+sn['d2h_bytes'])/(so['h2d_bytes']+so['d2h_bytes']):.1f}x")
    if out:
        print("\nRatios (medians): " + "; ".join(out) + ".")
    print()
    return med
for f in ('a1_128', 'f0d2_64'):
    for s in ('sharing', 'no-sharing'):
        print(f"### {f} {s}\n")
        table(f'run-{f}-{s}')
    for o in ('planned', 'file'):
        print(f"### {f} order {o}\n")
        table(f'order-{f}-{o}')
