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

# What building and running the gateway needs from Debian.
GATEWAY_RUNTIME_PACKAGES=(postgresql)
# What the test suite needs on top: openssl verifies token signatures
# independently; python3 runs the OpenAPI validator from PyPI.
GATEWAY_TEST_PACKAGES=(openssl python3 python3-venv)
