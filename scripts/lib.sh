# Shared set-up steps for scripts/test.sh and scripts/demo.sh (sourced, not run).
# Every step is idempotent: it installs or starts a thing only when it is missing.

SUDO=""
if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi

apt_install() {
    # apt_install PKG... : install Debian packages that are not installed yet.
    local missing=()
    for pkg in "$@"; do
        dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "== installing ${missing[*]}"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

ensure_python() {
    if ! python3 -c 'import sys, venv; assert sys.version_info >= (3, 11)' 2>/dev/null; then
        apt_install python3 python3-venv python3-pip
    fi
    python3 -m venv --help >/dev/null 2>&1 || apt_install python3-venv
}

ensure_venv() {
    # ensure_venv [EXTRA] : a .venv with the project installed (editable), plus an optional extra. Installed
    # again only when pyproject.toml is newer than the last install: the code is editable anyway, and every
    # start of the demo printed pip's and setuptools' warnings above the arena's own lines.
    local extra="${1:-}"
    [ -x .venv/bin/python ] || python3 -m venv .venv
    local spec="." stamp=".venv/.arena-installed${extra:+-$extra}"
    [ -n "$extra" ] && spec=".[$extra]"
    [ -f "$stamp" ] && [ "$stamp" -nt pyproject.toml ] && return 0
    .venv/bin/python -m pip install -q --upgrade pip >/dev/null
    .venv/bin/python -m pip install -q -e "$spec"
    touch "$stamp"
}

port_open() {
    # port_open HOST PORT : true when something listens there.
    (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null
}

ensure_redis() {
    port_open 127.0.0.1 6379 && return 0
    command -v redis-server >/dev/null 2>&1 || apt_install redis-server
    echo "== starting redis-server"
    mkdir -p /tmp/arena-redis
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no \
        --dir /tmp/arena-redis --logfile /tmp/arena-redis/redis.log
    for _ in $(seq 50); do port_open 127.0.0.1 6379 && return 0; sleep 0.1; done
    echo "redis-server did not start" >&2; return 1
}

ensure_postgres() {
    if ! port_open 127.0.0.1 5432; then
        command -v pg_ctlcluster >/dev/null 2>&1 || apt_install postgresql
        echo "== starting postgresql"
        local version
        version=$(ls /etc/postgresql | sort -V | tail -n 1)
        $SUDO pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
        for _ in $(seq 100); do port_open 127.0.0.1 5432 && break; sleep 0.1; done
        port_open 127.0.0.1 5432 || { echo "postgresql did not start" >&2; return 1; }
    fi
    # The tests log in as postgres/postgres on 127.0.0.1 and use database "test".
    if ! PGPASSWORD=postgres psql -h 127.0.0.1 -U postgres -d test -tAc 'select 1' >/dev/null 2>&1; then
        $SUDO -u postgres psql -qc "ALTER USER postgres PASSWORD 'postgres'" >/dev/null 2>&1 \
            || su postgres -c "psql -qc \"ALTER USER postgres PASSWORD 'postgres'\"" >/dev/null
        PGPASSWORD=postgres psql -h 127.0.0.1 -U postgres -d postgres -tAc \
            "select 1 from pg_database where datname='test'" | grep -q 1 \
            || PGPASSWORD=postgres psql -h 127.0.0.1 -U postgres -d postgres -qc 'create database test'
    fi
}

ensure_chromium() {
    [ -x /usr/bin/chromium ] || apt_install chromium
}

ensure_nginx() {
    # tests/deploy/test_slow_clients.py runs deploy/nginx.conf.template in Debian's nginx (its own
    # instance on a free port; the package's service is not needed) and counts sockets with ss.
    [ -x /usr/sbin/nginx ] || apt_install nginx-light
    command -v ss >/dev/null 2>&1 || apt_install iproute2
}

ensure_starter_toolchains() {
    # tests/sample_bots/test_starters.py builds and runs the Go and Node.js starter bots
    # (sample_bots/starters/) with the distribution's toolchains.
    command -v go >/dev/null 2>&1 || apt_install golang-go
    command -v node >/dev/null 2>&1 || apt_install nodejs
}

ensure_cluster_tools() {
    # tests/cluster/ builds network namespaces (ip netns, veth, a bridge) and runs its own PostgreSQL
    # (the server binaries under /usr/lib/postgresql/*/bin) and redis-server inside them, as root.
    command -v ip >/dev/null 2>&1 || apt_install iproute2
    command -v unshare >/dev/null 2>&1 || apt_install util-linux
    ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || apt_install postgresql
    command -v redis-server >/dev/null 2>&1 || apt_install redis-server
}

ensure_test_services() {
    command -v psql >/dev/null 2>&1 || apt_install postgresql-client
    ensure_cluster_tools
    command -v wrk >/dev/null 2>&1 || apt_install wrk
    ensure_nginx
    ensure_redis
    ensure_postgres
    ensure_chromium
    ensure_starter_toolchains
}
