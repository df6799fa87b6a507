# Sourced by scripts/run-site and scripts/run-tests (from the repository root): make .venv
# with Python 3.11+ and install requirements.txt into it. The install is skipped while
# requirements.txt is unchanged (its hash is kept in .venv/.requirements.sha256).

find_python() {
  local py
  for py in python3.13 python3.12 python3.11 python3; do
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
  want=$(sha256sum requirements.txt | cut -d' ' -f1)
  have=$(cat .venv/.requirements.sha256 2>/dev/null || true)
  if [ "$want" != "$have" ]; then
    echo "Installing requirements.txt into .venv..." >&2
    .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt
    echo "$want" >.venv/.requirements.sha256
  fi
}
