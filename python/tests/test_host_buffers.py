"""Page-locked host buffers from Python: filled in place, registered and taken without a copy,
checked against numpy's einsum; and their lifetimes: no array ever outlives the memory it
views, and no memory is handed to the runtime while an array views it."""

import gc

import numpy as np
import pytest

import memhc


def meson(rng, n):
    return rng.standard_normal((16, n, n)) + 1j * rng.standard_normal((16, n, n))


def meson4x4(x, y):
    """out(al, ga) = sum_be x(al, be) @ y(be, ga), spins s = 4 al + be, by einsum."""
    n = x.shape[-1]
    return np.einsum("abij,bcjk->acik", x.reshape(4, 4, n, n),
                     y.reshape(4, 4, n, n)).reshape(16, n, n)


def close(got, want):
    return np.linalg.norm(got - want) <= 1e-12 * np.linalg.norm(want)


def filled(rt, values):
    """A host buffer of `values`' shape, written in place through a numpy view."""
    buf = rt.alloc_host(values.shape)
    view = np.asarray(buf)
    assert view.dtype == np.complex128 and view.shape == values.shape
    assert view.flags.c_contiguous and view.flags.writeable
    view[...] = values
    del view
    return buf


@pytest.mark.parametrize("host_memory", ["pageable", "pinned"])
def test_filled_in_place_and_taken_without_a_copy_match_numpy(host_memory):
    rng = np.random.default_rng(7)
    x, y = meson(rng, 6), meson(rng, 6)
    rt = memhc.Runtime(backend="host", budget="64M", host_memory=host_memory)
    bx, by = filled(rt, x), filled(rt, y)
    assert bx.shape == (16, 6, 6) and bx.pinned and not bx.registered
    a, b = rt.register_host(bx), rt.register_host(by)
    assert bx.registered and a.shape == (16, 6, 6)
    # The registered values are the caller's.
    assert np.array_equal(rt.read(a), x)
    out = rt.contract(a, b)
    r = rt.take_host(out)
    assert r.pinned == (host_memory == "pinned") and r.shape == (16, 6, 6)
    with pytest.raises(memhc.MemhcError):
        rt.read(out)  # taken: the node is released
    result = np.asarray(r)
    assert close(result, meson4x4(x, y))
    # A copy is a copy; the view is the memory itself.
    copied = np.array(r, copy=True)
    copied[0, 0, 0] = 99
    assert np.asarray(r)[0, 0, 0] == result[0, 0, 0] != 99
    rt.audit()
    # The view keeps the memory alive after the buffer and the runtime are gone.
    want = meson4x4(x, y)
    del r, rt
    gc.collect()
    assert close(result, want)
    result[...] = 0  # still writable memory of its own
    assert not result.any()


def test_a_taken_result_registers_again_as_an_input():
    rng = np.random.default_rng(8)
    x = meson(rng, 4)
    rt = memhc.Runtime(backend="host", budget="64M", host_memory="pinned")
    a = rt.register_host(filled(rt, x))
    r = rt.take_host(rt.contract(a, a))
    view = np.asarray(r)
    view *= 2  # changed in place, then handed back
    del view
    twice = rt.read(rt.contract(rt.register_host(r), a))
    assert close(twice, meson4x4(2 * meson4x4(x, x), x))


def test_no_memory_is_handed_over_while_an_array_views_it():
    rt = memhc.Runtime(backend="host", budget="16M")
    buf = rt.alloc_host((1, 3, 3))
    view = np.asarray(buf)
    view[...] = 1
    part = view[1:, ::2]  # a view of the view keeps the memory too
    del view
    with pytest.raises(BufferError, match="still view"):
        rt.register_host(buf)
    del part
    gc.collect()
    node = rt.register_host(buf)
    assert buf.registered and "registered" in repr(buf)
    with pytest.raises(BufferError, match="registered"):
        np.asarray(buf)
    with pytest.raises(BufferError, match="registered"):
        rt.register_host(buf)
    assert np.array_equal(rt.read(node), np.ones((1, 3, 3)))
    rt.audit()


def test_misuse_raises_the_usual_exceptions():
    rt = memhc.Runtime(backend="host", budget="16M")
    other = memhc.Runtime(backend="host", budget="16M")
    with pytest.raises(ValueError, match="another runtime"):
        rt.register_host(other.alloc_host((1, 2)))
    for bad in [(), (16,), (0, 2), (1, 0), (1, -2), (1, 2.5), (1,) + (2,) * 9]:
        with pytest.raises(ValueError):
            rt.alloc_host(bad)
    with pytest.raises((ValueError, memhc.MemhcError)):
        rt.alloc_host((16, 1 << 21, 1 << 21, 1 << 21))
    with pytest.raises(ValueError, match="another runtime"):
        rt.take_host(other.register(np.ones((1, 2))))
    with pytest.raises(ValueError, match="unknown host memory"):
        memhc.Runtime(host_memory="locked")
    with pytest.raises(ValueError, match="unified"):
        memhc.Runtime(mode="unified", host_memory="pinned")
    n = rt.register(np.ones((1, 2)))
    rt.take_host(n)
    with pytest.raises(memhc.MemhcError):
        rt.take_host(n)
    assert rt.stats()["objects"] == 0


def test_the_readme_example_runs():
    from pathlib import Path
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme[readme.index("## Page-locked buffers from Rust, C and Python"):]
    start = section.index("```python\n") + len("```python\n")
    block = section[start:section.index("```", start)]
    assert "register_host" in block and "take_host" in block
    exec(compile(block, "README.md", "exec"), {})
