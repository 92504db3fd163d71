#!/bin/bash
# runci.sh DIR LOG: runs DIR/.ci/run with uptime samples every 30 s
dir=$1 log=$2
unset CARGO_TARGET_DIR
( while sleep 30; do echo "$(date -u +%H:%M:%S) $(uptime)"; done ) > "$log.uptime" &
up=$!
cd "$dir"
echo "start $(date -u) commit $(git rev-parse HEAD)" > "$log"
/usr/bin/time -v bash ${CIRUN:-.ci/run} >> "$log" 2>&1
rc=$?
echo "exit $rc end $(date -u)" >> "$log"
kill $up
