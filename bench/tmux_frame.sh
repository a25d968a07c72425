# Sourced by bench/run.sh and bench/first_frame.sh: one TUI start in tmux, timed by the binary.
#
# first_frame SESSION LOG COMMAND: runs COMMAND in a detached tmux pane (120×40) named SESSION,
# waits for a new "first frame drawn ms_since_start=…" line in LOG (pith's log file), quits pith
# with two Ctrl+C and prints that line. Fails (status 1) if no new frame was logged.
first_frame() {
    local session=$1 log=$2 cmd=$3 seen
    seen=$(grep -c "first frame drawn" "$log" 2>/dev/null || true)
    tmux new-session -d -s "$session" -x 120 -y 40 "$cmd"
    for _ in $(seq 400); do
        [[ $(grep -c "first frame drawn" "$log" 2>/dev/null || true) -gt ${seen:-0} ]] && break
        sleep 0.025
    done
    tmux send-keys -t "$session" C-c C-c 2>/dev/null || true
    for _ in $(seq 200); do tmux has-session -t "$session" 2>/dev/null || break; sleep 0.025; done
    tmux kill-session -t "$session" 2>/dev/null || true
    [[ $(grep -c "first frame drawn" "$log" 2>/dev/null || true) -gt ${seen:-0} ]] || return 1
    grep "first frame drawn" "$log" | tail -1
}

# The milliseconds of a "first frame drawn" line.
frame_ms() { sed -E 's/.*ms_since_start=([0-9.]+).*/\1/' <<<"$1"; }
