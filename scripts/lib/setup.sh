# Shared by scripts/test and scripts/demo: package installation and uv.
# Expects log() and die() from the caller; defines SUDO, apt_install and ensure_uv.

if [ "$(id -u)" -eq 0 ]; then
    SUDO=()
elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo -n)
else
    SUDO=()
fi

APT_LOG="$(mktemp -t mailfathom-apt.XXXXXX)"
POLICY_RC=/usr/sbin/policy-rc.d
POLICY_RC_CREATED=0
cleanup() {
    if [ "$POLICY_RC_CREATED" -eq 1 ]; then
        "${SUDO[@]}" rm -f "$POLICY_RC" || true
    fi
    rm -f "$APT_LOG"
}
trap cleanup EXIT

apt_install() {
    [ "$#" -gt 0 ] || return 0
    command -v apt-get >/dev/null 2>&1 || die "missing $*, and apt-get is not available to install it"
    log "installing $*"
    # Package scripts must not start system-wide services (they would listen on
    # every interface); the tests start their own private servers.
    if [ ! -e "$POLICY_RC" ]; then
        printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee "$POLICY_RC" >/dev/null
        "${SUDO[@]}" chmod 755 "$POLICY_RC"
        POLICY_RC_CREATED=1
    fi
    if ! { "${SUDO[@]}" apt-get update -qq &&
        "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            --no-install-recommends -o Dpkg::Use-Pty=0 "$@"; } >"$APT_LOG" 2>&1 </dev/null; then
        tail -n 40 "$APT_LOG" >&2
        die "apt-get install $* failed"
    fi
    if [ "$POLICY_RC_CREATED" -eq 1 ]; then
        "${SUDO[@]}" rm -f "$POLICY_RC"
        POLICY_RC_CREATED=0
    fi
}

ensure_uv() {
    if command -v uv >/dev/null 2>&1; then
        return 0
    fi
    if ! python3 -m pip --version >/dev/null 2>&1; then
        apt_install python3-pip
    fi
    log "installing uv"
    # Debian's python3 is externally managed (PEP 668) and refuses a --user
    # install unless told otherwise; pips that predate PEP 668 ignore the variable.
    PIP_BREAK_SYSTEM_PACKAGES=1 PIP_ROOT_USER_ACTION=ignore python3 -m pip install --user --quiet \
        --disable-pip-version-check uv </dev/null
    hash -r
    command -v uv >/dev/null 2>&1 || die "uv was installed but is not on PATH ($HOME/.local/bin)"
}
