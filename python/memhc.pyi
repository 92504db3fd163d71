"""Type stubs of the memhc module (crates/memhc-py); the docstrings are in the module itself.

Kept in step with crates/memhc-py/src/module/; CI type-checks python/tests/typecheck.py
against it with mypy --strict, and python/tests/test_memhc.py checks that every public name
here exists in the module and the other way round.
"""

import os
from typing import Literal, Optional, Union

import numpy as np
import numpy.typing as npt

__version__: str

_Budget = Union[int, str, None]
_Mapping = Union[str, list[tuple[int, int, int]], None]
_Pairs = Union[str, list[tuple[int, int]], None]
_PathLike = Union[str, "os.PathLike[str]"]
_Correlators = dict[str, tuple[npt.NDArray[np.int64], npt.NDArray[np.complex128]]]

class MemhcError(RuntimeError):
    """A memhc failure that is not a bad argument (see the module documentation)."""

class Node:
    """A hadron node of one Runtime: a handle, not the data."""

    @property
    def shape(self) -> tuple[int, ...]: ...

class HostBuffer:
    """A node's values in the backend's host memory, as numpy sees it without a copy."""

    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def pinned(self) -> bool: ...
    @property
    def registered(self) -> bool: ...
    def __array__(
        self, dtype: Optional[npt.DTypeLike] = None, copy: Optional[bool] = None
    ) -> npt.NDArray[np.complex128]: ...

class Runtime:
    """A memhc runtime: one device budget on one backend, with its nodes."""

    def __init__(
        self,
        backend: str = "host",
        budget: _Budget = None,
        policy: str = "lru",
        mode: str = "optimal",
        streams: int = 4,
        seed: int = 0,
        host_memory: Literal["pageable", "pinned"] = "pageable",
    ) -> None: ...
    def register(self, array: npt.ArrayLike) -> Node: ...
    def alloc_host(self, shape: tuple[int, ...]) -> HostBuffer: ...
    def register_host(self, buffer: HostBuffer) -> Node: ...
    def take_host(self, node: Node) -> HostBuffer: ...
    def contract(
        self,
        a: Node,
        b: Node,
        mapping: _Mapping = "meson4x4",
        out_spins: Optional[int] = None,
        stream: int = 0,
        a_split: int = 1,
        b_split: int = 1,
    ) -> Node: ...
    def run_vector(self, vector: list[tuple[Node, Node, _Mapping]]) -> list[Node]: ...
    def trace(self, a: Node, b: Node, pairs: _Pairs = "meson4x4", stream: int = 0) -> complex: ...
    def read(
        self, node: Node, out: Optional[npt.NDArray[np.complex128]] = None
    ) -> npt.NDArray[np.complex128]: ...
    def release(self, node: Node) -> None: ...
    def stats(self) -> dict[str, Union[int, float]]: ...
    def audit(self) -> None: ...
    def synchronize(self) -> None: ...
    @property
    def budget(self) -> int: ...
    @property
    def backend(self) -> str: ...
    @property
    def streams(self) -> int: ...

def run_correlators(
    path: _PathLike,
    backend: str = "host",
    budget: _Budget = None,
    policy: str = "lru",
    mode: str = "optimal",
    streams: int = 4,
    sharing: bool = True,
    *,
    file_order: bool = False,
    vector_size: int = 16,
    seed: int = 0,
    out: Optional[_PathLike] = None,
    host_memory: Literal["pageable", "pinned"] = "pageable",
    prefetch: Optional[int] = None,
) -> _Correlators: ...
def plan_correlators(
    path: _PathLike,
    sharing: bool = True,
    file_order: bool = False,
    vector_size: int = 16,
) -> dict[str, Union[int, float, bool, Literal["planned", "file"]]]: ...
def reference_correlators(path: _PathLike) -> _Correlators: ...
