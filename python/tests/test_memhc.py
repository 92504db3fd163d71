"""The Python module against numpy's own einsum and matmul."""

import json

import numpy as np
import pytest

import memhc


def meson(rng, n):
    return rng.standard_normal((16, n, n)) + 1j * rng.standard_normal((16, n, n))


def meson4x4(x, y):
    """out(al, ga) = sum_be x(al, be) @ y(be, ga), spins s = 4 al + be, by einsum."""
    n = x.shape[-1]
    xs = x.reshape(4, 4, n, n)
    ys = y.reshape(4, 4, n, n)
    return np.einsum("abij,bcjk->acik", xs, ys).reshape(16, n, n)


def full_trace(x, y):
    """Tr(X Y) over spin and distillation indices of two mesons, as 4N x 4N matrices."""
    n = x.shape[-1]
    big = lambda m: m.reshape(4, 4, n, n).transpose(0, 2, 1, 3).reshape(4 * n, 4 * n)
    return np.trace(big(x) @ big(y))


def test_contraction_trace_and_stats_match_numpy():
    rng = np.random.default_rng(1)
    rt = memhc.Runtime(backend="host", budget="64M", policy="belady")
    x, y = meson(rng, 8), meson(rng, 8)
    a, b = rt.register(x), rt.register(y)
    assert a.shape == [16, 8, 8]
    c = rt.contract(a, b, "meson4x4")
    got = rt.read(c)
    assert got.dtype == np.complex128 and got.shape == (16, 8, 8)
    want = meson4x4(x, y)
    assert np.linalg.norm(got - want) <= 1e-12 * np.linalg.norm(want)
    t = rt.trace(c, b)
    t_want = full_trace(want, y)
    assert isinstance(t, complex)
    assert abs(t - t_want) <= 1e-12 * abs(t_want)
    stats = rt.stats()
    assert stats["misses"] >= 3 and stats["flops"] >= 64 * 8 * 8**3
    assert 0.0 <= stats["hit_rate"] <= 1.0
    rt.audit()
    rt.release(c)
    with pytest.raises(memhc.MemhcError):
        rt.read(c)
    with pytest.raises(memhc.MemhcError):
        rt.release(c)


def test_term_lists_vectors_and_pairs():
    rng = np.random.default_rng(2)
    rt = memhc.Runtime(budget=1 << 24, policy="pp-lru", streams=2)
    x = rng.standard_normal((3, 5, 4)) + 1j * rng.standard_normal((3, 5, 4))
    y = rng.standard_normal((3, 4, 5)) + 1j * rng.standard_normal((3, 4, 5))
    a, b = rt.register(x), rt.register(y)
    terms = [(0, 0, 1), (0, 2, 2), (2, 1, 0)]
    outs = rt.run_vector([(a, b, terms), (a, b, terms)])
    want = np.zeros((3, 5, 5), complex)
    for o, i, j in terms:
        want[o] += x[i] @ y[j]
    for out in outs:
        assert np.allclose(rt.read(out), want, rtol=0, atol=1e-12)
    pairs = [(0, 1), (2, 2)]
    t = rt.trace(a, b, pairs)
    t_want = sum(np.trace(x[i] @ y[j]) for i, j in pairs)
    assert abs(t - t_want) <= 1e-12 * abs(t_want)
    # Fortran-ordered and real input is converted.
    real = np.asfortranarray(rng.standard_normal((1, 3, 3)))
    r = rt.register(real)
    assert np.array_equal(rt.read(r), real.astype(complex))


def test_errors_are_exceptions():
    rt = memhc.Runtime(budget="1M")
    other = memhc.Runtime(budget="1M")
    a = rt.register(np.ones((16, 2, 2), complex))
    with pytest.raises(ValueError, match="spin"):
        rt.contract(a, a, [(0, 16, 0)])
    with pytest.raises(ValueError, match="duplicate"):
        rt.contract(a, a, [(0, 0, 0), (0, 0, 0)])
    with pytest.raises(ValueError, match="another runtime"):
        other.read(a)
    with pytest.raises(ValueError, match="stream"):
        rt.contract(a, a, "meson4x4", stream=7)
    with pytest.raises(ValueError, match="fifo"):
        memhc.Runtime(policy="fifo")
    with pytest.raises(ValueError, match="bytes"):
        memhc.Runtime(budget="lots")
    with pytest.raises(ValueError):
        rt.register(np.ones(4, complex))
    big = rt.register(np.ones((1, 512, 512), complex))  # 4 MiB on a 1 MiB device
    with pytest.raises(memhc.MemhcError, match="does not fit"):
        rt.contract(big, big, [(0, 0, 0)])
    for gpu in ("cuda", "rocm"):
        try:
            memhc.Runtime(backend=gpu, budget="1M")
        except memhc.MemhcError as e:  # no GPU here: one line that says why
            assert "\n" not in str(e)
    rt.audit()


