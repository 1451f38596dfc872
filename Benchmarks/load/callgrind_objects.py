"""Instructions a request by ELF object, from one callgrind output file.

INSTRUCTIONS=1 of Benchmarks/load/run zeroes a server's counters after the
warm-up and dumps them after the measured load; this reads that dump and
divides by the requests served in between. Each cost line counts for the
object of the function it belongs to (self cost); the line after a
`calls=` line is a callee's inclusive cost and is skipped, so nothing is
counted twice. Objects whose path matches the signing pattern are the
server's signing library (the gateway's libcrypto, the peer's
cryptography, which carries its own OpenSSL).

    callgrind_objects.py FILE REQUESTS SIGNING_REGEX

Prints "total signing beside" (millions of instructions a request) on the
first line, then the ten costliest objects.
"""
import collections
import re
import sys


def self_cost_by_object(lines):
    names = {}

    def name(kind, value):
        # Names are compressed: "(7) /usr/lib/libc.so.6" the first time, "(7)" after.
        match = re.match(r"\((\d+)\)(?: (.*))?$", value)
        if not match:
            return value
        if match.group(2) is not None:
            names[kind, match.group(1)] = match.group(2)
        return names.get((kind, match.group(1)), value)

    costs = collections.Counter()
    current = "???"
    after_call = False
    for line in lines:
        line = line.rstrip("\n")
        key, _, value = line.partition("=")
        if key == "ob":
            current = name("ob", value)
        elif key in ("cob", "cfob"):
            name("ob", value)
        elif key == "calls":
            after_call = True
        elif line[:1].isdigit() or line[:1] in "+-*":
            if after_call:
                after_call = False
            else:
                fields = line.split()
                if len(fields) >= 2:
                    costs[current] += int(fields[1])
    return costs


def main():
    path, requests, signing = sys.argv[1], max(float(sys.argv[2]), 1), re.compile(sys.argv[3])
    with open(path, errors="replace") as file:
        costs = self_cost_by_object(file)
    total = sum(costs.values()) / requests / 1e6
    signing_cost = sum(cost for name, cost in costs.items() if signing.search(name)) / requests / 1e6
    print(f"{total:.3f} {signing_cost:.3f} {total - signing_cost:.3f}")
    for name, cost in costs.most_common(10):
        print(f"  {cost / requests / 1e6:8.3f} M  {name}")


if __name__ == "__main__":
    main()
