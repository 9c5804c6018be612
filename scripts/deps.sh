#!/bin/sh
# Installs the Debian packages roastop needs, only those that are missing.
# Usage: scripts/deps.sh build|test|wheel
set -eu
BUILD_PKGS="build-essential pkg-config libncurses-dev libcurl4-openssl-dev libcjson-dev libcmocka-dev libssl-dev libmicrohttpd-dev libwebsockets-dev"
WHEEL_PKGS="python3 python3-venv"
TEST_PKGS="clang libclang-rt-14-dev tmux $WHEEL_PKGS openssl chromium debootstrap"
case "${1:-build}" in
build) want="$BUILD_PKGS" ;;
test) want="$BUILD_PKGS $TEST_PKGS" ;;
wheel) want="$BUILD_PKGS $WHEEL_PKGS" ;;
*) echo "usage: $0 build|test|wheel" >&2; exit 2 ;;
esac
missing=""
for p in $want; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
