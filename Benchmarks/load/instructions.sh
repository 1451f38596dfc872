# Sourced by Benchmarks/load/run for INSTRUCTIONS=1: each server runs under
# valgrind's callgrind, which counts the instructions it executes in user
# space, the same for the same work run after run (CPU time a request moves
# by 10 % from run to run on this kind of host, and VMs expose no hardware
# counters). The kernel's work (system calls, context switches) is not in
# the counts. Everything runs 20 to 50 times slower, so only the counts mean
# anything, and the load needs few connections (`INSTRUCTIONS=1
# Benchmarks/load/run 20 4`).
#
# Debian 12's valgrind (3.19) cannot read Swift 6.3's DWARF 5; 3.22 and later
# can. When the system's is older, Debian 13's package is fetched into
# .build/valgrind, checked through the archive's signed InRelease (gpgv with
# debian-archive-keyring), the Packages index's SHA-256 and the package's.
# The system's package still gives `vgdb`, which zeroes and dumps a running
# tool's counters (the newer vgdb needs a newer glibc). Swift servers run
# with dispatch_main_shim.c preloaded (that file says why).

instructions_setup() { # GATEWAY_BINARY
    install_packages valgrind gpgv debian-archive-keyring xz-utils
    local version
    version="$(valgrind --version | grep -oE '[0-9]+\.[0-9]+' | head -1)"
    valgrind_command=(valgrind)
    if ! python3 -c 'import sys; sys.exit(tuple(map(int, sys.argv[1].split("."))) < (3, 22))' "$version"; then
        local dir="$PWD/.build/valgrind"
        [ -x "$dir/usr/bin/valgrind.bin" ] || fetch_debian_package trixie valgrind "$dir"
        valgrind_command=(env VALGRIND_LIB="$dir/usr/libexec/valgrind" "$dir/usr/bin/valgrind.bin")
    fi
    echo "  counting instructions with $("${valgrind_command[@]}" --version)" >&2
    valgrind_command+=(--tool=callgrind --callgrind-out-file="$work/callgrind.%p.out")
    local swift_lib
    swift_lib="$(dirname "$(ldd "$1" | awk '$1 == "libdispatch.so" { print $3 }')")"
    cc -O2 -shared -fPIC -o "$work/dispatch_main_shim.so" Benchmarks/load/dispatch_main_shim.c \
        -L"$swift_lib" -Wl,-rpath,"$swift_lib" -ldispatch
    # What the servers are started with: the Swift ones (gateway, floor), and the peer (Python).
    swift_prefix=(env LD_PRELOAD="$work/dispatch_main_shim.so" "${valgrind_command[@]}")
    peer_prefix=("${valgrind_command[@]}")
}

# Unpacks Debian SUITE's PACKAGE (amd64) into DIR, after checking it against the signed archive.
fetch_debian_package() { # SUITE PACKAGE DIR
    local mirror=http://deb.debian.org/debian suite="$1" package="$2" dir="$3" index filename digest
    curl -fsS -o "$work/InRelease" "$mirror/dists/$suite/InRelease"
    # Only what the signature covers is read on: gpgv writes it out.
    gpgv --quiet --keyring /usr/share/keyrings/debian-archive-keyring.gpg --output "$work/Release" "$work/InRelease" 2>/dev/null
    index="$(awk '$3 == "main/binary-amd64/Packages.xz" && length($1) == 64 { print $1; exit }' "$work/Release")"
    curl -fsS -o "$work/Packages.xz" "$mirror/dists/$suite/main/binary-amd64/Packages.xz"
    echo "$index  $work/Packages.xz" | sha256sum --quiet -c
    read -r filename digest < <(xz -dc "$work/Packages.xz" | awk -v name="$package" '
        $1 == "Package:" { found = ($2 == name) }
        found && $1 == "Filename:" { file = $2 }
        found && $1 == "SHA256:" { print file, $2; exit }')
    curl -fsS -o "$work/$package.deb" "$mirror/$filename"
    echo "$digest  $work/$package.deb" | sha256sum --quiet -c
    rm -rf "$dir"
    dpkg-deb -x "$work/$package.deb" "$dir"
}

# Zeroes the server's counters (after its warm-up).
instructions_zero() { # PID
    vgdb --pid="$1" zero >/dev/null 2>&1 || { echo "vgdb could not reach callgrind in $1" >&2; return 1; }
}

# Dumps the server's counters, keeps the dump as
# .build/load-callgrind-SCENARIO.out (for callgrind_annotate), and prints
# "total signing beside" (millions of instructions a request) and the
# costliest objects to stderr.
instructions_read() { # PID REQUESTS SCENARIO
    local before after dump
    before="$(ls "$work"/callgrind."$1".out.* 2>/dev/null | wc -l)"
    vgdb --pid="$1" dump >/dev/null 2>&1 || { echo "vgdb could not reach callgrind in $1" >&2; return 1; }
    dump="$(ls -t "$work"/callgrind."$1".out.* | head -1)"
    after="$(ls "$work"/callgrind."$1".out.* | wc -l)"
    [ "$after" -gt "$before" ] || { echo "callgrind wrote no dump" >&2; return 1; }
    cp "$dump" ".build/load-callgrind-$3.out"
    python3 Benchmarks/load/callgrind_objects.py "$dump" "$2" 'libcrypto\.so|/cryptography/.*_rust\.abi3\.so' |
        { read -r line; echo "$line"; cat >&2; }
}
