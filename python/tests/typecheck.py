"""Uses the whole API as a program would; CI runs `mypy --strict` over it against memhc.pyi
(python/memhc.pyi), and test_memhc.py runs it, so the stub and the module agree in both
directions. Run from the repository root."""

import numpy as np
import numpy.typing as npt

import memhc


def main() -> None:
    rt: memhc.Runtime = memhc.Runtime(backend="host", budget="64M", policy="belady", streams=2)
    x: npt.NDArray[np.complex128] = np.ones((16, 4, 4), dtype=np.complex128)
    a: memhc.Node = rt.register(x)
    shape: tuple[int, ...] = a.shape
    c = rt.contract(a, a, "meson4x4", stream=1)
    d = rt.contract(a, a, [(0, 0, 0), (1, 2, 3)], out_spins=2)
    outs: list[memhc.Node] = rt.run_vector([(a, a, "meson4x4"), (c, a, [(0, 1, 2)])])
    values: npt.NDArray[np.complex128] = rt.read(c)
    buf = np.empty(shape, dtype=np.complex128)
    same: npt.NDArray[np.complex128] = rt.read(a, out=buf)
    t: complex = rt.trace(c, a) + rt.trace(a, a, [(0, 0), (5, 5)], stream=1)
    stats = rt.stats()
    hits: int | float = stats["hits"]
    rt.release(d)
    rt.audit()
    rt.synchronize()
    budget: int = rt.budget
    backend: str = rt.backend
    streams: int = rt.streams
    try:
        rt.read(d)
    except memhc.MemhcError as e:
        message: str = str(e)
        assert message
    path = "examples/data/pion.corr.json"
    plan = memhc.plan_correlators(path, sharing=True, vector_size=8)
    corr = memhc.run_correlators(path, backend="host", budget=None, file_order=False, seed=1,
                                 host_memory="pinned", prefetch=12)
    ref = memhc.reference_correlators(path)
    times, vals = corr["C_pi_pi"]
    first: int = int(times[0, 0])
    err = float(np.max(np.abs(vals - ref["C_pi_pi"][1])))
    pinned_rt = memhc.Runtime(backend="host", budget="64M", host_memory="pinned")
    hb: memhc.HostBuffer = pinned_rt.alloc_host((16, 4, 4))
    view: npt.NDArray[np.complex128] = np.asarray(hb)
    view[...] = x
    del view
    pn: memhc.Node = pinned_rt.register_host(hb)
    done: bool = hb.registered
    r = pinned_rt.take_host(pinned_rt.contract(pn, pn))
    locked: bool = r.pinned
    rshape: tuple[int, ...] = r.shape
    result: npt.NDArray[np.complex128] = np.asarray(r)
    version: str = memhc.__version__
    print(len(outs), values.shape, same is buf, t, hits, budget, backend, streams,
          plan["contractions"], first, err, version, done, locked, rshape, result.shape)


if __name__ == "__main__":
    main()
