#!/usr/bin/env bash
# toolprof.sh STAMP: CPU flame graphs (async-profiler loaded at JVM start, all threads incl. JIT compilers) of
# each load tool's whole JVM for one 1 GiB produce of 1 KiB records (acks=1, batch 1 MiB, linger 5 ms), each
# against its own fresh broker after a 1024 MB warm-up, page cache filled first. Writes profiles/STAMP-{stellflow,kafka}-producer-tool-1KiB-1GiB-cpu.html
set -uo pipefail
S=$1
AP=~/.cache/stellflow/async-profiler-4.2/libasyncProfiler.so
fill() { rm -f /tmp/exp/fill/fill; local f=$(( $(awk '/^MemFree:/ {print $2}' /proc/meminfo) / 1024 )); dd if=/dev/zero of=/tmp/exp/fill/fill bs=1M count=$((f-3072)) conv=fsync status=none; }
fill
cd /tmp/exp && PROF= TOPTS="-agentpath:$AP=start,event=cpu,interval=1ms,threads,file=/work/main/profiles/$S-stellflow-producer-tool-1KiB-1GiB-cpu.html" ROUNDS=1 ./tprof.sh
fill
cd /tmp/exp && TRAIN=" " KROUNDS=1 ./kafka2.sh "prof=-agentpath:$AP=start,event=cpu,interval=1ms,threads,file=/work/main/profiles/$S-kafka-producer-tool-1KiB-1GiB-cpu.html"
rm -f /tmp/exp/fill/fill
