#!/usr/bin/env bash
# Install the system libraries Qt needs (offscreen and xcb platforms), and a font (without
# one every label is empty boxes; app/fonts.py falls back to a bundled one) on Debian/Ubuntu,
# only when running as root and only when one is missing. Elsewhere: do nothing.
set -u
command -v apt-get >/dev/null 2>&1 || exit 0
[ "$(id -u)" = 0 ] || exit 0
pkgs="libegl1 libgl1 libxkbcommon0 libxkbcommon-x11-0 libfontconfig1 libdbus-1-3 libglib2.0-0
      libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0
      libxcb-shape0 libxcb-xinerama0 libxcb-randr0 libxcb-xkb1 libxrender1 libxi6
      fonts-dejavu-core"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing Qt system libraries:$missing" >&2
apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
