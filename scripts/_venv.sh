# Sourced by scripts/run-site, scripts/run-tests and .ci/run (from the repository root): make
# .venv with Python 3.11+ and install the requirements into it. `ensure_venv` installs the
# runtime (requirements.txt); `ensure_venv dev` also the tests' and lint's
# (requirements-dev.txt, which includes requirements.txt) and, where npm is installed, the
# browser tests' npm package (package-lock.json: axe-core, `ensure_node_modules`). Each install
# is skipped while its files are unchanged: one hash per file, kept in .venv/.<file>.sha256
# (node_modules/.package-lock.sha256 for npm's).

find_python() {
  # RETWIS_PYTHON when set; else the distribution's CPython (Debian's is built with PGO and
  # LTO: about 10 % fewer instructions a page than a plain source build such as pyenv's,
  # docs/benchmarks.md), else the first on PATH.
  local py
  for py in ${RETWIS_PYTHON:-} /usr/bin/python3.13 /usr/bin/python3.12 /usr/bin/python3.11 \
    /usr/bin/python3 python3.13 python3.12 python3.11 python3; do
    if command -v "$py" >/dev/null 2>&1 &&
      "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      echo "$py"
      return 0
    fi
  done
  return 1
}

as_root_apt_install() {
  # apt-get install "$@" when we are root on Debian/Ubuntu; fail otherwise.
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 || return 1
  echo "Installing $* with apt-get..." >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

ensure_venv() {
  local py want have
  if [ ! -x .venv/bin/python ]; then
    py=$(find_python) || {
      echo "Python 3.11 or newer is needed (sudo apt-get install python3)." >&2
      exit 1
    }
    echo "Creating .venv with $py..." >&2
    if ! "$py" -m venv .venv >/dev/null 2>&1; then
      rm -rf .venv # Debian without python3-venv leaves a venv without pip
      as_root_apt_install python3-venv || {
        echo "Cannot create a virtualenv: sudo apt-get install python3-venv, then run again." >&2
        exit 1
      }
      "$py" -m venv .venv
    fi
  fi
  local files=(requirements.txt) file stale=()
  if [ "${1:-}" = dev ]; then
    files+=(requirements-dev.txt)
  fi
  for file in "${files[@]}"; do
    want=$(sha256sum "$file" | cut -d' ' -f1)
    have=$(cat ".venv/.${file%.txt}.sha256" 2>/dev/null || true)
    [ "$want" = "$have" ] || stale+=("$file")
  done
  if [ "${#stale[@]}" -gt 0 ]; then
    file=${files[-1]} # requirements-dev.txt includes requirements.txt
    echo "Installing $file into .venv..." >&2
    .venv/bin/python -m pip install -q --disable-pip-version-check -r "$file"
    for file in "${files[@]}"; do
      sha256sum "$file" | cut -d' ' -f1 >".venv/.${file%.txt}.sha256"
    done
  fi
  if [ "${1:-}" = dev ]; then
    ensure_node_modules || echo "npm is not installed: the accessibility tests will be skipped" \
      "(sudo apt-get install npm, then run again)." >&2
  fi
}

ensure_node_modules() {
  # node_modules/ from package-lock.json (axe-core, which tests/browser/test_accessibility.py
  # serves to Chromium from disk), installed with `npm ci` again only when the lock file
  # changes. npm itself comes from Debian's package when run as root; returns 1 when npm is
  # missing otherwise; exits when npm cannot install the package.
  command -v npm >/dev/null 2>&1 || as_root_apt_install npm || return 1
  local want have
  want=$(sha256sum package-lock.json | cut -d' ' -f1)
  have=$(cat node_modules/.package-lock.sha256 2>/dev/null || true)
  if [ "$want" != "$have" ] || [ ! -f node_modules/axe-core/axe.min.js ]; then
    echo "Installing package-lock.json into node_modules/ (npm ci)..." >&2
    npm ci --no-audit --no-fund --loglevel=error >&2 || {
      echo "npm ci failed: the browser tests' npm packages are not installed." >&2
      exit 1
    }
    echo "$want" >node_modules/.package-lock.sha256
  fi
}
