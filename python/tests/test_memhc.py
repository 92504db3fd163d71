"""The Python module against numpy's own einsum and matmul."""

import ast
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

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
    assert a.shape == (16, 8, 8) and isinstance(a.shape, tuple)
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
    # The direct data path: node data in page-locked memory, copies issued ahead; evicting too.
    check(memhc.run_correlators(path, host_memory="pinned", prefetch=6), want)
    check(memhc.run_correlators(path, policy="belady", budget=plan["node_bytes"],
                                host_memory="pinned", prefetch=1), want)


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
    with pytest.raises(ValueError, match="prefetch"):
        memhc.run_correlators(path, prefetch=0)
    with pytest.raises(ValueError, match="unknown host memory 'locked'"):
        memhc.run_correlators(path, host_memory="locked")


ROOT = Path(__file__).resolve().parents[2]


def stats_fields():
    """The field names of memhc-core's Stats, read from its source (independent of the
    module's own list)."""
    src = (ROOT / "crates/memhc-core/src/stats.rs").read_text()
    body = src[src.index("pub struct Stats {"):]
    body = body[: body.index("\n}")]
    return re.findall(r"^\s*pub (\w+):", body, flags=re.M)


def test_stats_carry_every_statistic():
    rt = memhc.Runtime(budget="1M", streams=3)
    a = rt.register(np.ones((16, 4, 4), complex))
    c = rt.contract(a, a)
    rt.read(c)
    stats = rt.stats()
    fields = stats_fields()
    assert "arena_allocations" in fields and "hit_rate" in fields and len(fields) > 20
    assert set(stats) == set(fields) | {"objects", "budget_bytes", "streams"}
    for k, v in stats.items():
        assert type(v) is (float if k == "hit_rate" else int), k
    assert stats["objects"] == 2 and stats["budget_bytes"] == 1 << 20 and stats["streams"] == 3
    assert stats["arena_allocations"] == 0  # no arena in the default allocation
    # 16 outputs of 4 products of 4 x 4 x 4: 8 m n k flops each.
    assert stats["flops"] == 64 * 8 * 4**3
    assert stats["hits"] + stats["misses"] >= 2


def test_shapes_are_tuples_and_reads_fill_in_place():
    rt = memhc.Runtime(budget="1M")
    x = np.arange(3 * 2 * 5, dtype=np.complex128).reshape(3, 2, 5) * (1 + 2j)
    a = rt.register(x)
    assert a.shape == (3, 2, 5) and repr(a).endswith("shape=(3, 2, 5))")
    got = rt.read(a)
    assert got.shape == (3, 2, 5) and got.flags.c_contiguous and got.dtype == np.complex128
    assert np.array_equal(got, x)
    out = np.zeros(30, dtype=np.complex128)  # any shape with the node's number of elements
    assert rt.read(a, out=out) is out
    assert np.array_equal(out, x.ravel())
    for bad in (np.zeros(29, complex), np.zeros(30, np.float64), np.zeros((5, 6), complex).T):
        with pytest.raises(ValueError):
            rt.read(a, out=bad)
    ro = np.zeros(30, complex)
    ro.setflags(write=False)
    with pytest.raises(ValueError):
        rt.read(a, out=ro)
    assert (rt.budget, rt.streams, rt.backend) == (1 << 20, 4, rt.backend)
    assert "memhc.Runtime(" in repr(rt)


@pytest.mark.parametrize(
    "call",
    [
        lambda: memhc.Runtime(budget=-5),
        lambda: memhc.Runtime(budget=0),
        lambda: memhc.Runtime(budget=1.5),
        lambda: memhc.Runtime(budget="-5"),
        lambda: memhc.Runtime(budget=2**70),
        lambda: memhc.Runtime(streams=0),
        lambda: memhc.Runtime(streams=-1),
        lambda: memhc.Runtime(streams="two"),
        lambda: memhc.Runtime(seed=-1),
        lambda: memhc.Runtime(seed=2**64),
        lambda: memhc.Runtime(backend="tpu"),
        lambda: memhc.Runtime(mode="fast"),
        lambda: memhc.plan_correlators("examples/data/pion.corr.json", vector_size=0),
        lambda: memhc.run_correlators("examples/data/pion.corr.json", streams=-2),
        lambda: memhc.run_correlators("examples/data/pion.corr.json", budget=-1),
    ],
)
def test_bad_constructor_arguments_are_value_errors(call):
    with pytest.raises(ValueError):
        call()


