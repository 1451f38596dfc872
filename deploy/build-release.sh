#!/usr/bin/env bash
# The Dockerfile's build stage, as a script so it can run outside Docker too:
# installs the build's Debian packages, builds the release binary with the
# Swift standard library linked statically, and copies it to $1.
#   deploy/build-release.sh OUTPUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
output="${1:?usage: deploy/build-release.sh OUTPUT_DIR}"
source scripts/lib/install-packages.sh
# libcurl: the admin commands use URLSession, whose static FoundationNetworking links it.
install_packages pkg-config libsodium-dev libssl-dev libcurl4-openssl-dev
swift build -c release --product identity-gateway --static-swift-stdlib
mkdir -p "$output"
cp "$(swift build -c release --show-bin-path)/identity-gateway" "$output/"
"$output/identity-gateway" --help >/dev/null
echo "built $output/identity-gateway"
