# Shared by scripts/demo and scripts/test: dependencies and a throwaway cluster.
# Sourced, not run.

say() { printf '\n== %s\n' "$*"; }

# True when $PG_CONFIG runs and names the server headers and PGXS makefile
# that a PGXS build reads.
pg_build_files_present() {
  local inc pgxs
  inc=$("$PG_CONFIG" --includedir-server 2>/dev/null) || return 1
  pgxs=$("$PG_CONFIG" --pgxs 2>/dev/null) || return 1
  [ -f "$inc/postgres.h" ] && [ -f "$pgxs" ]
}

# Debian's PostgreSQL 15 server and headers, a C compiler and make, via
# apt-get when missing (root only).  The CUDA toolkit is optional: it is used
# from $CUDA_HOME (default /usr/local/cuda) when present.
ensure_deps() {
  local missing=()
  command -v make >/dev/null || missing+=(make)
  command -v gcc >/dev/null || missing+=(gcc)
  command -v python3 >/dev/null || missing+=(python3)
  { python3 -c 'import matplotlib' || /usr/bin/python3 -c 'import matplotlib'; } >/dev/null 2>&1 || missing+=(python3-matplotlib)
  if [ -z "${PG_CONFIG:-}" ]; then
    [ -x /usr/lib/postgresql/15/bin/postgres ] || missing+=(postgresql-15)
    export PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
    # pg_config comes with the client package; the build needs what
    # postgresql-server-dev-15 adds: the server headers and PGXS
    pg_build_files_present || missing+=(postgresql-server-dev-15)
  elif ! pg_build_files_present; then
    echo "PG_CONFIG=$PG_CONFIG: no server headers (postgres.h) or PGXS; install that server's development files" >&2
    return 1
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
      echo "missing: ${missing[*]}; run as root to install them with apt-get" >&2
      return 1
    fi
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    # Debian's postgresql-15 starts a cluster of its own; ours is separate
  fi
  if [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; then
    echo "CUDA toolkit: $("${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" --version | tail -1)"
  else
    echo "CUDA toolkit: not found at ${CUDA_HOME:-/usr/local/cuda}; building for the CPU only"
  fi
}

# Start a throwaway cluster as an unprivileged user and point PG* at it.  If
# PGHOST is already set (a server of your own), use that one instead.
start_cluster() {
  if [ -n "${PGHOST:-}" ]; then
    echo "using the server at PGHOST=$PGHOST PGPORT=${PGPORT:-5432}"
    return 0
  fi
  local bindir; bindir=$("$PG_CONFIG" --bindir)
  PGCLUSTER_DIR=$(mktemp -d /tmp/gpuhash-pg.XXXXXX)
  local port=$(( 54000 + RANDOM % 1000 ))
  local run=()
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --home-dir "$PGCLUSTER_DIR" postgres
    chown postgres "$PGCLUSTER_DIR"
    run=(runuser -u postgres --)
  fi
  PGCLUSTER_RUN=("${run[@]}")
  PGCLUSTER_BIN=$bindir
  "${run[@]}" "$bindir/initdb" -D "$PGCLUSTER_DIR/data" -A trust -U postgres >"$PGCLUSTER_DIR/initdb.log" 2>&1 \
    || { cat "$PGCLUSTER_DIR/initdb.log"; return 1; }
  "${run[@]}" "$bindir/pg_ctl" -D "$PGCLUSTER_DIR/data" -l "$PGCLUSTER_DIR/server.log" -w \
    -o "-k $PGCLUSTER_DIR -c listen_addresses='' -p $port ${GPUHASH_PGOPTS:-}" start >/dev/null \
    || { tail -20 "$PGCLUSTER_DIR/server.log"; return 1; }
  export PGHOST=$PGCLUSTER_DIR PGPORT=$port PGUSER=postgres PGDATABASE=postgres
  echo "throwaway cluster up: $PGCLUSTER_DIR (port $port, log $PGCLUSTER_DIR/server.log)"
  trap stop_cluster EXIT
}

stop_cluster() {
  if [ -n "${PGCLUSTER_DIR:-}" ] && [ -d "$PGCLUSTER_DIR/data" ]; then
    "${PGCLUSTER_RUN[@]}" "$PGCLUSTER_BIN/pg_ctl" -D "$PGCLUSTER_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$PGCLUSTER_DIR"
    PGCLUSTER_DIR=
  fi
}
