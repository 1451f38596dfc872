#!/usr/bin/env python3
"""CPU a request by piece, from the load script's perf profile.

Usage: profile_pieces.py REPORT CPU_MS_PER_REQUEST

REPORT is `perf report --no-children --sort dso,symbol --stdio` of the
server under load (Benchmarks/load/run with PROFILE=1 writes it to
.build/load-profile-SCENARIO.txt); CPU_MS_PER_REQUEST is the server's CPU a
request in the same run. Each sample's own function (not its callers) goes
to one piece: by the library it is in, and in the server's binary by the
module and type its demangled name names (a generic specialised for the
gateway counts where its code comes from: Hummingbird's router specialised
for the gateway's context is Hummingbird's). Prints microseconds a request
by piece, most first. Sampled, not counted: pieces under about 1 % of the
samples move from run to run.
"""

import collections
import re
import subprocess
import sys

LINE = re.compile(r"^\s+([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(.*?)\s*$")

# The gateway's own code, by the type a function belongs to (first match wins).
GATEWAY_PIECES = [
    ("gateway: middlewares (request id, client address, metrics, access log, errors, 405)",
     r"RequestIDMiddleware|ClientAddressMiddleware|RequestMetricsMiddleware|AccessLogMiddleware|ErrorMiddleware"
     r"|MethodNotAllowedMiddleware|StrictTransportSecurityMiddleware|ServerSpanMiddleware|RequestID\b"),
    ("gateway: under the HTTP/1 codec (body-rate guard, version handling)",
     r"RequestBodyRateGuard|HTTP1HandlersInstaller|HTTPVersion"),
    ("gateway: reading the request (strict JSON, app id)",
     r"TokenRequestFields|StrictJSON|JSONReader|FormBody|RequestBody|LayerIdentifier|TokenRequest\b"),
    ("gateway: tenant lookup", r"TenantCache|\bTenant\b"),
    ("gateway: minting (claims, JSON, base64url)",
     r"Minter|LayerToken|IdentityToken\b|TokenClaims|JSONObjectWriter|Base64URL|JWTHeader|TokenGrant"),
    ("gateway: the hop to the signing threads", r"SigningThreads"),
    ("gateway: signer wrapper", r"OpenSSLSigner|OpenSSLRS256Signer|RS256Signer"),
    ("gateway: request flow (controller, issuer, gate, answer)",
     r"IdentityTokenController|TokenIssuer|PublicRequest|RateLimit|Ledger|TokenAnswer|GatewayError|AuditEvent|Floor"),
]

LIBRARY_MODULES = [
    ("SwiftNIO (event loops, channels, HTTP/1 codec, buffers)", r"^_?C?NIO|^_NIO|^llhttp|^c_nio"),
    ("Hummingbird (server, router, request, response)", r"^Hummingbird|^HTTPTypes"),
    ("swift-log, swift-metrics, tracing", r"^Logging$|^CoreMetrics$|^Metrics$|^Tracing$|^Instrumentation$|^Prometheus$"),
    ("swift-collections, atomics, algorithms", r"^DequeModule$|^Collections$|^Atomics$|^AsyncAlgorithms$|^BasicContainers$"),
    ("ServiceLifecycle", r"^ServiceLifecycle$|^UnixSignals$"),
]

PREFIXES = re.compile(
    r"^(?:partial apply for |closure #\d+ .*? in |implicit closure #\d+ .*? in |merged |\w+ value witness for |"
    r"\(extension in \w+\):|"
    r"\(\d+\) (?:suspend|await) resume partial function for |outlined \w+(?: \w+)*? of |"
    r"reabstraction thunk helper (?:from .*? to .*? )?|thunk for |specialized |function signature specialization <[^>]*> of |"
    r"protocol witness for |dispatch thunk of |key path getter for |lazy protocol witness table accessor for type |"
    r"type metadata accessor for |async function pointer to |default argument \d+ of |static |"
    r"one-time initialization function for )")


def strip_generic_specialization(name):
    """`generic specialization <A, B<C>> of X.y` is X.y, and so is a function signature specialization."""
    while name.startswith("generic specialization <") or name.startswith("function signature specialization <"):
        depth = 0
        for index, character in enumerate(name):
            if character == "<":
                depth += 1
            elif character == ">" and name[index - 1] != "-":  # not the arrow of a function type
                depth -= 1
                if depth == 0:
                    name = name[index + 1:].removeprefix(" of ")
                    break
        else:
            break
    return name


