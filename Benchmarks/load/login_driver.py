"""What the load benchmark's login drivers (phone_logins.py,
passkey_logins.py) share: threads that each run whole logins on their own
connection until the time is up, and a summary in the part of wrk's format
that Benchmarks/load/run reads, one "request" being one whole login."""
import http.client
import threading
import time
import urllib.parse


def drive(base, seconds, threads, login):
    """Runs `login(worker, connection, sequence) -> bool` (True when the
    login got its token) on `threads` threads for `seconds`; prints the summary."""
    target = urllib.parse.urlparse(base)
    latencies, failures = [], [0]
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def run(worker):
        connection = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
        sequence = 0
        while time.monotonic() < deadline:
            sequence += 1
            started = time.monotonic()
            ok = login(worker, connection, sequence)
            elapsed = time.monotonic() - started
            with lock:
                latencies.append(elapsed)
                if not ok:
                    failures[0] += 1

    started = time.monotonic()
    workers = [threading.Thread(target=run, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    elapsed = time.monotonic() - started

    latencies.sort()

    def percentile(p):
        return latencies[min(len(latencies) - 1, int(p / 100 * len(latencies)))] * 1000 if latencies else float("nan")

    print(f"    Latency   {percentile(50):.2f}ms   0.00ms  {max(latencies, default=0) * 1000:.2f}ms")
    print(f"     50%   {percentile(50):.2f}ms")
    print(f"     99%   {percentile(99):.2f}ms")
    print(f"  {len(latencies)} requests in {elapsed:.2f}s")
    if failures[0]:
        print(f"  Non-2xx or 3xx responses: {failures[0]}")
    print(f"Requests/sec: {len(latencies) / elapsed:.2f}")
