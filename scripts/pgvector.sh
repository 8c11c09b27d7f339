#!/usr/bin/env bash
# Best effort: build and install the pgvector extension for the system's PostgreSQL 15, so the
# experience bank can search in SQL (scripts/setup.sh --dev calls this; never fatal).
# Debian bookworm has no pgvector package for PostgreSQL 15, so the source package comes from
# trixie through a private apt list and state directory: the system's apt sources, lists and
# caches are left alone. The mirror is the one the system's own sources name. The built files
# are kept in ~/.cache/logicfuzz/pgvector, so a second setup only copies them into place.
# Prints one line on what it did; exits 0 whatever happened.
set -uo pipefail

PG_MAJOR=${PG_MAJOR:-15}
SUITE=${PGVECTOR_SUITE:-trixie}
PG_CONFIG=/usr/lib/postgresql/$PG_MAJOR/bin/pg_config
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/logicfuzz/pgvector
LOG=$CACHE/build.log

say() { echo "pgvector: $*"; exit 0; }

[ -x "/usr/lib/postgresql/$PG_MAJOR/bin/postgres" ] || say "skipped: PostgreSQL $PG_MAJOR is not installed"
share=/usr/share/postgresql/$PG_MAJOR/extension
if [ -f "$share/vector.control" ]; then
  say "already installed for PostgreSQL $PG_MAJOR ($(sed -n "s/^default_version = '\(.*\)'/\1/p" "$share/vector.control"))"
fi
[ "$(id -u)" = 0 ] || say "not installed: run scripts/setup.sh --dev as root to build it"
mkdir -p "$CACHE" || say "not installed: cannot create $CACHE"

# Files already built by an earlier setup: copy them into place.
install_staged() {
  [ -f "$CACHE/stage/$share/vector.control" ] || return 1
  cp -a "$CACHE/stage/." / && [ -f "$share/vector.control" ]
}
if install_staged; then
  say "installed for PostgreSQL $PG_MAJOR from the cached build ($CACHE/stage)"
fi

# The Debian mirror the system already uses (deb822 .sources first, then sources.list).
mirror() {
  local f uri
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    uri=$(awk '/^URIs:/ {for (i = 2; i <= NF; i++) if ($i ~ /\/debian\/?$/) {print $i; exit}}' "$f")
    [ -n "$uri" ] && { echo "${uri%/}"; return; }
  done
  [ -f /etc/apt/sources.list ] && awk '/^deb(-src)? / {for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\/.*\/debian\/?$/) {sub(/\/$/, "", $i); print $i; exit}}' /etc/apt/sources.list
}
uri=$(mirror)
[ -n "$uri" ] || say "not installed: no Debian mirror in the system's apt sources"

apt_private=(-o "Dir::Etc::SourceList=$CACHE/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
             -o "Dir::State::Lists=$CACHE/apt/lists" -o "Dir::Cache=$CACHE/apt/cache")
mkdir -p "$CACHE/apt/lists/partial" "$CACHE/apt/cache/archives/partial"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $SUITE main" \
  > "$CACHE/apt/sources.list"
: > "$LOG"
apt-get "${apt_private[@]}" update -qq >>"$LOG" 2>&1 \
  || say "not installed: apt-get update of $SUITE's sources failed (see $LOG)"
rm -rf "$CACHE/src" && mkdir -p "$CACHE/src"
(cd "$CACHE/src" && apt-get "${apt_private[@]}" source -qq pgvector >>"$LOG" 2>&1) \
  || say "not installed: apt-get source pgvector ($SUITE) failed (see $LOG)"
srcdir=$(find "$CACHE/src" -mindepth 1 -maxdepth 1 -type d -name 'pgvector-*' | head -1)
[ -n "$srcdir" ] || say "not installed: no pgvector source tree in $CACHE/src (see $LOG)"

if ! dpkg-query -W -f='${Status}' "postgresql-server-dev-$PG_MAJOR" 2>/dev/null | grep -q "install ok installed"; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "postgresql-server-dev-$PG_MAJOR" >>"$LOG" 2>&1 \
    || say "not installed: apt-get install postgresql-server-dev-$PG_MAJOR failed (see $LOG)"
fi
# OPTFLAGS="": no -march=native, so the cached files run on any x86-64 machine.
nice -n 10 make -C "$srcdir" PG_CONFIG="$PG_CONFIG" OPTFLAGS="" >>"$LOG" 2>&1 \
  || say "not installed: the build failed (see $LOG)"
rm -rf "$CACHE/stage"
make -C "$srcdir" PG_CONFIG="$PG_CONFIG" OPTFLAGS="" DESTDIR="$CACHE/stage" install >>"$LOG" 2>&1 \
  || say "not installed: make install failed (see $LOG)"
install_staged || say "not installed: copying the built files failed (see $LOG)"
say "built $(basename "$srcdir") from $SUITE's source package and installed it for PostgreSQL $PG_MAJOR"
