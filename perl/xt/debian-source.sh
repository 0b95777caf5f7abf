#!/bin/sh
# debian-source.sh PACKAGE DEST [PATH]: unpacks the upstream sources of the
# Debian source package PACKAGE (the version apt installs) into DEST, only
# PATH inside the tarball when given, and prints the unpacked directory.
# The incumbents' own test suites come this way (none of their code is kept
# in this repository). When apt knows no deb-src entry, one is added for
# each configured deb entry (root only), then `apt-get update`.
set -eu
pkg=$1 dest=$2 inner=${3:-}
mkdir -p "$dest"
cd "$dest"

if ! apt-cache showsrc "$pkg" 2>/dev/null | grep -q '^Package:'; then
    [ "$(id -u)" = 0 ] || { echo "debian-source: no deb-src entry for $pkg and not root" >&2; exit 1; }
    list=/etc/apt/sources.list.d/nodelay-deb-src
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] && [ "$f" != "$list.sources" ] && sed 's/^Types: deb$/Types: deb-src/' "$f"
        echo
    done > "$list.sources"
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | sed -n 's/^deb /deb-src /p' > "$list.list"
    apt-get update -qq
fi

tarball=$(ls "${pkg}"_*.orig.tar.* 2>/dev/null | head -n 1 || true)
if [ -z "$tarball" ]; then
    # The newest version first; a mirror may lack one archive's pool (the
    # upstream tarball is the same for every Debian revision of a version).
    for version in $(apt-cache showsrc "$pkg" | sed -n 's/^Version: //p'); do
        apt-get source --download-only --tar-only "$pkg=$version" >/dev/null 2>&1 && break
    done
    tarball=$(ls "${pkg}"_*.orig.tar.* 2>/dev/null | head -n 1 || true)
    [ -n "$tarball" ] || { echo "debian-source: apt could not download the sources of $pkg" >&2; exit 1; }
fi
top=$(tar tf "$tarball" | head -n 1 | cut -d/ -f1)
if [ ! -d "$top/${inner}" ]; then
    tar xf "$tarball" ${inner:+"$top/$inner"}
fi
echo "$PWD/$top"
