#!/usr/bin/env bash
# Set up LogicFuzz on Debian (bookworm) as root: the clang toolchain, Debian source packages,
# a .venv with the package. Idempotent: a second run with everything present takes seconds.
#   scripts/setup.sh          runtime only
#   scripts/setup.sh --dev    plus test and lint tools (pytest, ruff, mypy, langgraph-cli)
set -euo pipefail

cd "$(dirname "$0")/.."
DEV=0
[ "${1:-}" = "--dev" ] && DEV=1

die() { echo "setup: $*" >&2; exit 1; }
say() { echo "setup: $*"; }

APT_PKGS=(clang llvm libclang-rt-14-dev dpkg-dev python3-venv python3-pip cmake autoconf automake libtool autopoint bison flex bubblewrap)
# The report's browser test renders in headless Chromium.
[ "$DEV" = 1 ] && APT_PKGS+=(chromium postgresql-15 postgresql-server-dev-15)  # the shared-store tests (+ pgvector build)

need_apt=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need_apt+=("$p")
done

# `apt-get source` needs deb-src entries: add `deb-src` to the Types of the Debian sources,
# leaving every other line and file alone.
enable_deb_src() {
  local changed=0 f
  for f in /etc/apt/sources.list.d/debian.sources; do
    [ -f "$f" ] || continue
    if grep -qE '^Types:.*\bdeb\b' "$f" && ! grep -qE '^Types:.*deb-src' "$f"; then
      [ -w "$f" ] || die "cannot write $f: run as root (or with sudo) to enable deb-src"
      cp "$f" "$f.logicfuzz.bak"
      sed -i -E 's/^Types:[[:space:]]*deb[[:space:]]*$/Types: deb deb-src/' "$f"
      changed=1
    fi
  done
  if [ -f /etc/apt/sources.list ] && grep -qE '^deb .*debian' /etc/apt/sources.list \
     && ! grep -qE '^deb-src ' /etc/apt/sources.list; then
    [ -w /etc/apt/sources.list ] || die "cannot write /etc/apt/sources.list: run as root"
    cp /etc/apt/sources.list /etc/apt/sources.list.logicfuzz.bak
    grep -E '^deb .*debian' /etc/apt/sources.list | sed 's/^deb /deb-src /' >> /etc/apt/sources.list
    changed=1
  fi
  echo "$changed"
}

if [ "$(id -u)" != 0 ] && { [ ${#need_apt[@]} -gt 0 ] || ! grep -rqs 'deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; }; then
  die "missing system packages (${need_apt[*]:-deb-src entries}); run this script as root, e.g. sudo $0 $*"
fi

# A full setup takes about 3 GB (torch, clang, the model wheels). Less free space is a warning,
# not a refusal: the step that runs out says so itself, and a machine that has the large parts
# already needs far less.
avail_kb=$(df -Pk . | awk 'NR==2 {print $4}')
[ "${avail_kb:-0}" -gt 4000000 ] || say "warning: less than 4 GB free in $(pwd); if a step fails for space, free some and rerun"

src_changed=0
[ "$(id -u)" = 0 ] && src_changed=$(enable_deb_src)
if [ ${#need_apt[@]} -gt 0 ] || [ "$src_changed" = 1 ]; then
  say "installing system packages: ${need_apt[*]:-none} (deb-src changed: $src_changed)"
  apt-get update -qq || die "apt-get update failed: check the network access to Debian's archive"
  if [ ${#need_apt[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null \
      || die "apt-get install ${need_apt[*]} failed"
  fi
fi

# pgvector lets the PostgreSQL experience bank search in SQL; best effort, one line, never fatal.
[ "$DEV" = 1 ] && { bash scripts/pgvector.sh || true; }

PY=${PYTHON:-python3}
"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || die "Python >= 3.11 is required ($PY is older)"
[ -x .venv/bin/python ] || "$PY" -m venv .venv || die "could not create .venv (install python3-venv)"

extras=""
[ "$DEV" = 1 ] && extras="[dev]"
stamp=".venv/.logicfuzz-installed$extras"
want=$(cat pyproject.toml requirements.lock | sha256sum | cut -c1-16)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  say "installing the Python package$extras into .venv (versions from requirements.lock)"
  # torch first, pinned: a CPU build; a looser requirement would pull gigabytes of CUDA wheels.
  # requirements.lock (scripts/lock.py) holds the versions CI tested, as pip constraints.
  .venv/bin/pip install -q -c requirements.lock torch==2.13.0 || die "pip could not install torch==2.13.0"
  .venv/bin/pip install -q -c requirements.lock -e ".$extras" || die "pip install -e .$extras failed"
  echo "$want" > "$stamp"
fi
if [ "$DEV" = 1 ]; then
  # The realmodel test tier talks to a real llama.cpp server (SmolLM2-135M). Its wheel is built
  # once from the PyPI sdist (15-30 minutes on 2 cores) and cached in ~/.cache/logicfuzz/wheels.
  if ! .venv/bin/python -c 'import llama_cpp.server.app' 2>/dev/null; then
    say "building and installing llama-cpp-python's server (first time only; cached outside the repo)"
  fi
  .venv/bin/python -m agents.local_model --install >/dev/null \
    || die "could not install the local model server: python -m agents.local_model --install says why"
fi
say "ready (.venv/bin/logicfuzz)"
