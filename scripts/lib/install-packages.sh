# Sourced by the scripts in scripts/: installs Debian packages that are missing.
# Usage: install_packages NAME...

install_packages() {
    local missing=()
    local package
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0

    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    echo "installing: ${missing[*]}" >&2
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# What building and running the gateway needs from Debian: the embedded
# Postgres, libsodium for argon2id password hashing, and OpenSSL's libcrypto
# for RSA signing.
GATEWAY_RUNTIME_PACKAGES=(postgresql pkg-config libsodium-dev libssl-dev)
# What the test suite needs on top: openssl verifies token signatures
# independently; libargon2 (the reference argon2) checks the hashes made
# through libsodium; python3 runs the OpenAPI validator from PyPI; haproxy
# checks deploy/patroni/haproxy.cfg; Chromium and its driver run the
# console's browser suite; gdb prints the threads of a test run that hung
# (scripts/lib/watch-tests.py).
GATEWAY_TEST_PACKAGES=(openssl libargon2-dev python3 python3-venv haproxy chromium chromium-driver oathtool gdb)
