#!/bin/sh
# cc551b0 with mimalloc asked for large OS pages (transparent huge pages where madvise allows)
MIMALLOC_ALLOW_LARGE_OS_PAGES=1 exec /work/hot-bins/overhead-bench-cc551b0 "$@"
