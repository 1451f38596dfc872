"""cbor2's reading of CBOR inputs, for the passkey plugin's strict reader to
be held to. Prints a JSON list of cases, each {"hex", "cbor2", "strict"}:
cbor2's decoded value described as the test describes its own (null when
cbor2 refuses the input), and whether the strict reader must take it (true:
canonical cbor2 output, so it must read the same value; false: a form it
refuses by design, although cbor2 may read it; null: a random mutation,
where a reading of ours must be cbor2's).
Usage: cbor_judge.py SEED COUNT"""
import json
import random
import struct
import sys

import cbor2

seed, count = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(seed)


def describe(value):
    if isinstance(value, bool):
        return {"bool": "true" if value else "false"}
    if value is None:
        return {"null": ""}
    if isinstance(value, int):
        return {"i": str(value)}
    if isinstance(value, bytes):
        return {"b": value.hex()}
    if isinstance(value, str):
        return {"t": value.encode().hex()}
    if isinstance(value, list):
        return {"a": [describe(item) for item in value]}
    if isinstance(value, dict):
        return {"m": [[describe(key), describe(item)] for key, item in value.items()]}
    return {"other": type(value).__name__}


def integer():
    edge = rng.choice([0, 23, 24, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**64 - 1])
    value = rng.choice([edge, rng.randrange(0, 2**rng.choice([5, 8, 16, 32, 64]))])
    return value if rng.random() < 0.6 else -1 - value


def text():
    alphabet = "abc-xyz_09 é€😀\u0000\u007f"
    return "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 30)))


def value(depth=0):
    kinds = ["int", "bytes", "text", "bool", "null"] + (["array", "map"] * 2 if depth < 4 else [])
    kind = rng.choice(kinds)
    if kind == "int":
        return integer()
    if kind == "bytes":
        return bytes(rng.randrange(256) for _ in range(rng.choice([0, 1, 23, 24, 32, 65, 300])))
    if kind == "text":
        return text()
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "array":
        return [value(depth + 1) for _ in range(rng.randrange(0, 6))]
    members = {}
    for _ in range(rng.randrange(0, 6)):
        members[integer() if rng.random() < 0.5 else text()] = value(depth + 1)
    return members


def head(major, argument, width):
    """An initial byte and argument written with `width` bytes (0: in the initial byte)."""
    info = {0: argument, 1: 24, 2: 25, 4: 26, 8: 27}[width]
    packed = b"" if width == 0 else argument.to_bytes(width, "big")
    return bytes([major << 5 | info]) + packed


def case(data, strict):
    try:
        decoded = describe(cbor2.loads(data))
    except Exception:
        decoded = None
    return {"hex": data.hex(), "cbor2": decoded, "strict": strict}


cases = []
for _ in range(count):
    item = value()
    data = cbor2.dumps(item, canonical=True)
    cases.append(case(data, True))
    # A random mutation: a byte changed, or the input cut short.
    mutated = bytearray(data)
    if mutated and rng.random() < 0.5:
        mutated[rng.randrange(len(mutated))] = rng.randrange(256)
    elif mutated:
        mutated = mutated[:rng.randrange(len(mutated))]
    cases.append(case(bytes(mutated), None))

# Forms the strict reader refuses by design, though cbor2 reads most of them.
small = rng.randrange(0, 24)
cases += [
    case(head(0, small, 1), False),                     # a small integer in a byte of its own
    case(head(0, 200, 2), False),                       # in two bytes
    case(head(1, 70000, 8), False),                     # a negative integer in eight
    case(head(2, 3, 1) + b"abc", False),                # a length not in its shortest form
    case(b"\x9f\x01\x02\xff", False),                   # an indefinite-length array
    case(b"\x5f\x41\x61\xff", False),                   # indefinite-length bytes
    case(b"\xa2\x01\x02\x01\x03", False),               # a map key twice
    case(b"\xa2\x61a\x01\x61a\x02", False),             # a text key twice
    case(b"\xa1\x41k\x01", False),                      # a byte-string key
    case(b"\xa1\x80\x01", False),                       # an array key
    case(b"\xc1\x1a\x51\x4b\x67\xb0", False),           # a tag (epoch time)
    case(b"\xfb" + struct.pack(">d", 1.5), False),      # a float
    case(b"\xf9\x3c\x00", False),                       # a half-precision float
    case(b"\xf7", False),                               # undefined
    case(b"\xf0", False),                               # an unassigned simple value
    case(b"\x1c", False),                               # reserved additional information
    case(b"\x62\xc3\x28", False),                       # text that is not UTF-8
    case(b"\x81" * 20 + b"\x00", False),                # arrays twenty deep
    case(b"\x01\x02", False),                           # an item and a stray byte
    case(b"\x9b" + (2**63).to_bytes(8, "big"), False),  # an array longer than any input
    case(b"", False),                                   # nothing
]
print(json.dumps(cases))
