#!/usr/bin/env bash
# Regenerates the text screenshots in this folder from the real binary,
# driven in tmux as a user would: bash screenshots/make.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v tmux >/dev/null || { echo "needs tmux (apt-get install tmux)"; exit 1; }
cargo build --release --quiet --package rankline
bin="$PWD/target/release/rankline"
session=rankline-shots

# shot NAME COLS ROWS KEY... : open the 8-GPU fixture (and $EXTRA, files
# given after it), type the keys, capture.
shot() {
  local name=$1 cols=$2 rows=$3
  shift 3
  tmux kill-session -t "$session" 2>/dev/null || true
  tmux new-session -d -s "$session" -x "$cols" -y "$rows" "$bin --no-cache ${BASE:-fixtures/megatron_tp8.sqlite} ${EXTRA:-}"
  for _ in $(seq 100); do
    screen=$(tmux capture-pane -p -t "$session")
    # Drawn, and the cross-rank analyses (which follow the first frame) done.
    grep -q "${READY:-S20 NCCL}" <<<"$screen" && ! grep -q "matching collectives" <<<"$screen" && break
    sleep 0.1
  done
  sleep 0.3
  for key in "$@"; do
    tmux send-keys -t "$session" -l "$key"
    sleep 0.3
  done
  tmux capture-pane -p -t "$session" > "screenshots/$name.txt"
  tmux kill-session -t "$session"
  echo "screenshots/$name.txt"
}

