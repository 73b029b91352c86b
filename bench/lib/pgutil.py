"""PostgreSQL access for the benchmark: the psql client (-X -A -t) and a
throwaway cluster, the same steps as scripts/lib.sh (initdb as user postgres
when run as root, socket in a mktemp dir, random port, trust auth).

No driver is needed: everything goes through psql, which exists wherever the
server does.
"""
import os
import pwd
import random
import re
import shutil
import subprocess
import tempfile


class SQLError(RuntimeError):
    """psql failed; .stderr holds what it said."""

    def __init__(self, msg, stderr="", stdout=""):
        super().__init__(msg)
        self.stderr = stderr
        self.stdout = stdout


def find_pg_config():
    cand = os.environ.get("PG_CONFIG")
    if cand:
        return cand
    if os.path.exists("/usr/lib/postgresql/15/bin/pg_config"):
        return "/usr/lib/postgresql/15/bin/pg_config"
    found = shutil.which("pg_config")
    if found:
        return found
    raise SystemExit("pg_config not found: set PG_CONFIG")


def pg_bindir(pg_config=None):
    pg_config = pg_config or find_pg_config()
    return subprocess.run([pg_config, "--bindir"], check=True, capture_output=True,
                          text=True).stdout.strip()


class Psql:
    """Runs SQL scripts through psql -X -A -t -q with ON_ERROR_STOP."""

    def __init__(self, bindir, env=None):
        self.psql = os.path.join(bindir, "psql")
        if not os.access(self.psql, os.X_OK):
            self.psql = shutil.which("psql") or self.psql
        self.env = dict(os.environ if env is None else env)
        self.env.setdefault("PGAPPNAME", "gpuhash-bench")

    def argv(self):
        return [self.psql, "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-f", "-"]

    def run(self, sql, timeout=None, check=True):
        """Run a script in one session; return its stdout (str)."""
        p = subprocess.run(self.argv(), input=sql, capture_output=True, text=True,
                           env=self.env, timeout=timeout)
        if check and p.returncode != 0:
            raise SQLError(first_error(p.stderr) or "psql exited %d" % p.returncode,
                           p.stderr, p.stdout)
        return p.stdout

    def popen(self, sql):
        """Start a session running the script; caller communicates."""
        p = subprocess.Popen(self.argv(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=self.env)
        return p

    def value(self, sql):
        out = self.run(sql).strip("\n")
        return out

    def rows(self, sql, sep="|"):
        out = self.run(sql)
        return [line.split(sep) for line in out.splitlines() if line != ""]


def first_error(stderr):
    """The first ERROR/FATAL line of psql's stderr, with its DETAIL and HINT,
    without psql's "psql:<stdin>:5:" prefix."""
    lines = [l for l in stderr.splitlines() if l.strip()]
    for i, l in enumerate(lines):
        m = re.search(r"\b(ERROR|FATAL|PANIC):\s*(.*)", l)
        if m:
            rest = [x.strip() for x in lines[i + 1:i + 3] if x.startswith(("DETAIL:", "HINT:"))]
            return re.sub(r"\s+", " ", " ".join(["%s: %s" % (m.group(1), m.group(2))] + rest))
    return lines[-1] if lines else ""


def short_error(msg):
    """The error's message alone, without DETAIL and HINT (for tables)."""
    if not msg:
        return msg
    return re.split(r"\s+(DETAIL|HINT):", msg)[0]


class ThrowawayCluster:
    """initdb + pg_ctl start in a mktemp dir; stop() removes everything."""

    def __init__(self, bindir, server_opts, log=print):
        self.bindir = bindir
        self.dir = tempfile.mkdtemp(prefix="gpuhash-bench-pg.")
        self.port = 54000 + random.randrange(1000)
        self.log = log
        self.run_as = []
        self.started = False
        if os.geteuid() == 0:
            try:
                pwd.getpwnam("postgres")
            except KeyError:
                subprocess.run(["useradd", "--system", "--home-dir", self.dir, "postgres"],
                               check=True)
            shutil.chown(self.dir, "postgres")
            self.run_as = ["runuser", "-u", "postgres", "--"]
        data = os.path.join(self.dir, "data")
        p = subprocess.run(self.run_as + [os.path.join(bindir, "initdb"), "-D", data, "-A", "trust",
                                          "-U", "postgres"], capture_output=True, text=True)
        if p.returncode != 0:
            self.stop()
            raise SystemExit("initdb failed:\n" + p.stdout + p.stderr)
        opts = "-k %s -c listen_addresses='' -p %d %s" % (self.dir, self.port, server_opts)
        p = subprocess.run(self.run_as + [os.path.join(bindir, "pg_ctl"), "-D", data, "-l",
                                          os.path.join(self.dir, "server.log"), "-w", "-o", opts,
                                          "start"], capture_output=True, text=True)
        if p.returncode != 0:
            tail = ""
            try:
                with open(os.path.join(self.dir, "server.log")) as f:
                    tail = "".join(f.readlines()[-20:])
            except OSError:
                pass
            self.stop()
            raise SystemExit("pg_ctl start failed:\n" + p.stdout + p.stderr + tail)
        self.started = True
        self.server_opts = server_opts

    def env(self):
        e = dict(os.environ)
        e.update(PGHOST=self.dir, PGPORT=str(self.port), PGUSER="postgres", PGDATABASE="postgres")
        for k in ("PGPASSWORD", "PGSERVICE", "PGSSLMODE"):
            e.pop(k, None)
        return e

    def stop(self):
        data = os.path.join(self.dir, "data")
        if self.started:
            subprocess.run(self.run_as + [os.path.join(self.bindir, "pg_ctl"), "-D", data, "-m",
                                          "fast", "-w", "stop"], capture_output=True)
            self.started = False
        shutil.rmtree(self.dir, ignore_errors=True)