def test_bad_method_arguments_are_value_errors():
    rt = memhc.Runtime(budget="1M")
    a = rt.register(np.ones((16, 2, 2), complex))
    for kwargs in (
        {"stream": -1},
        {"stream": 2**64},
        {"stream": 1.0},
        {"a_split": -1},
        {"b_split": 0},
        {"out_spins": 0, "mapping": [(0, 0, 0)]},
        {"out_spins": -3, "mapping": [(0, 0, 0)]},
        {"mapping": [(-1, 0, 0)]},
        {"mapping": [(0, 0)]},
        {"mapping": [(0, 0, 0.5)]},
        {"mapping": "meson5x5"},
        {"mapping": 7},
    ):
        with pytest.raises(ValueError):
            rt.contract(a, a, **kwargs)
    for pairs in ([(-1, 0)], [(0, 0, 0)], "mesons", 3):
        with pytest.raises(ValueError):
            rt.trace(a, a, pairs)
    with pytest.raises(ValueError):
        rt.trace(a, a, stream=-1)
    with pytest.raises(ValueError):
        rt.run_vector([(a, a)])
    with pytest.raises(ValueError):
        rt.run_vector([(a, "a", "meson4x4")])
    with pytest.raises(ValueError):
        rt.register(np.ones((16, 0, 2), complex))
    with pytest.raises(ValueError):
        rt.register("not numbers")
    with pytest.raises(TypeError):  # the wrong type altogether: not a Node
        rt.contract("a", a)
    rt.audit()  # nothing above changed the runtime
    assert rt.stats()["objects"] == 1


def outcome(code):
    """Runs `code` (with `rt`, a runtime, and `a`, a (16, 2, 2) node) in a fresh interpreter,
    so that an abort cannot take pytest down: the exception's class name and message, or
    'killed by signal N'."""
    prog = (
        "import numpy as np, memhc\n"
        "rt = memhc.Runtime(budget='1M')\n"
        "a = rt.register(np.ones((16, 2, 2), complex))\n"
        "try:\n"
        f"    {code}\n"
        "    print('no exception')\n"
        "except BaseException as e:\n"
        "    print(type(e).__module__ + '.' + type(e).__name__, isinstance(e, memhc.MemhcError),\n"
        "          isinstance(e, ValueError), str(e).replace('\\n', ' '))\n"
        "rt.audit()\n"
    )
    p = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=120)
    if p.returncode < 0:
        return f"killed by signal {-p.returncode}: {p.stderr.strip()[-300:]}"
    return p.stdout.strip() or p.stderr.strip()[-300:]


def test_a_panic_inside_memhc_is_a_memhc_error():
    # Every method runs its body under catch_unwind: a Rust panic (a bug) is MemhcError.
    with pytest.raises(memhc.MemhcError, match="internal error in memhc"):
        memhc._panic_selftest()
    assert issubclass(memhc.MemhcError, RuntimeError)


def test_a_panic_is_a_memhc_error_not_a_panic_exception():
    # Issue 31: an output spin of 2**62 once surfaced as pyo3_runtime.PanicException (not an
    # Exception at all). Whatever the layers below make of it, Python gets MemhcError or
    # ValueError, never a PanicException, and the interpreter survives.
    got = outcome("rt.contract(a, a, [(2**62, 0, 0)])")
    assert not got.startswith("killed"), got
    assert "PanicException" not in got and ("True" in got.split()[1:3]), got


