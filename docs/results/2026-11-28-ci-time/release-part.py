#!/usr/bin/env python3
"""Writes .ci/run-release-part from .ci/run: the same script without the sections from rustfmt
to HDF5 and MPI (they build nothing in release), for measuring the release sections (first hour,
C and C++, the HDF5 static link, Python) on a fresh clone of their own. Run in the clone's root."""
s = open(".ci/run").read()
a = s.index('section "rustfmt"')
b = s.index("# " + "-" * 93 + "\n# Embedding")
s = s[:a] + "# (release-only measurement: the sections from rustfmt to HDF5 and MPI are left out)\n" + s[b:]
t = 'TARGET="${CARGO_TARGET_DIR:-$PWD/target}"\n'
s = s.replace(t, t + 'mkdir -p "$TARGET"\n', 1)
open(".ci/run-release-part", "w").write(s)
