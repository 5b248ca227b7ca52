#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The OpenMetrics endpoint against a real Prometheus (kernel suite, root).

vitalsd serves /metrics on loopback; Prometheus (Debian's package, started
here with a generated config and a temporary storage directory) scrapes it
every second. Then:

 1. Prometheus parsed the page as OpenMetrics: the target is up with no
    error, and the metadata has the UNIT only OpenMetrics carries.
 2. A burner of known CPU: a child that idles, burns until the kernel has
    charged it about 3 s of CPU, and idles again. increase() and rate() of
    its process_cpu_time_seconds_total over a range from the last scrape
    before the burn to the last one after it (a range that starts 1 ms
    before a scrape, so Prometheus extrapolates by at most 1 ms) must match
    the kernel's utime + stime for that pid (/proc/PID/stat) within 5 %.
 3. Series identity across a pid reuse: once the burner is reaped, the next
    pid is set with /proc/sys/kernel/ns_last_pid (the real pid namespace:
    the daemon reads the host's /proc, so a new namespace's pid 1 would not
    be a reuse) and a second burner forked until it gets the same pid.
    Prometheus must hold two series for that pid, told apart by
    process_start_time, neither with a counter reset, the second carrying
    only its own ticks.
 4. The limits: an oversized request (431), a client that trickles its
    request past metrics_timeout_ms, a connection over
    metrics_max_connections (503), a path that is not /metrics (404): each
    counted once on the page and in `vitals --json health`.
 5. With BPF built in, the sched sums are on the page.
 6. Issue 22's families through Prometheus, from a second daemon whose
    sys_root is a copy of the GPU fixture trees (an Adreno's kgsl, a
    Mali's devfreq) and, with BPF, syscall_trace on for fsync and
    nanosleep. Once it has read the trees, trans_stat advances by known
    ms per frequency and the busy sources change; a child of known comm
    makes N fsync and M nanosleep calls, timing the sleeps itself.
    Prometheus then holds: the child's fsync calls exactly N, its
    nanosleep time within 10 % of its own sum, the nanosleep histogram's
    histogram_quantile(0.5) over the child's span within the estimator's
    2x of the sleep, each GPU state's seconds exactly the ms advanced /
    1000, the busy ratios exact; that target up, no scrape error.

Usage: check_export_prom.py bpf|nobpf (VITALS_BUILDDIR: the build).
"""
import ctypes
import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

HZ = os.sysconf("SC_CLK_TCK")
BUILD = os.environ.get("VITALS_BUILDDIR", ".")
VITALSD = os.path.join(BUILD, "daemon", "vitalsd")
VITALS = os.path.join(BUILD, "client", "vitals")
PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
BURN_TICKS = 3 * HZ
# The BPF task iterator (the scan's source when it loads) splits a task's
# CPU time into utime and stime itself and floors each to ticks, so its sum
# may be a tick under /proc/PID/stat's; what the series must equal is the
# kernel's ticks within that.
TICK_SLACK = 2.5

# step 6: the child's calls, the GPU devices of the fixture trees and what
# the test advances (device: {hz: ms}) and sets the busy sources to
SC_COMM = "prom_sc_child"
N_FSYNC = 100
N_SLEEP = 20
SLEEP_NS = 10000000
SYS_NANOSLEEP = {"x86_64": 35, "aarch64": 101}
GPU_TS = {"kgsl-3d0": "class/kgsl/kgsl-3d0/devfreq/trans_stat",
          "1c500000.mali": "class/devfreq/1c500000.mali/trans_stat"}
GPU_ADVANCE = {"kgsl-3d0": {257000000: 1000, 585000000: 250},
               "1c500000.mali": {471000000: 400, 848000000: 35}}
# kgsl: gpubusy (busy us, total us) per reading; the Mali: utilisation %
GPU_BUSY = {"kgsl-3d0": ("class/kgsl/kgsl-3d0/gpubusy", "  25000  100000\n",
                         0.25),
            "1c500000.mali": ("devices/platform/1c500000.mali/utilisation",
                              "62\n", 0.62)}

started = []  # (Popen) of what this test started, stopped at the end
burners = []  # pids of the burners forked here


def fail(msg):
    print("FAIL: " + msg, flush=True)
    cleanup()
    sys.exit(1)


def cleanup():
    for pid in burners:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass
    burners.clear()
    for p in started:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def ticks(pid):
    """utime + stime of pid, from /proc/PID/stat (fields 14, 15)."""
    with open("/proc/%d/stat" % pid) as f:
        rest = f.read().rsplit(")", 1)[1].split()
    return int(rest[11]) + int(rest[12]), int(rest[19])  # and starttime


def prom(port, path, **params):
    url = "http://127.0.0.1:%d%s?%s" % (port, path,
                                        urllib.parse.urlencode(params))
    with urllib.request.urlopen(url, timeout=10) as r:
        doc = json.load(r)
    if doc.get("status") != "success":
        fail("prometheus %s: %s" % (path, doc))
    return doc["data"]


def query(port, q, t=None):
    kw = {"query": q}
    if t is not None:
        kw["time"] = "%.3f" % t
    return prom(port, "/api/v1/query", **kw)["result"]


def page(mport):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % mport,
                                timeout=10) as r:
        return r.read().decode()


def page_value(text, name, labels):
    want = ",".join('%s="%s"' % kv for kv in labels)
    for line in text.splitlines():
        if line.startswith(name + "{" + want + "}") or \
                (not labels and line.startswith(name + " ")):
            return float(line.rsplit(" ", 1)[1])
    fail("no %s{%s} on the page" % (name, want))


def until(what, fn, secs):
    end = time.time() + secs
    while time.time() < end:
        v = fn()
        if v:
            return v
        time.sleep(0.2)
    fail("timed out waiting for " + what)


def burner(ready_w, go_r, done_w):
    """Child: idle until told, burn BURN_TICKS of CPU, idle until killed."""
    os.write(ready_w, b"r")
    os.read(go_r, 1)
    t0 = os.times()
    while True:
        t = os.times()
        if (t.user + t.system - t0.user - t0.system) * HZ >= BURN_TICKS:
            break
    os.write(done_w, b"d")
    signal.pause()
    os._exit(0)


def fork_burner(want_pid=None):
    """A burner, ready and idle: (pid, go_w, done_r). With want_pid, forked
    again (the others killed) until the kernel hands it that pid."""
    for attempt in range(400):
        ready_r, ready_w = os.pipe()
        go_r, go_w = os.pipe()
        done_r, done_w = os.pipe()
        if want_pid is not None:
            with open("/proc/sys/kernel/ns_last_pid", "w") as f:
                f.write(str(want_pid - 1))
        pid = os.fork()
        if pid == 0:
            try:
                burner(ready_w, go_r, done_w)
            finally:
                os._exit(0)
        for fd in (ready_w, go_r, done_w):
            os.close(fd)
        os.read(ready_r, 1)
        os.close(ready_r)
        if want_pid is None or pid == want_pid:
            burners.append(pid)
            return pid, go_w, done_r
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(go_w)
        os.close(done_r)
    fail("pid %d not handed out again in 400 forks" % want_pid)


def series(port, pid, t, rng="5m"):
    """Raw samples of the pid's CPU series in [t - rng, t]: per
    process_start_time, {timestamp: user + system seconds}."""
    out = {}
    sel = 'process_cpu_time_seconds_total{process_pid="%d"}[%s]' % (pid, rng)
    for r in query(port, sel, t):
        st = r["metric"]["process_start_time"]
        acc = out.setdefault(st, {})
        for ts, v in r["values"]:
            acc[ts] = acc.get(ts, 0.0) + float(v)
    return out


def burn(pid, go_w, done_r, pport):
    """Idle, burn, idle with scrapes on both sides: kernel ticks before and
    after, and the scrape times (the last before the burn, the last)."""
    time.sleep(2.5)  # flat: several samples and scrapes
    k0, start = ticks(pid)
    t_go = time.time()
    os.write(go_w, b"g")
    os.read(done_r, 1)
    time.sleep(0.3)
    k1, _ = ticks(pid)
    # flat again, and scraped: a sample at k1 that Prometheus has
    label = start_label(start)

    def scraped():
        s = series(pport, pid, time.time())
        if any(abs(v * HZ - k1) <= TICK_SLACK for v in s.get(label, {}).values()):
            return True
        scraped.last = s
        return False
    scraped.last = None
    try:
        until("the burner's final value scraped", scraped, 15)
    except SystemExit:
        print("pid %d start %s kernel %d ticks; series: %s" %
              (pid, label, k1, scraped.last))
        raise
    time.sleep(1.2)
    return k0, k1, start, t_go


def start_label(start):
    if HZ == 100:
        return "%d.%02d" % (start // 100, start % 100)
    return "%d/%d" % (start, HZ)


def put(root, rel, text):
    """rel under root replaced at once (a reader sees old or new)."""
    path = os.path.join(root, rel)
    with open(path + ".new", "w") as f:
        f.write(text)
    os.rename(path + ".new", path)


def advanced(text, adds):
    """trans_stat text with adds[hz] ms more in the time(ms) column (the
    column's right edge kept)."""
    out = []
    for line in text.splitlines(True):
        head, sep, _ = line.partition(":")
        key = head.replace("*", "").strip()
        if sep and key.isdigit() and int(key) in adds:
            m = re.search(r"(\s+)(\d+)(\s*)$", line)
            new = str(int(m.group(2)) + adds[int(key)])
            pad = max(1, len(m.group(1)) + len(m.group(2)) - len(new))
            line = line[:m.start()] + " " * pad + new + m.group(3)
        out.append(line)
    return "".join(out)


class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def sc_child(dirpath, w):
    """Child: comm SC_COMM, N_FSYNC fsync calls, N_SLEEP nanosleep(2)
    calls of SLEEP_NS (the syscall itself: glibc's nanosleep() is
    clock_nanosleep), each timed on CLOCK_BOOTTIME; their sum to w."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        nr = SYS_NANOSLEEP[platform.machine()]
        with open("/proc/self/comm", "w") as f:
            f.write(SC_COMM)
        fd = os.open(os.path.join(dirpath, "fsync.dat"),
                     os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        for _ in range(N_FSYNC):
            os.write(fd, b"x")
            os.fsync(fd)
        os.close(fd)
        ts = Timespec(0, SLEEP_NS)
        total = 0
        for _ in range(N_SLEEP):
            t = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
            if libc.syscall(ctypes.c_long(nr), ctypes.byref(ts), None) != 0:
                os._exit(3)
            total += time.clock_gettime_ns(time.CLOCK_BOOTTIME) - t
        os.write(w, str(total).encode())
        os._exit(0)
    finally:
        os._exit(2)


def target(pport, mport):
    """Prometheus' active target on mport, or None."""
    try:
        d = prom(pport, "/api/v1/targets")
    except OSError:
        return None
    for t in d.get("activeTargets", []):
        if t.get("scrapeUrl", "").startswith("http://127.0.0.1:%d/" % mport):
            return t
    return None


def one(pport, q, t=None):
    """The single sample's value of an instant query, or None."""
    r = query(pport, q, t)
    if len(r) > 1:
        fail("%s: %d series" % (q, len(r)))
    return float(r[0]["value"][1]) if r else None


def issue22(tmp, pport, mport2, bpf):
    """Step 6: the GPU families and the syscall families of the second
    daemon through Prometheus. Returns the figures for the log line."""
    root = os.path.join(tmp, "sys")
    src = os.environ.get("VITALS_SRCDIR",
                         os.path.join(os.path.dirname(__file__), ".."))
    for kind in ("adreno", "mali"):
        shutil.copytree(os.path.join(src, "tests", "fixtures", "gpufreq",
                                     kind), root, symlinks=True,
                        dirs_exist_ok=True)
    state = os.path.join(tmp, "state2")
    os.mkdir(state, 0o700)
    conf = os.path.join(tmp, "vitalsd2.conf")
    with open(conf, "w") as f:
        f.write("interval_ms = 250\nwindow_s = 1\nftrace = off\n"
                "gpumem_load = off\nbpf_load = off\n"
                "sys_root = %s\n" % root)
        if bpf:
            f.write("syscall_trace = on\nsyscalls = fsync,nanosleep\n")
    vlog = open(os.path.join(tmp, "vitalsd2.log"), "w")
    vd2 = subprocess.Popen([VITALSD, "-f", "-c", conf, "--state-dir", state,
                            "--socket", os.path.join(state, "vitalsd.sock"),
                            "--store-spool-dir", "off", "--scanner",
                            "procfs", "--metrics-listen",
                            "127.0.0.1:%d" % mport2],
                           stderr=vlog)
    started.append(vd2)
    t_start = time.time()

    # the trees read: a window with both devices' states on the page
    def baseline():
        try:
            text = page(mport2)
        except OSError:
            return False
        return all('vitals_gpu_time_in_state_seconds_total{device="%s"' % d
                   in text for d in GPU_TS)
    until("the GPU trees read by the second daemon", baseline, 15)
    if bpf:
        until("the second daemon's tracer on", lambda:
              "vitals_syscall_lost_total" in page(mport2), 10)
    for d, rel in GPU_TS.items():
        with open(os.path.join(root, rel)) as f:
            put(root, rel, advanced(f.read(), GPU_ADVANCE[d]))
    for d, (rel, text, _) in GPU_BUSY.items():
        put(root, rel, text)

    pid, child_sum = None, 0
    t0 = time.time()
    if bpf:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            sc_child(tmp, w)
        os.close(w)
        got = b""
        while True:
            b = os.read(r, 64)
            if not b:
                break
            got += b
        os.close(r)
        _, st = os.waitpid(pid, 0)
        if st != 0 or not got:
            fail("the syscall child ended with %#x" % st)
        child_sum = int(got)

    calls = 'vitals_syscall_calls_total{pid="%d",syscall="%s"}'
    tis = ('vitals_gpu_time_in_state_seconds_total{device="%s",hz="%d"}')

    def all_in():
        now = time.time()
        want = [(tis % (d, hz), ms / 1000.0)
                for d, adds in GPU_ADVANCE.items()
                for hz, ms in adds.items()]
        want += [('vitals_gpu_busy_ratio{device="%s"}' % d, ratio)
                 for d, (_, _, ratio) in GPU_BUSY.items()]
        if bpf:
            want += [(calls % (pid, "fsync"), N_FSYNC),
                     (calls % (pid, "nanosleep"), N_SLEEP)]
        for q, v in want:
            got = one(pport, q, now)
            if got != v:
                all_in.why = "%s = %s, want %s" % (q, got, v)
                return None
        return now
    all_in.why = None
    end = time.time() + 15
    while (t1 := all_in()) is None:
        if time.time() > end:
            try:
                print(page(mport2))
            except OSError as e:
                print("no page: %s" % e)
            fail("the second daemon's figures in Prometheus: %s" %
                 all_in.why)
        time.sleep(0.2)

    # every state of each device: exactly what the test advanced
    nstates = 0
    for d, adds in GPU_ADVANCE.items():
        rs = query(pport, 'vitals_gpu_time_in_state_seconds_total'
                   '{device="%s"}' % d, t1)
        if len(rs) < len(adds):
            fail("%s: %d states in Prometheus" % (d, len(rs)))
        for r in rs:
            hz = int(r["metric"]["hz"])
            if float(r["value"][1]) != adds.get(hz, 0) / 1000.0:
                fail("%s %d Hz: %s s, advanced %d ms" %
                     (d, hz, r["value"][1], adds.get(hz, 0)))
            nstates += 1
    out = {"gpu_states": nstates,
           "busy": {d: one(pport, 'vitals_gpu_busy_ratio{device="%s"}' % d,
                           t1) for d in GPU_BUSY}}
    if bpf:
        # the child's own calls, and its nanosleep time against its sum
        q = ('vitals_syscall_time_seconds_total{pid="%d",'
             'syscall="nanosleep"}' % pid)
        tsum = one(pport, q, t1)
        if tsum is None or abs(tsum * 1e9 / child_sum - 1) > 0.10:
            fail("nanosleep time %s s, the child's own %.6f s" %
                 (tsum, child_sum / 1e9))
        cm = query(pport, calls % (pid, "fsync"), t1)[0]["metric"]
        if cm.get("comm") != SC_COMM:
            fail("the child's series has comm %s" % cm.get("comm"))
        # the histogram over the child's span: each bucket at t1 less
        # its value at t0 (the series may not exist yet at t0)
        sel = 'vitals_syscall_latency_seconds_bucket{syscall="nanosleep"}'
        cnt = 'vitals_syscall_latency_seconds_count{syscall="nanosleep"}'
        if query(pport, sel, t0):
            span = "%s - %s @ %.3f" % (sel, sel, t0)
            nq = "%s - %s @ %.3f" % (cnt, cnt, t0)
        else:
            span, nq = sel, cnt
        n_all = one(pport, nq, t1)
        if n_all is None or n_all < N_SLEEP:
            fail("nanosleep histogram: %s calls over the child's span, the "
                 "child made %d" % (n_all, N_SLEEP))
        # The family is per syscall, every process's calls in it: over the
        # span Prometheus' own runtime sleeps (sysmon: 20 us to 10 ms) are
        # most of them. The child's median is then the call of rank
        # N_SLEEP / 2 from the top, every other call being no longer
        # than the child's: q = 1 - (N_SLEEP / 2) / n_all.
        q = 1 - (N_SLEEP / 2.0) / n_all
        p50 = one(pport, "histogram_quantile(%.9f, %s)" % (q, span), t1)
        mixed = one(pport, "histogram_quantile(0.5, %s)" % span, t1)
        if p50 is None or not SLEEP_NS / 2e9 <= p50 <= SLEEP_NS * 2 / 1e9:
            fail("the child's nanosleep median %s s (q %.4f of %d calls over "
                 "its span, the child's %d), the sleep %.3f s" %
                 (p50, q, n_all, N_SLEEP, SLEEP_NS / 1e9))
        out.update(pid=pid, fsync=N_FSYNC, tsum=tsum, child=child_sum / 1e9,
                   p50=p50, n_all=n_all, q=q, mixed=mixed)
    tgt = target(pport, mport2)
    if tgt is None or tgt["health"] != "up" or tgt.get("lastError"):
        fail("second target: %s" % tgt)
    vd2.terminate()
    if vd2.wait(20) != 0:
        fail("the second vitalsd ended with %d" % vd2.returncode)
    out["secs"] = time.time() - t_start
    return out


def main():
    bpf = len(sys.argv) > 1 and sys.argv[1] == "bpf"
    if os.geteuid() != 0:
        print("not root: skipped")
        sys.exit(77)
    if not os.access(PROMETHEUS, os.X_OK):
        fail("no prometheus binary (scripts/deps.sh test installs it)")
    tmp = tempfile.mkdtemp(prefix="vitals-prom-")
    pins = "/sys/fs/bpf/vitals-prom-%d" % os.getpid()
    mport, pport, mport2 = free_port(), free_port(), free_port()
    state = os.path.join(tmp, "state")
    os.mkdir(state, 0o700)
    conf = os.path.join(tmp, "vitalsd.conf")
    with open(conf, "w") as f:
        f.write("interval_ms = 250\nwindow_s = 2\nftrace = off\n"
                "gpumem_load = off\nmetrics_top_n = 1000\n"
                "metrics_max_connections = 4\nmetrics_timeout_ms = 1500\n"
                "metrics_max_request = 1024\n")
        f.write("bpffs = %s\n" % pins if bpf else "bpf_load = off\n")
    sock = os.path.join(state, "vitalsd.sock")
    vlog = open(os.path.join(tmp, "vitalsd.log"), "w")
    vd = subprocess.Popen([VITALSD, "-f", "-c", conf, "--state-dir", state,
                           "--socket", sock, "--store-spool-dir", "off",
                           "--metrics-listen", "127.0.0.1:%d" % mport],
                          stderr=vlog)
    started.append(vd)
    pconf = os.path.join(tmp, "prometheus.yml")
    with open(pconf, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                "scrape_configs:\n  - job_name: vitals\n"
                "    static_configs:\n"
                "      - targets: ['127.0.0.1:%d']\n"
                "  - job_name: vitals_issue22\n"
                "    static_configs:\n"
                "      - targets: ['127.0.0.1:%d']\n" % (mport, mport2))
    plog = open(os.path.join(tmp, "prometheus.log"), "w")
    pr = subprocess.Popen([PROMETHEUS, "--config.file", pconf,
                           "--storage.tsdb.path", os.path.join(tmp, "tsdb"),
                           "--web.listen-address", "127.0.0.1:%d" % pport,
                           "--log.level", "warn"],
                          stdout=plog, stderr=plog)
    started.append(pr)
    t_begin = time.time()

    # 1. up, parsed as OpenMetrics
    def target_up():
        t = target(pport, mport)
        if t and t["health"] == "up":
            return t
        if t and t.get("lastError"):
            print("target: %s" % t["lastError"])
        return None
    tgt = until("the target up", target_up, 30)
    if tgt.get("lastError"):
        fail("scrape error: %s" % tgt["lastError"])
    md = prom(pport, "/api/v1/metadata", metric="process_cpu_time_seconds")
    units = [m.get("unit") for m in md.get("process_cpu_time_seconds", [])]
    if "seconds" not in units:
        fail("no OpenMetrics UNIT in Prometheus' metadata: %s" % md)
    print("target up, parsed as OpenMetrics (unit %s)" % units[0])

    # 2. a burner's increase() and rate() against its kernel ticks
    pid, go_w, done_r = fork_burner()
    k0, k1, start, t_go = burn(pid, go_w, done_r, pport)
    now = time.time()
    s = series(pport, pid, now).get(start_label(start))
    if not s:
        fail("no series for pid %d start %s" % (pid, start_label(start)))
    ts = sorted(s)
    before = [t for t in ts if t < t_go and abs(s[t] * HZ - k0) <= TICK_SLACK]
    if not before:
        fail("no scrape of pid %d before its burn at %d ticks: %s" %
             (pid, k0, [(t, s[t]) for t in ts[:5]]))
    ta, tb = before[-1], ts[-1]
    if abs(s[tb] * HZ - k1) > TICK_SLACK:
        fail("last scrape %.2f s, kernel %d ticks" % (s[tb], k1))
    rng_ms = int(round((tb - ta) * 1000)) + 1
    sel = ('process_cpu_time_seconds_total{process_pid="%d",'
           'process_start_time="%s"}[%dms]' % (pid, start_label(start),
                                                rng_ms))
    inc = sum(float(r["value"][1]) for r in
              query(pport, "increase(%s)" % sel, tb))
    rate = sum(float(r["value"][1]) for r in
               query(pport, "rate(%s)" % sel, tb))
    kern = (k1 - k0) / HZ
    krate = kern / (rng_ms / 1000.0)
    print("burner pid %d: kernel %d ticks (%.2f s) over %.3f s; "
          "Prometheus increase() %.4f s (%+.2f %%), rate() %.4f vs kernel "
          "%.4f (%+.2f %%)" % (pid, k1 - k0, kern, rng_ms / 1000.0, inc,
                                (inc / kern - 1) * 100, rate, krate,
                                (rate / krate - 1) * 100))
    if abs(inc / kern - 1) > 0.05 or abs(rate / krate - 1) > 0.05:
        fail("increase()/rate() off by more than 5 % from the kernel")

    # 3. the same pid again, a new instance
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    burners.remove(pid)
    old_start = start
    pid2, go_w2, done_r2 = fork_burner(want_pid=pid)
    k0b, k1b, start2, _ = burn(pid2, go_w2, done_r2, pport)
    if start2 == old_start:
        fail("the second instance has the first one's start time")
    now = time.time()
    per = series(pport, pid, now)
    if set(per) != {start_label(old_start), start_label(start2)}:
        fail("pid %d: series %s, want the two instances" %
             (pid, sorted(per)))
    resets = query(pport, 'resets(process_cpu_time_seconds_total'
                   '{process_pid="%d"}[5m])' % pid, now)
    if len(resets) != 4 or any(float(r["value"][1]) != 0 for r in resets):
        fail("pid %d: resets %s" % (pid, resets))
    last2 = per[start_label(start2)][max(per[start_label(start2)])]
    if abs(last2 * HZ - k1b) > TICK_SLACK:
        fail("second instance at %.2f s, its kernel ticks %d" % (last2, k1b))
    print("pid %d reused (ns_last_pid): two series, starts %s and %s, no "
          "reset; the second at %.2f s = its own %d ticks" %
          (pid, start_label(old_start), start_label(start2), last2, k1b))
    os.kill(pid2, signal.SIGKILL)
    os.waitpid(pid2, 0)
    burners.remove(pid2)

    # 5. cgroups (where there is a v2 hierarchy, or a hybrid's) and BPF
    # sums (closed windows)
    text = page(mport)
    if any(os.path.exists("/sys/fs/cgroup/%scgroup.controllers" % d)
           for d in ("", "unified/")):
        n = query(pport, "count(vitals_cgroup_cpu_time_seconds_total"
                  "{cgroup_id!=\"\"})", time.time())
        if not n or float(n[0]["value"][1]) < 1:
            fail("no cgroup series in Prometheus")
        print("cgroups: %d series scraped" % int(float(n[0]["value"][1])))
    if bpf:
        until("BPF on-CPU on the page", lambda: page_value(
            page(mport), "vitals_sched_oncpu_seconds_total", []) > 0, 15)
        print("BPF: vitals_sched_oncpu_seconds_total %.2f" % page_value(
            page(mport), "vitals_sched_oncpu_seconds_total", []))
    elif "vitals_sched_" in text:
        fail("BPF series without BPF")

    # 6. issue 22's families, from a second daemon
    f = issue22(tmp, pport, mport2, bpf)
    print("GPU (fixture trees): %d states' seconds exactly the ms advanced "
          "/ 1000 (0 where not advanced); busy ratios %s; in %.1f s" %
          (f["gpu_states"], ", ".join("%s %g" % kv for kv in
                                      sorted(f["busy"].items())), f["secs"]))
    if bpf:
        print("syscalls: child pid %d: fsync calls %d; nanosleep time %.6f s, "
              "the child's own %.6f s (%+.2f %%); nanosleep histogram over "
              "its span: %d calls (the child's %d), the child's median "
              "(q %.4f) %.6f s against its %.3f s sleeps; the whole "
              "family's p50 %.6f s" %
              (f["pid"], f["fsync"], f["tsum"], f["child"],
               (f["tsum"] / f["child"] - 1) * 100, f["n_all"], N_SLEEP,
               f["q"], f["p50"], SLEEP_NS / 1e9, f["mixed"]))

    # 4. limits, with Prometheus stopped so that only this test connects
    pr.terminate()
    pr.wait(20)
    text = page(mport)
    base = {r: page_value(text, "vitals_metrics_refused_total",
                          [("reason", r)])
            for r in ("connections", "timeout", "bad_request", "not_found")}

    def status_of(data):
        c = socket.create_connection(("127.0.0.1", mport), timeout=5)
        c.sendall(data)
        got = c.recv(200)
        c.close()
        return int(got.split()[1]) if got else 0

    big = b"GET /metrics HTTP/1.1\r\nX-Pad: " + b"a" * 2000 + b"\r\n\r\n"
    if status_of(big) != 431:
        fail("an oversized request was not refused with 431")
    if status_of(b"GET /nope HTTP/1.1\r\n\r\n") != 404:
        fail("a path other than /metrics was not 404")
    # a trickle: one header byte every 200 ms, closed at the deadline
    c = socket.create_connection(("127.0.0.1", mport), timeout=5)
    t0 = time.time()
    c.sendall(b"GET /metrics HTTP/1.1\r\n")
    closed = None
    for _ in range(40):
        try:
            c.sendall(b"X")
            c.settimeout(0.2)
            if c.recv(10) == b"":
                closed = time.time() - t0
                break
        except socket.timeout:
            continue
        except OSError:
            closed = time.time() - t0
            break
    c.close()
    if closed is None or not 1.3 <= closed <= 3.5:
        fail("a trickling client was not cut at 1.5 s (%s)" % closed)
    # the cap: four held, the fifth refused at once
    held = [socket.create_connection(("127.0.0.1", mport), timeout=5)
            for _ in range(4)]
    time.sleep(0.3)
    if status_of(b"GET /metrics HTTP/1.1\r\n\r\n") != 503:
        fail("a fifth connection was not refused with 503")
    for h in held:
        h.close()
    time.sleep(0.3)
    text = page(mport)
    got = {r: page_value(text, "vitals_metrics_refused_total",
                         [("reason", r)]) - base[r] for r in base}
    want = {"connections": 1, "timeout": 1, "bad_request": 1,
            "not_found": 1}
    if got != want:
        fail("refusals counted %s, want %s" % (got, want))
    run = subprocess.run([VITALS, "--socket", sock, "--json", "health"],
                         capture_output=True, text=True, timeout=20)
    if run.returncode != 0:
        fail("vitals health: %s" % run.stderr)
    mh = json.loads(run.stdout)
    mh = mh.get("health", mh).get("metrics")
    if mh is None:
        fail("no metrics in vitals --json health")
    for k, n in (("cap_refused", 1), ("timed_out", 1), ("bad_requests", 1),
                 ("not_found", 1)):
        if int(mh.get(k, 0)) < n:
            fail("health.metrics.%s = %s" % (k, mh.get(k)))
    run = subprocess.run([VITALS, "--socket", sock, "health"],
                         capture_output=True, text=True, timeout=20)
    if "Metrics: /metrics on 127.0.0.1:%d" % mport not in run.stdout:
        fail("vitals health text has no Metrics line:\n" + run.stdout)
    print("limits: 431, 404, a trickle cut at %.2f s, 503 at the cap; "
          "counted on the page and in vitals health" % closed)
    vd.terminate()
    if vd.wait(20) != 0:
        fail("vitalsd ended with %d" % vd.returncode)
    if bpf:
        shutil.rmtree(pins, ignore_errors=True)
    shutil.rmtree(tmp, ignore_errors=True)
    print("ok in %.1f s" % (time.time() - t_begin))


if __name__ == "__main__":
    try:
        main()
    finally:
        cleanup()
