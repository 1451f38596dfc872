"""Where a server's threads stopped running, a request: SWITCHES=1 of Benchmarks/load/run.

Reads `perf script -F comm,tid,event,ip,sym` of `sched:sched_switch` events
recorded with call graphs (-g) on the server during a scenario, and prints
the switches a request by kind of thread (its name without the number:
NIO's event loops, Swift's pool, the signing threads, Dispatch's threads)
and by why it stopped:

- blocked: it waited for something (a futex, epoll): each one is later
  a wake-up that another thread paid for;
- preempted: the kernel took the core for another runnable thread.

Then the places in the code where they stopped most, the first frame
outside the kernel, libc's waits and Dispatch's own.

    python3 switches.py SCRIPT_OUTPUT REQUESTS_PER_SECOND SECONDS
"""
import collections
import re
import subprocess
import sys

path, rate, seconds = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
per_request = 1 / max(rate * seconds, 1)
by_kind = collections.Counter()
by_place = collections.Counter()
switches = 0
thread, frames = None, []
# perf keeps 15 characters of a thread's name; Dispatch's are longer.
names = {
    "oot.default-qos": "Swift's pool",
    "-qos.overcommit": "Dispatch overcommit",
    "NIO-SGLTN": "NIO event loops",
    "NIO-ELT": "NIO event loops",
    "token-signer": "signing threads",
}
waits = ("[unknown]", "syscall", "__", "sem_", "pthread", "epoll", "futex", "_dispatch", "dispatch")


def flush():
    global switches
    if thread is None:
        return
    switches += 1
    short = re.sub(r"[-#0-9]+$", "", thread)
    kind = names.get(short, short)
    kernel = [symbol for address, symbol in frames if address.startswith("ffffffff")]
    user = [symbol for address, symbol in frames if not address.startswith("ffffffff")]
    # Taken off the core on its way back to user space (an interrupt, a wake-up's IPI) rather than by a wait of its own.
    why = "preempted" if any(s.startswith(("irqentry", "exit_to_user_mode_loop")) for s in kernel) else "blocked"
    place = next((s for s in user if not s.startswith(waits)), user[0] if user else "?")
    by_kind[(kind, why)] += 1
    by_place[(kind, why, place)] += 1


for line in open(path, errors="replace"):
    if line.startswith("\t"):
        parts = line.split(None, 1)
        if len(parts) == 2:
            frames.append((parts[0], parts[1].strip()))
    elif "sched:sched_switch" in line:
        flush()
        # "<thread name, may hold spaces> <tid> sched:sched_switch:"
        thread = line.split(" sched:sched_switch")[0].rsplit(None, 1)[0].strip()
        frames = []
flush()

print(f"context switches a request: {switches * per_request:.2f}")
for (kind, why), count in by_kind.most_common():
    print(f"  {count * per_request:6.3f}  {kind:20} {why}")
top = by_place.most_common(15)
names = subprocess.run(
    ["swift", "demangle", "--simplified"], input="\n".join(place for (_, _, place), _ in top),
    capture_output=True, text=True).stdout.split("\n")
print("where they stopped:")
for ((kind, why, _), count), name in zip(top, names):
    print(f"  {count * per_request:6.3f}  {kind:20} {why:9}  {name[:110]}")
