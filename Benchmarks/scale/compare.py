"""Prints the scale benchmark's table: each scenario empty and full, and the
ratios its targets are stated in (docs/performance.md, "Cost as the work grows").

    compare.py EMPTY_SUMMARY_JSON FULL_SUMMARY_JSON
"""
import json
import sys

empty, full = json.loads(sys.argv[1]), json.loads(sys.argv[2])
seeded = full.get("seeded")
if empty.get("seeded"):
    print(f"empty: the benchmark's apps and the seeding at scale {empty['seeded']['scale']}")
if seeded:
    print(f"seeded at scale {seeded['scale']} in {seeded['seconds']:.0f} s; database {seeded['database_bytes'] / 2**30:.1f} GiB")
print("| scenario | empty /s | full /s | full ÷ empty | p99 empty | p99 full | p99 ratio | gateway CPU ms empty → full | PostgreSQL CPU ms empty → full |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for name, before in empty.items():
    after = full.get(name)
    if not isinstance(before, dict) or not isinstance(after, dict) or "requests_per_s" not in before:
        continue
    rate = after["requests_per_s"] / before["requests_per_s"]
    p99 = after["p99_ms"] / before["p99_ms"]
    print(f"| {name} | {before['requests_per_s']:.0f} | {after['requests_per_s']:.0f} | {rate:.2f} | {before['p99_ms']:.1f} ms "
          f"| {after['p99_ms']:.1f} ms | {p99:.2f} | {before['gateway_cpu_ms_per_request']:.2f} → {after['gateway_cpu_ms_per_request']:.2f} "
          f"| {before['postgres_cpu_ms_per_request']:.2f} → {after['postgres_cpu_ms_per_request']:.2f} |")
