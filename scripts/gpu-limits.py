#!/usr/bin/env python3
"""The physical limits of the GPU this runs on (issue 10, measurement d), through PyTorch.

    python3 scripts/gpu-limits.py [--json FILE]

Measures, with CUDA events after a warm-up, the median of several repetitions of:
  * the complex-double GEMM rate (cuBLAS zgemm through torch.matmul on complex128) at one large
    square size and as 64 batched products at the contraction sizes memhc runs (N = 128 ... 384);
  * pinned host-to-device and device-to-host bandwidth (page-locked host memory, one copy of
    256 MiB and of 1 GiB);
  * device-to-device copy bandwidth (bytes read plus bytes written).
Inputs are random, never zeros. Flops of a complex product: 8 N^3. The end-to-end runs are then
given as a fraction of max(flops / zgemm rate, compulsory bytes / bandwidth).
"""
import argparse
import json
import statistics
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="write the figures as JSON")
    args = parser.parse_args()
    try:
        import torch
    except ImportError as e:
        sys.exit(f"gpu-limits: needs PyTorch: {e}")
    if not torch.cuda.is_available():
        sys.exit("gpu-limits: PyTorch sees no CUDA device")
    dev = torch.device("cuda")
    torch.manual_seed(1)

    def timed(fn, reps):
        """Median seconds of fn() over reps, with CUDA events, after two warm-up calls."""
        for _ in range(2):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop) * 1e-3)
        return statistics.median(times), min(times), max(times)

    out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "cuda": torch.version.cuda}
    print(f"device: {out['device']}, torch {out['torch']}, CUDA {out['cuda']}")

    def crand(*shape):
        return torch.complex(torch.randn(*shape, dtype=torch.float64, device=dev),
                             torch.randn(*shape, dtype=torch.float64, device=dev))

    rates = {}
    n = 8192
    a, b = crand(n, n), crand(n, n)
    med, lo, hi = timed(lambda: torch.matmul(a, b), 5)
    rates[f"square N={n}"] = 8 * n**3 / med / 1e9
    print(f"zgemm {n}x{n}x{n}: median {med*1e3:.2f} ms (min {lo*1e3:.2f}, max {hi*1e3:.2f}): "
          f"{rates[f'square N={n}']:.0f} GFLOPS")
    del a, b
    for n in (128, 192, 256, 384):
        a, b = crand(64, n, n), crand(64, n, n)
        med, lo, hi = timed(lambda: torch.bmm(a, b), 20)
        key = f"batched 64 x N={n}"
        rates[key] = 64 * 8 * n**3 / med / 1e9
        print(f"zgemm {key}: median {med*1e6:.1f} us (min {lo*1e6:.1f}, max {hi*1e6:.1f}): "
              f"{rates[key]:.0f} GFLOPS")
    out["zgemm_gflops"] = rates

    bw = {}
    for size in (256 << 20, 1 << 30):
        host = torch.empty(size, dtype=torch.uint8).pin_memory()
        host.random_(0, 255)
        devbuf = torch.empty(size, dtype=torch.uint8, device=dev)
        med, _, _ = timed(lambda: devbuf.copy_(host, non_blocking=True), 10)
        bw[f"h2d {size >> 20} MiB"] = size / med / 1e9
        med, _, _ = timed(lambda: host.copy_(devbuf, non_blocking=True), 10)
        bw[f"d2h {size >> 20} MiB"] = size / med / 1e9
        other = torch.empty_like(devbuf)
        med, _, _ = timed(lambda: other.copy_(devbuf), 10)
        bw[f"d2d {size >> 20} MiB (read+write)"] = 2 * size / med / 1e9
        del host, devbuf, other
    for k, v in bw.items():
        print(f"{k}: {v:.1f} GB/s")
    out["bandwidth_gb_s"] = bw
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