shot 01-first-view 160 48
shot 02-big-event-skew-launch 160 48 "]" "1" "2"
shot 03-gpu-side-event 160 48 "]" "]" "2" "5"
shot 04-focus-mode 160 48 "]" "F" "1"
shot 05-finder 160 48 "/" "allgather"
shot 06-help 160 48 "?"
shot 07-small-80x24 80 24 "]" "1"
shot 08-overlap-summary 160 48 "j" "j" "j" "j" "j" "j" "j" "j" "3" "4"
shot 09-largest-skews 160 48 "b"
shot 10-launch-alone-80x24 80 24 "]" "2"
EXTRA="no/such/capture.sqlite" shot 11-messages 160 48 "!"
BASE=fixtures/multinode READY=S29 shot 12-multinode 160 48
BASE=fixtures/multinode READY=S29 shot 13-straggler-map 160 48 "H"
# The reference clock across four nodes: a remote node's late kernel
# (the big event on node01, `]`) with its launch, and the visible window's
# overlap of every node's devices.
BASE=fixtures/multinode READY=S29 shot 18-multinode-late-launch 160 48 "]" "2"
BASE=fixtures/multinode READY=S29 shot 19-multinode-overlap-window 160 48 "3"
shot 14-straggler-map-8gpu 160 48 "H"
# Before and after: the slow-GEMM capture against its baseline.
BASE=fixtures/diff/slow_gemm.sqlite EXTRA="--baseline fixtures/megatron_tp8.sqlite" shot 15-diff-panel 160 48 "6"
BASE=fixtures/diff/slow_gemm.sqlite EXTRA="--baseline fixtures/megatron_tp8.sqlite" shot 16-diff-panel-focused-80x24 80 24 "6" "p" "j" "j" "j" "j" "j" "j"
BASE=fixtures/diff/no_big_skew.sqlite EXTRA="--baseline fixtures/megatron_tp8.sqlite" shot 17-baseline-shown 160 48 "B"
# A hung job (issue 20): the first screen says so, W lists who is behind,
# Enter opens the instance the others wait in (the behind rank's lane
# marked), the skew panel and the straggler map name it.
BASE=fixtures/hang READY=S16 shot 20-hang-first-view 160 48
BASE=fixtures/hang READY=S16 shot 21-who-is-behind 160 48 "W"
BASE=fixtures/hang READY=S16 shot 22-hang-divergence-skew 160 48 "W" $'\r' "1"
BASE=fixtures/hang READY=S16 shot 23-hang-straggler-map 160 48 "H"
BASE=fixtures/hang READY=S16 shot 24-who-is-behind-80x24 80 24 "W"
# Per-rank captures starting at different collectives: placed, not lost.
BASE=fixtures/staggered READY=S16 shot 25-staggered-straggler-map 160 48 "H"
# The why, whole (issue 21): seven planted causes; the b list's largest
# cause, the launch panel's account of an off-CPU + OS wait, of an
# event-wait chain, and focus mode with the chain's streams and the late
# thread's CPU rows.
BASE=fixtures/why.sqlite READY=S20 shot 26-why-largest-causes 160 48 "b"
BASE=fixtures/why.sqlite READY=S20 shot 27-why-descheduled 160 48 "]" "]" "]" "2"
BASE=fixtures/why.sqlite READY=S20 shot 28-why-event-wait-chain 160 48 "]" "]" "]" "]" "]" "]" "2"
BASE=fixtures/why.sqlite READY=S20 shot 29-why-focus-chain 160 48 "]" "]" "]" "]" "]" "]" "F"
BASE=fixtures/why.sqlite READY=S20 shot 30-why-on-cpu-80x24 80 24 "]" "]" "]" "]" "2"
# Clocks that can be trusted only so far (issue 22): per-rank captures on
# two hosts aligned by UTC alone; the map draws no step finer than the
# clocks' agreement, the launch panel says how far they agree.
BASE="--align utc fixtures/per_rank" READY=S16 shot 31-straggler-map-utc-only 160 48 "H"
BASE="--align utc fixtures/per_rank" READY=S16 shot 32-launch-across-hosts-utc-only 160 48 "]" "]" "2"
# The numbers people already know (issue 26): the stats view, the NVTX
# table filtered and sorted by count, at 80×24 the columns that give way.
shot 33-stats-view 160 48 "S"
shot 34-stats-nvtx-filtered 160 48 "S" $'\t' $'\t' "/" "a" $'\r' ">"
shot 35-stats-view-80x24 80 24 "S"
# A range (issue 27): marked at the cursor with `,` and `.`, panel 7.
shot 36-range-panel 160 48 "w" "," "d" "d" "d" "d" "."
shot 37-range-panel-80x24 80 24 "w" "," "d" "d" "d" "d" "."
# The NVTX tree (issue 27): T, then Tab to D1's thread (D0 launched nothing).
shot 38-nvtx-tree 160 48 "T" $'\t'
# Filters (issue 27): x three times hides events shorter than 100 µs (the
# title counts what it hides in view); K shows demangled kernel names.
shot 39-filter-100us 160 48 "x" "x" "x"
shot 40-demangled-names 160 48 "K" "]" "5"
# Bytes and bandwidth (issue 28): the AllGather rank 2 came late to, its
# size and algbw/busbw from NCCL's payloads; the details of a SendRecv
# kernel launched by a group of calls; the report's table.
BASE="fixtures/payloads.sqlite --goto s20:2" READY=S20 shot 41-bandwidth-skew-panel 160 48 "1"
BASE="fixtures/payloads.sqlite --goto s20:5" READY=S20 shot 42-message-size-details-80x24 80 24 "5"
# Node events (issue 43): node 3's 30 ms stall holds up the four PP
# exchanges of its ranks at once — one node event, said in the status line,
# the big-event list (HOST ×N, its rows one event) and the straggler map's
# host row (⚑).
BASE="fixtures/jobs/nodes_3d_payloads --goto s21/8:7" READY=S21 shot 43-node-event-status 160 48 "1"
BASE=fixtures/jobs/nodes_3d_payloads READY=S21 shot 44-node-event-big-list 160 48 "b"
BASE="fixtures/jobs/nodes_3d_payloads --goto s21/8:7" READY=S21 shot 45-node-event-straggler-map 160 48 "H"
BASE="fixtures/jobs/nodes_3d_payloads --goto s21/8:7" READY=S21 shot 46-node-event-80x24 80 24 "1"
# The steps view (issue 47): each step × rank, the path, what to fix first.
BASE=fixtures/jobs/3d_dedicated.sqlite READY="S7 compute" shot 47-steps-view 160 48 "P" "d" "d" "d"
BASE=fixtures/jobs/3d_dedicated.sqlite READY="S7 compute" shot 48-steps-path-on-timeline 160 48 "P" "d" "d" "d" $'\r' "n" "n"
BASE=fixtures/jobs/throttled.sqlite READY="S7 compute" shot 49-steps-slowdown-80x24 80 24 "P" $'\t' $'\t' $'\t' $'\t'