def core(name):
    """The function a demangled name is about, with what the compiler wrapped around it taken off."""
    previous = None
    while previous != name:
        previous = name
        name = PREFIXES.sub("", strip_generic_specialization(name))
    return name


def piece(library, symbol, demangled, server):
    if library == "[kernel.kallsyms]":
        return "kernel (system calls, scheduling, loopback TCP)"
    if "libcrypto" in library or "libssl" in library:
        return "RSA signature and digest (libcrypto)"
    if "libswift_Concurrency" in library:
        return "Swift concurrency runtime (tasks, executors, continuations)"
    if "libswiftCore" in library:
        if re.search(r"retain|release|Retain|Release|RefCount|dealloc", demangled):
            return "Swift runtime: reference counting"
        if re.search(r"[Mm]etadata|[Cc]onformance|dynamicCast|WitnessTable|getGeneric|swift_cvw", demangled):
            return "Swift runtime: generic metadata, conformances, casts"
        return "Swift standard library (strings, arrays, dictionaries, hashing)"
    if "libFoundation" in library or "FoundationICU" in library:
        return "Foundation (JSON, dates, data, UUID)"
    if "libdispatch" in library:
        return "libdispatch (semaphores)"
    if re.search(r"libc\.so|libc-|libm\.so|ld-linux|libpthread", library):
        if re.search(r"malloc|free|_int_|tcache|arena|calloc|realloc", symbol):
            return "malloc and free"
        return "libc (memcpy, locks, system call wrappers)"
    if library != server:
        return "other libraries (" + library + ")"
    name = core(demangled)
    match = re.match(r"\(?([A-Za-z_][A-Za-z0-9_]*)\.", name)
    module = match.group(1) if match else ""
    if module.startswith("Gateway") or module in ("OpenSSLSigner", "StaticUsersPlugin", "TokenFloor", "InstalledPlugins") \
            or module.endswith("Plugin") or module.endswith("Profile"):
        for label, pattern in GATEWAY_PIECES:
            if re.search(pattern, name.split("(")[0]):
                return label
        return "gateway: other (" + module + ")"
    if module == "Swift" or module == "_StringProcessing":
        return "Swift standard library (strings, arrays, dictionaries, hashing)"
    if module.startswith("Foundation"):
        return "Foundation (JSON, dates, data, UUID)"
    if symbol.startswith("objectdestroy"):
        return "Swift runtime in the binary"
    for label, pattern in LIBRARY_MODULES:
        if re.search(pattern, module) or re.search(pattern, symbol):
            return label
    if symbol.startswith("swift_") or symbol.startswith("__swift"):
        return "Swift runtime in the binary"
    return "server binary, other" + (" (" + module + ")" if module else "")


def main():
    report, cpu_ms = sys.argv[1], float(sys.argv[2])
    rows = []
    for line in open(report, encoding="utf-8", errors="replace"):
        match = LINE.match(line)
        if match:
            rows.append((float(match.group(1)), match.group(2), match.group(4).strip()))
    if not rows:
        sys.exit(f"no samples in {report}")
    demangled = subprocess.run(
        ["swift", "demangle"], input="\n".join(symbol for _, _, symbol in rows),
        capture_output=True, text=True, check=True).stdout.split("\n")
    # The server is the one non-shared object most samples fell in.
    objects = collections.Counter()
    for share, library, _ in rows:
        if ".so" not in library and not library.startswith("["):
            objects[library] += share
    server = objects.most_common(1)[0][0] if objects else ""
    pieces = collections.Counter()
    for (share, library, symbol), name in zip(rows, demangled):
        pieces[piece(library, symbol, name, server)] += share
    total = sum(pieces.values())
    print(f"CPU a request by piece ({cpu_ms * 1000:.0f} us in all; the samples' shares of it):")
    for label, share in pieces.most_common():
        print(f"  {cpu_ms * 1000 * share / total:8.1f} us  {100 * share / total:5.1f} %  {label}")


if __name__ == "__main__":
    main()