def big(m):
    """A meson node (16, n, n) as its 4n x 4n matrix: M[4a + i, 4b + j] = m[4a + b, i, j]."""
    n = m.shape[-1]
    return m.reshape(4, 4, n, n).transpose(0, 2, 1, 3).reshape(4 * n, 4 * n)


def corr_file(tmp_path, rng, n=3):
    """Four mesons as .npy files and a correlator file over them; the values numpy expects."""
    nodes = {k: meson(rng, n) for k in ("a", "b", "c", "d")}
    for k, x in nodes.items():
        np.save(tmp_path / f"{k}.npy", np.ascontiguousarray(x, dtype=np.complex128))
    spec = {
        "format": "memhc-corr/1",
        "nodes": [
            {"id": k, "spins": 16, "dims": [n, n], "time": t, "data": {"npy": f"{k}.npy"}}
            for t, k in enumerate(nodes)
        ],
        "graphs": [
            {"id": "ab", "loops": [{"nodes": ["a", "b"]}]},
            {"id": "abc", "coefficient": [0.5, 0.0], "loops": [{"nodes": ["a", "b", "c"]}]},
            {"id": "abcd", "coefficient": [0.0, -2.0], "loops": [{"nodes": ["a", "b", "c", "d"]}]},
            {"id": "a_c", "coefficient": [-1.0, 0.0], "loops": [{"nodes": ["a"]}, {"nodes": ["c"]}]},
        ],
        "correlators": [
            {"name": "C2", "times": [{"source": 0, "sink": 1, "graphs": ["ab"]},
                                     {"source": 0, "sink": 2, "graphs": ["ab", "a_c"]}]},
            {"name": "C3", "times": [{"source": 1, "sink": 3, "graphs": ["abc", "abcd"]}]},
        ],
    }
    path = tmp_path / "corr.json"
    path.write_text(json.dumps(spec))
    A, B, C, D = (big(nodes[k]) for k in "abcd")
    ab = np.trace(A @ B)
    want = {
        "C2": ([(0, 1), (0, 2)], [ab, ab - np.trace(A) * np.trace(C)]),
        "C3": ([(1, 3)], [0.5 * np.trace(A @ B @ C) - 2j * np.trace(A @ B @ C @ D)]),
    }
    return path, want


def check(got, want):
    assert list(got) == list(want)
    for name, (times, values) in want.items():
        t, v = got[name]
        assert t.dtype == np.int64 and t.shape == (len(times), 2)
        assert [tuple(p) for p in t.tolist()] == times
        assert v.dtype == np.complex128 and v.shape == (len(values),)
        want_v = np.array(values)
        assert np.all(np.abs(v - want_v) <= 1e-12 * np.abs(want_v)), (name, v, want_v)


def test_correlators_match_numpy(tmp_path):
    path, want = corr_file(tmp_path, np.random.default_rng(3))
    plan = memhc.plan_correlators(path)
    assert plan["traces"] == 5 and plan["contractions_without_sharing"] == 3
    assert plan["contractions"] <= 3 and plan["peak_bytes"] > 0 and plan["sharing"]
    out = tmp_path / "out.csv"
    check(memhc.run_correlators(str(path), out=out), want)
    assert out.read_text().splitlines()[0] == "correlator,source,sink,re,im"
    # A budget of the four nodes' bytes: below the plan's peak, so objects are evicted.
    check(memhc.run_correlators(path, policy="belady", budget=plan["node_bytes"], streams=2,
                                sharing=False, file_order=True), want)
    check(memhc.reference_correlators(path), want)
    assert memhc.plan_correlators(path, sharing=False)["contractions"] == 3


def test_correlator_errors_are_one_line(tmp_path):
    with pytest.raises(OSError) as e:
        memhc.run_correlators(tmp_path / "absent.json")
    assert "absent.json" in str(e.value) and "\n" not in str(e.value)
    path, _ = corr_file(tmp_path, np.random.default_rng(4), n=2)
    bad = tmp_path / "bad.json"
    bad.write_text(path.read_text().replace('["a", "b", "c"]', '["a", "b", "x"]'))
    with pytest.raises(ValueError, match=r'graph abc, loop 0: unknown node "x"'):
        memhc.plan_correlators(bad)
    (tmp_path / "c.npy").unlink()
    with pytest.raises(ValueError, match="node c"):
        memhc.reference_correlators(path)
    with pytest.raises(ValueError, match="unknown backend"):
        memhc.run_correlators(bad, backend="tpu")
    with pytest.raises(ValueError, match="unknown extension 'txt'"):
        memhc.run_correlators(path, out=tmp_path / "c.txt")
