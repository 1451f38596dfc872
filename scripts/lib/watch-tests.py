#!/usr/bin/env python3
"""Runs the test command given as arguments and passes its output through.

A test that never ends must fail the run, saying what was still running,
instead of holding CI until its own limit ends it with nothing to read. Past
GATEWAY_TEST_TIME_LIMIT seconds (1200 unless set; a full run takes about 6
minutes on two cores), this prints:
  - the suites and tests that started and did not end (from Swift Testing's
    "started" and "passed"/"failed" lines),
  - every thread's backtrace in the test process (gdb, names demangled),
  - the test cluster's busy sessions and the locks they wait for (psql),
then kills every process under it.

A run that hung, or whose test process crashed (a signal, not a failed
expectation), is run once more, whole, and the second run's result is the
answer; a banner before the second run and a line at the very end say that
the first one broke and how, so it is read, not lost. Set
GATEWAY_TEST_RETRY_BROKEN_RUN=0 to answer with the first run (124 for a
hang, as timeout(1) does). A test that fails an expectation is never run
again.

The tests get no standard input: a test that read it would wait on whatever
CI left there.
"""

import collections
import os
import re
import signal
import subprocess
import sys
import threading
import time

CRASHED = re.compile(r"\*\*\* Program crashed|exited with unexpected signal code")
STARTED = re.compile(r"^\S+ (Suite|Test) (.+?) started\.$")
ENDED = re.compile(r"^\S+ (Suite|Test) (.+?) (?:with \d+ test cases? )?(?:passed|failed) after ")


class Progress:
    """Suites and tests started and not yet ended, counted by name (names repeat across suites)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.running = collections.Counter()
        self.started_at = {}
        self.crashed = False

    def read(self, line):
        if CRASHED.search(line):
            self.crashed = True
        started = STARTED.match(line)
        ended = ENDED.match(line)
        if any(match and match.group(2).startswith("case passing") for match in (started, ended)):
            return  # one argument of a parameterized test: the test itself is counted
        if started and started.group(2) == "run":
            return  # the whole run
        with self.lock:
            if started:
                key = (started.group(1), started.group(2))
                self.running[key] += 1
                self.started_at.setdefault(key, time.monotonic())
            elif ended:
                key = (ended.group(1), ended.group(2))
                if self.running[key] > 0:
                    self.running[key] -= 1
                if self.running[key] == 0:
                    self.started_at.pop(key, None)

    def unfinished(self):
        with self.lock:
            now = time.monotonic()
            return sorted(
                ((kind, name, count, now - self.started_at.get((kind, name), now))
                 for (kind, name), count in self.running.items() if count > 0),
                key=lambda item: -item[3])


def pass_through(stream, progress):
    for raw in iter(stream.readline, b""):
        sys.stdout.buffer.write(raw)
        sys.stdout.buffer.flush()
        progress.read(raw.decode("utf-8", "replace").rstrip("\n"))


def descendants(root):
    """Every process under `root`, from /proc."""
    children = collections.defaultdict(list)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children[parent].append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def command_line(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return ""


def report(root, progress, limit):
    say = lambda text: print(text, flush=True)
    say(f"\n=== the tests did not end within {limit} s (GATEWAY_TEST_TIME_LIMIT) ===")
    say("Started and not ended (longest first):")
    for kind, name, count, seconds in progress.unfinished():
        times = f" x{count}" if count > 1 else ""
        say(f"  {kind} {name}{times}, running {seconds:.0f} s")
    test_processes = [pid for pid in descendants(root) if ".xctest" in command_line(pid)]
    for pid in test_processes:
        say(f"\n=== threads of {pid}: {command_line(pid)[:200]} ===")
        try:
            dump = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt 40"],
                                  capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
            demangled = subprocess.run(["swift", "demangle", "--simplified"], input=dump.stdout,
                                       capture_output=True, text=True, timeout=60)
            say((demangled.stdout or dump.stdout)[-300_000:] + dump.stderr[-2_000:])
        except (OSError, subprocess.TimeoutExpired) as error:
            say(f"(no backtrace: {error})")
    url = os.environ.get("GATEWAY_TEST_DATABASE_URL")
    if url:
        say("\n=== the test cluster's busy sessions ===")
        query = (
            "SELECT pid, datname, state, wait_event_type, wait_event, "
            "round(extract(epoch FROM now() - query_start)) AS seconds, pg_blocking_pids(pid) AS blocked_by, "
            "left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS query "
            "FROM pg_stat_activity WHERE backend_type = 'client backend' AND state <> 'idle' AND pid <> pg_backend_pid() "
            "ORDER BY query_start")
        try:
            busy = subprocess.run(["psql", url, "-X", "-c", query], capture_output=True, text=True, timeout=30,
                                  stdin=subprocess.DEVNULL)
            say(busy.stdout + busy.stderr)
        except (OSError, subprocess.TimeoutExpired) as error:
            say(f"(no sessions: {error})")


def end_tree(root):
    """Kills `root` and every process under it: `swift test` starts the test
    process in a process group of its own, and that one its servers and helpers."""
    for pid in descendants(root):
        for kill in (lambda: os.killpg(os.getpgid(pid), signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
            try:
                kill()
            except OSError:
                pass


def run_once(command, limit):
    """Runs the tests once; their exit code, and how the run broke ("hung", "crashed") or None."""
    child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, start_new_session=True)
    progress = Progress()
    reader = threading.Thread(target=pass_through, args=(child.stdout, progress), daemon=True)
    reader.start()
    try:
        code = child.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        report(child.pid, progress, limit)
        end_tree(child.pid)
        child.wait()
        reader.join(timeout=5)
        return 124, "hung"
    reader.join()
    code = code if code >= 0 else 128 - code  # ended by a signal: as a shell reports it
    return code, ("crashed" if code != 0 and progress.crashed else None)


def main():
    limit = int(os.environ.get("GATEWAY_TEST_TIME_LIMIT", "1200"))
    command = sys.argv[1:]
    code, broke = run_once(command, limit)
    if broke is None or os.environ.get("GATEWAY_TEST_RETRY_BROKEN_RUN", "1") == "0":
        return code
    print(f"\n=== THE TEST RUN {broke.upper()} (its report is above): running every test once more ===\n", flush=True)
    code, broke_again = run_once(command, limit)
    outcome = "passed" if code == 0 else (broke_again or "failed")
    print(f"\n=== NOTE: the first test run {broke} (report above); this result ({outcome}) is the second run's ===",
          flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