@pytest.mark.parametrize(
    "code, value_error_too",
    [
        # Bytes that fit in 64 bits but in no machine: refused as more than the host memory.
        ("rt.contract(a, a, [(0, 0, 0)], out_spins=2**40)", False),
        ("rt.contract(a, a, [(2**40, 0, 0)])", False),
        # Sizes whose bytes overflow 64 bits: a bad argument (ValueError) or MemhcError.
        ("rt.contract(a, a, [(0, 0, 0)], out_spins=2**62)", True),
    ],
)
def test_huge_sizes_are_refused_with_memhc_error(code, value_error_too):
    # Issue 31: sizes no device holds are refused by the Rust layers (memhc-embed, hadron)
    # with a typed error, which Python raises as MemhcError; never an abort or a panic.
    got = outcome(code)
    assert not got.startswith("killed"), got
    cls, is_memhc, is_value = got.split()[:3]
    assert is_memhc == "True" or (value_error_too and is_value == "True"), got
    assert "PanicException" not in cls and "internal error" not in got, got


def public(names, owner=None):
    keep = {n for n in names if not n.startswith("_")} | ({"__version__"} & set(names))
    if owner is not None:  # not submodules (maturin's package holds the extension as one)
        keep = {n for n in keep if not inspect.ismodule(getattr(owner, n))}
    return keep


def test_stub_and_module_agree():
    stub = ast.parse((ROOT / "python/memhc.pyi").read_text())
    top = {}
    for node in stub.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            top[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            top[node.target.id] = node
    assert public(top) == public(dir(memhc), memhc)
    for name, node in top.items():
        if isinstance(node, ast.ClassDef):
            members = {m.name for m in node.body if isinstance(m, ast.FunctionDef)}
            real = getattr(memhc, name)
            assert public(members) == {m for m in public(dir(real)) if m not in
                                       dir(RuntimeError)} - {"args"}, name


def documented():
    """Every public class, method, property and function with the names of its arguments."""
    out = [(memhc, "memhc", [])]
    for name in ("Runtime", "Node", "HostBuffer", "MemhcError"):
        cls = getattr(memhc, name)
        out.append((cls, name, []))
    for name in ("run_correlators", "plan_correlators", "reference_correlators"):
        f = getattr(memhc, name)
        out.append((f, name, list(inspect.signature(f).parameters)))
    out.append((memhc.Runtime, "Runtime()", list(inspect.signature(memhc.Runtime).parameters)))
    for name in ("register", "alloc_host", "register_host", "take_host", "contract",
                 "run_vector", "trace", "read", "release", "stats", "audit", "synchronize",
                 "budget", "backend", "streams"):
        m = getattr(memhc.Runtime, name)
        params = []
        if callable(m):
            params = [p for p in inspect.signature(m).parameters if p != "self"]
        out.append((m, "Runtime." + name, params))
    out.append((memhc.Node.shape, "Node.shape", []))
    for name in ("shape", "pinned", "registered"):
        out.append((getattr(memhc.HostBuffer, name), "HostBuffer." + name, []))
    out.append((memhc.HostBuffer.__array__, "HostBuffer.__array__", ["dtype", "copy"]))
    return out


def test_help_answers():
    for obj, name, params in documented():
        doc = inspect.getdoc(obj) or ""
        assert len(doc) > 20, f"{name} has no docstring"
        for p in params:
            assert re.search(rf"\b{p}\b", doc), f"{name}: argument {p} not documented"
    rt_doc = inspect.getdoc(memhc.Runtime)
    assert "1 GiB" in rt_doc and "None" in rt_doc and "Raises" in rt_doc
    assert "streams" in rt_doc and "seed" in rt_doc
    assert list(inspect.signature(memhc.Runtime).parameters) == [
        "backend", "budget", "policy", "mode", "streams", "seed", "host_memory"]
    assert inspect.signature(memhc.Runtime).parameters["streams"].default == 4


def test_the_typecheck_script_runs():
    p = subprocess.run([sys.executable, str(ROOT / "python/tests/typecheck.py")], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
