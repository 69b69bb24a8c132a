#!/usr/bin/env python3
"""The inside of bench/compare.sh: runs as the unprivileged user, inside the private network
namespace the script made, and writes the markdown report on stdout.

Starts the servers (iperf3, globus-gridftp-server, xrootd, sshd, pxferd), runs every (work, tool)
pair round by round with the tools interleaved, measures each run (wall time, client CPU and
peak RSS from wait4, server CPU from /proc/PID/stat of the server's own process tree, server
peak RSS from VmHWM), and stops the servers by PID at the end, also on failure.

Configuration comes from the environment (compare.sh documents the variables)."""

import filecmp
import json
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

E = os.environ
WORK = E["PXCMP_WORK_DIR"]
BIN = E["PXCMP_BIN"]
ROUNDS = int(E.get("PXCMP_ROUNDS", "3"))
LARGE = E.get("PXCMP_LARGE", "2G")
STREAMS = [int(s) for s in E.get("PXCMP_STREAMS", "1 4 8").split()]
SMALL_COUNT = int(E.get("PXCMP_SMALL_COUNT", "10000"))
SMALL_SIZE = E.get("PXCMP_SMALL_SIZE", "64K")
SMALL_CONC = int(E.get("PXCMP_SMALL_CONCURRENCY", "8"))
ENC_STREAMS = int(E.get("PXCMP_ENC_STREAMS", "4"))
WORKS = E.get("PXCMP_WORKS", "ceiling large small encrypt").split()
TOOLS = E.get("PXCMP_TOOLS", "pxfer gridftp xrdcp xrdcp-tuned scp").split()
TIMEOUT = float(E.get("PXCMP_TIMEOUT", "900"))
CHECK_ALL = E.get("PXCMP_CHECK_ALL", "0") == "1"  # compare contents every round, not only the first
# Touch (and free) as much memory as the run will write, just before it starts: this VM's balloon
# hands freed memory back to its host (free page reporting), and the first write to such a page
# faults on the host, 0.5-2 s per 2 GiB written into /dev/shm, whichever tool meets it
# (docs/performance.md section 12). Warmed, every tool writes into memory the guest holds, as on
# real hardware. PXCMP_WARM=0 turns it off.
WARM = E.get("PXCMP_WARM", "1") == "1"

REAP_WAIT = float(E.get("PXCMP_REAP_WAIT", "0.3"))
PORTS = {"pxfer": 7521, "gridftp": 2811, "xrootd": 1094, "iperf3": 5201, "ssh": 2222}
TICK = os.sysconf("SC_CLK_TCK")
GIB = 1 << 30


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def path(*parts):
    return os.path.join(WORK, *parts)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# --- process measurement -------------------------------------------------------------------

def read_stat(pid):
    """(ppid, utime+stime, cutime+cstime) in ticks of one process, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])


def tree(root):
    """The root and its live descendants (GridFTP and sshd fork a process per session)."""
    children = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = read_stat(int(name))
            if st:
                children.setdefault(st[0], []).append(int(name))
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def cpu_seconds(reaper):
    """CPU of a server: every process below its reaper (the server, its session children, and
    orphans that the reaper inherited and reaped: their times land in the reaper's
    cutime/cstime), never the reaper's own."""
    total = 0
    for p in tree(reaper):
        st = read_stat(p)
        if st:
            total += st[2] if p == reaper else st[1] + st[2]
    return total / TICK


def reaper_main(argv):
    """`compare_run.py --reaper [--write-pid F] -- CMD...`: a child subreaper around one server.
    sshd's session processes outlive their parent and would be reparented to PID 1 (their CPU
    then counted nowhere); below a subreaper they come here, and when reaped their times go to
    this process's cutime/cstime, where cpu_seconds reads them. Daemons that fork (GridFTP -S,
    xrootd -b, sshd) land here too. Exits when no child is left."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
        raise SystemExit("compare: prctl(PR_SET_CHILD_SUBREAPER) failed")
    pid_file = None
    if argv[0] == "--write-pid":
        pid_file, argv = argv[1], argv[2:]
    argv = argv[1:] if argv[0] == "--" else argv
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the runner stops the server itself, by its PID
    child = subprocess.Popen(argv, start_new_session=False)
    if pid_file:
        with open(pid_file + ".tmp", "w") as f:
            f.write(f"{child.pid}\n")
        os.rename(pid_file + ".tmp", pid_file)
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return
        except InterruptedError:
            continue


def vm_hwm_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            m = re.search(r"VmHWM:\s+(\d+)", f.read())
            return int(m.group(1)) if m else 0
    except OSError:
        return 0


def reset_hwm(root):
    """Resets the peak RSS of the server's processes (clear_refs 5), so each run has its own."""
    ok = True
    for p in tree(root):
        try:
            with open(f"/proc/{p}/clear_refs", "w") as f:
                f.write("5")
        except OSError:
            ok = False
    return ok


class PeakWatcher(threading.Thread):
    """Samples VmHWM over the server's process tree while a client runs: a GridFTP session child
    exits with its peak, so the peak has to be read while it lives."""

    def __init__(self, root):
        super().__init__(daemon=True)
        self.root, self.peak, self.stop = root, 0, threading.Event()

    def run(self):
        while not self.stop.is_set():
            for p in tree(self.root)[1:]:  # not the reaper itself
                self.peak = max(self.peak, vm_hwm_kib(p))
            self.stop.wait(0.05)

    def finish(self):
        self.stop.set()
        self.join()
        for p in tree(self.root)[1:]:
            self.peak = max(self.peak, vm_hwm_kib(p))
        return self.peak


# --- servers -------------------------------------------------------------------------------

SERVERS = {}  # name -> pid
PID_FILE = path("server-pids")  # compare.sh kills what is listed here if this script dies


def wait_port(port, what, seconds=20):
    end = time.time() + seconds
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"compare: {what} did not listen on 127.0.0.1:{port}; see its log in {WORK}")


def wait_pidfile(f, what):
    for _ in range(100):
        try:
            with open(f) as fh:
                text = fh.read().strip()
            if text:
                return int(text)
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"compare: {what} wrote no pid file {f}")


def spawn(name, argv, pid_file=None, foreground=False):
    """Starts a server below its own reaper; SERVERS[name] = (reaper pid, server pid)."""
    pid_file = pid_file or path(f"{name}.pid")
    out = open(path(f"{name}.log"), "ab")
    pre = ["--write-pid", pid_file] if foreground else []
    reaper = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--reaper", *pre, "--", *argv],
                              stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    with open(PID_FILE, "a") as f:
        f.write(f"{reaper.pid}\n")
    pid = wait_pidfile(pid_file, name)
    SERVERS[name] = (reaper, pid)
    with open(PID_FILE, "a") as f:
        f.write(f"{pid}\n")


TOKEN = None


def start_servers(needed):
    global TOKEN
    if "iperf3" in needed:
        spawn("iperf3", ["iperf3", "-s", "-p", str(PORTS["iperf3"])], foreground=True)
        wait_port(PORTS["iperf3"], "iperf3")
    if "pxfer" in needed:
        out = subprocess.run([f"{BIN}/pxferd", "token", "create", "bench", "--tokens", path("tokens")],
                             check=True, capture_output=True, text=True).stdout
        TOKEN = out.strip().split()[-1]
        spawn("pxfer", [f"{BIN}/pxferd", "--root", path("srv"), "--listen", f"127.0.0.1:{PORTS['pxfer']}",
                        "--tokens", path("tokens"), "--state-dir", path("pxferd-state")], foreground=True)
        wait_port(PORTS["pxfer"], "pxferd")
    if "gridftp" in needed:
        spawn("gridftp", ["globus-gridftp-server", "-control-interface", "127.0.0.1", "-data-interface", "127.0.0.1",
                          "-p", str(PORTS["gridftp"]), "-aa", "-anonymous-names-allowed", "*", "-S",
                          "-pidfile", path("gridftp.pid"), "-l", path("gridftp.log")])
        wait_port(PORTS["gridftp"], "globus-gridftp-server")
    if "xrootd" in needed:
        cfg = path("xrootd.cfg")
        with open(cfg, "w") as f:
            # chksum: the server's Adler-32 for xrdcp --cksum adler32:source (xrdcp-cksum)
            f.write(f"all.export {path('srv')}\nxrd.port {PORTS['xrootd']}\nxrd.network nodnr\nxrootd.chksum adler32\n")
        spawn("xrootd", ["xrootd", "-b", "-c", cfg, "-l", path("xrootd.log"), "-s", path("xrootd.pid"), "-n", "pxcmp"])
        wait_port(PORTS["xrootd"], "xrootd")
    if "ssh" in needed:
        d = path("ssh")
        os.makedirs(d, exist_ok=True)
        for key in ("host_key", "id"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{d}/{key}"], check=True)
        with open(f"{d}/id.pub") as src, open(f"{d}/authorized_keys", "w") as dst:
            dst.write(src.read())
        with open(f"{d}/sshd_config", "w") as f:
            f.write(f"Port {PORTS['ssh']}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nPidFile {d}/sshd.pid\n"
                    f"AuthorizedKeysFile {d}/authorized_keys\nUsePAM no\nStrictModes no\n"
                    "PasswordAuthentication no\nKbdInteractiveAuthentication no\nSubsystem sftp internal-sftp\n")
        spawn("ssh", ["/usr/sbin/sshd", "-f", f"{d}/sshd_config", "-E", path("sshd.log")], pid_file=f"{d}/sshd.pid")
        wait_port(PORTS["ssh"], "sshd")


def stop_servers():
    """SIGTERM to each server's PID; its reaper then exits by itself. SIGKILL after 5 s."""
    for reaper, pid in SERVERS.values():
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    for reaper, pid in SERVERS.values():
        try:
            reaper.wait(timeout=5)
        except subprocess.TimeoutExpired:
            for p in tree(reaper.pid):
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            reaper.wait()


# --- the tools' commands -------------------------------------------------------------------

def url(tool, rel):
    if tool == "pxfer":
        return f"pxfer://127.0.0.1:{PORTS['pxfer']}/{rel}"
    if tool == "gridftp":
        return f"ftp://127.0.0.1:{PORTS['gridftp']}{path('srv', rel)}"
    if tool.startswith("xrdcp"):
        return f"{'roots' if tool.endswith('tls') else 'root'}://127.0.0.1:{PORTS['xrootd']}/{path('srv', rel)}"
    return f"{os.environ.get('USER', 'pxbench')}@127.0.0.1:{path('srv', rel)}"


def client_env(tool):
    env = {"PATH": E["PATH"], "HOME": path("home"), "LANG": "C"}
    if tool.startswith("pxfer"):
        env.update(PXFER_TOKEN=TOKEN, PXFER_KNOWN_HOSTS=path("known_hosts"))
    if tool in ("xrdcp-tuned", "xrdcp-cksum"):
        env["XRD_CPUSEPGWRTRD"] = "0"
    return env


# A peer with the end-to-end check pxfer always makes (an Adler-32 of the whole file at both ends,
# compared): xrdcp --cksum adler32:source, the server's checksum against the one xrdcp computes
# while it writes (FTS3 asks for such a check by default). globus-url-copy has no such run here:
# its -verify-checksum computes only MD5 at the client ("Unable to use checksum algorithm
# ADLER32"), and with -r it fails on directories ("checksum read callback failed: Is a directory").
def verify_args(tool):
    if tool == "xrdcp-cksum":
        return ["--cksum", "adler32:source"]
    return []


def ssh_opts():
    d = path("ssh")
    return ["-c", "aes128-gcm@openssh.com", "-i", f"{d}/id", "-o", "StrictHostKeyChecking=no",
            "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes", "-P", str(PORTS["ssh"])]


def large_cmd(tool, direction, streams, encrypt=False):
    """argv moving the large file: put cli/large.bin -> srv/put.bin, get srv/large.bin -> cli/get.bin."""
    local_src, local_dst = path("cli", "large.bin"), path("cli", "get.bin")
    if tool == "pxfer":
        extra = ["--encrypt"] if encrypt else []
        if direction == "put":
            return [f"{BIN}/pxfer", "put", "-q", "-p", str(streams), *extra, local_src, url(tool, "put.bin")]
        return [f"{BIN}/pxfer", "get", "-q", "-p", str(streams), *extra, url(tool, "large.bin"), local_dst]
    if tool == "gridftp":
        base = ["globus-url-copy", "-fast", "-p", str(streams)]
        if direction == "put":
            return base + ["file://" + local_src, url(tool, "put.bin")]
        return base + [url(tool, "large.bin"), "file://" + local_dst]
    if tool.startswith("xrdcp"):
        base = ["xrdcp", "-f", "-N", "-S", str(streams), *verify_args(tool)]
        if direction == "put":
            return base + [local_src, url(tool, "put.bin")]
        return base + [url(tool, "large.bin"), local_dst]
    if tool == "scp":
        if direction == "put":
            return ["scp", "-q", *ssh_opts(), local_src, url(tool, "put.bin")]
        return ["scp", "-q", *ssh_opts(), url(tool, "large.bin"), local_dst]
    raise ValueError(tool)


def small_cmd(tool, direction):
    """argv moving the tree: put cli/tree -> srv/put-tree, get srv/tree -> cli/get-tree."""
    c = str(SMALL_CONC)
    if tool == "pxfer":
        if direction == "put":
            return [f"{BIN}/pxfer", "put", "-q", "-r", "-c", c, path("cli", "tree"), url(tool, "put-tree")]
        return [f"{BIN}/pxfer", "get", "-q", "-r", "-c", c, url(tool, "tree"), path("cli", "get-tree")]
    if tool == "pxfer-1file":  # the same bytes as one file: the rate a small-file batch is held to
        if direction == "put":
            return [f"{BIN}/pxfer", "put", "-q", path("cli", "total.bin"), url("pxfer", "put-total.bin")]
        return [f"{BIN}/pxfer", "get", "-q", url("pxfer", "total.bin"), path("cli", "get-total.bin")]
    if tool == "gridftp":
        base = ["globus-url-copy", "-fast", "-cc", c, "-r", "-cd"]
        if direction == "put":
            return base + ["file://" + path("cli", "tree") + "/", url(tool, "put-tree") + "/"]
        return base + [url(tool, "tree") + "/", "file://" + path("cli", "get-tree") + "/"]
    if tool.startswith("xrdcp"):
        base = ["xrdcp", "-r", "-f", "-N", "--parallel", c, *verify_args(tool)]
        if direction == "put":
            return base + [path("cli", "tree"), url(tool, "put-tree")]
        return base + [url(tool, "tree"), path("cli", "get-tree")]
    raise ValueError(tool)


# --- work and runs -------------------------------------------------------------------------

# On a disk (PXCMP_DATA_DIR, bench/compare.sh) a destination is moved aside, not removed, before
# the next run: ext4 allocates inodes slowly for about 30 s after 10,000 files were deleted (its
# allocator skips recently deleted inodes: `recently_deleted` and `find_inode_bit` took a third
# of a get -r client's samples), which would hit whichever tool ran next. Removed at the end.
ON_DISK = E.get("PXCMP_ON_DISK") == "1"


def rm(p):
    if ON_DISK and os.path.exists(p):
        os.makedirs(path("trash"), exist_ok=True)
        os.rename(p, path("trash", f"{len(os.listdir(path('trash')))}-{os.path.basename(p)}"))
        return
    subprocess.run(["rm", "-rf", p], check=True)


def tree_totals(top):
    files = total = 0
    for d, _, names in os.walk(top):
        for n in names:
            files += 1
            total += os.path.getsize(os.path.join(d, n))
    return files, total


def find_file(top, rel):
    """Where a tool put rel beneath top (xrdcp -r and GridFTP nest the tree differently)."""
    for d, _, names in os.walk(top):
        p = os.path.join(d, rel)
        if os.path.isfile(p):
            return p
    return None


class Work:
    def __init__(self, key, title, nbytes, tools, cmd, dest, check):
        self.key, self.title, self.bytes, self.tools = key, title, nbytes, tools
        self.cmd, self.dest, self.check = cmd, dest, check


def build_works():
    large = parse_size(LARGE)
    small_size = parse_size(SMALL_SIZE)
    works = []
    file_tools = [t for t in TOOLS if t in ("pxfer", "gridftp", "xrdcp", "xrdcp-tuned", "xrdcp-cksum")]
    for n in STREAMS:
        if "ceiling" in WORKS:
            works.append(Work(f"ceiling-{n}", f"iperf3 -P {n}, {large} bytes", large, ["iperf3"],
                              lambda t, n=n: ["iperf3", "-c", "127.0.0.1", "-p", str(PORTS["iperf3"]), "-P", str(n),
                                              "-n", str(large), "-J"], None, None))
        if "large" in WORKS:
            for d in ("get", "put"):
                dest = path("cli", "get.bin") if d == "get" else path("srv", "put.bin")
                works.append(Work(f"large-{d}-{n}", f"{d} 1 x {LARGE}, {n} stream(s)", large, file_tools,
                                  lambda t, d=d, n=n: large_cmd(t, d, n), dest,
                                  lambda dest=dest: check_file(dest, path("cli", "large.bin"))))
    if "small" in WORKS:
        total = SMALL_COUNT * small_size
        for d in ("get", "put"):
            dest = path("cli", "get-tree") if d == "get" else path("srv", "put-tree")
            single = path("cli", "get-total.bin") if d == "get" else path("srv", "put-total.bin")
            works.append(Work(f"small-{d}", f"{d} -r {SMALL_COUNT} x {SMALL_SIZE}, {SMALL_CONC} files at once", total,
                              file_tools + (["pxfer-1file"] if "pxfer" in file_tools else []),
                              lambda t, d=d: small_cmd(t, d), None, None))
            works[-1].dest_of = {"pxfer-1file": single}
            works[-1].tree_dest = dest
    if "encrypt" in WORKS:
        enc_tools = [t for t in TOOLS if t in ("pxfer", "scp", "xrdcp-tls")]
        for d in ("get", "put"):
            dest = path("cli", "get.bin") if d == "get" else path("srv", "put.bin")
            works.append(Work(f"enc-{d}", f"{d} 1 x {LARGE} encrypted (pxfer --encrypt -p {ENC_STREAMS})", large,
                              enc_tools, lambda t, d=d: large_cmd(t, d, ENC_STREAMS, encrypt=True), dest,
                              lambda dest=dest: check_file(dest, path("cli", "large.bin"))))
    return works


def check_file(dest, src):
    if os.path.getsize(dest) != os.path.getsize(src):
        return f"{dest}: size {os.path.getsize(dest)} != {os.path.getsize(src)}"
    return None


def server_of(tool):
    return {"pxfer": "pxfer", "pxfer-1file": "pxfer", "gridftp": "gridftp", "xrdcp": "xrootd",
            "xrdcp-tuned": "xrootd", "xrdcp-cksum": "xrootd", "xrdcp-tls": "xrootd", "scp": "ssh", "iperf3": "iperf3"}[tool]


WARM_CODE = ("import mmap, sys\n"
             "n = int(sys.argv[1])\n"
             "m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)\n"
             "for off in range(0, n, mmap.PAGESIZE):\n"
             "    m[off] = 1\n")


def warm_memory(nbytes):
    """Touches nbytes of anonymous memory, one byte a page, and gives it back (WARM above). In a
    process of its own: the clients forked from this one would inherit its peak RSS (wait4's
    ru_maxrss carries the parent's high-water mark across fork and exec)."""
    subprocess.run([sys.executable, "-c", WARM_CODE, str(nbytes)], check=True)


def run_one(work, tool, rnd):
    argv = work.cmd(tool)
    if work.key.startswith("small"):
        dest = work.dest_of.get(tool, work.tree_dest)
    else:
        dest = work.dest
    if dest:
        rm(dest)  # every tool writes a fresh destination, in every round
        if tool.startswith("xrdcp") and work.key.startswith("small"):
            os.makedirs(dest)  # xrdcp -r copies into an existing directory only
    if WARM and tool != "iperf3":
        warm_memory(work.bytes + (256 << 20))
    server = SERVERS[server_of(tool)][0].pid  # its reaper: the server and everything it forks
    reset_hwm(server)
    watcher = PeakWatcher(server)
    watcher.start()
    cpu0 = cpu_seconds(server)
    out_path = path("client.out")
    with open(out_path, "wb") as out:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=client_env(tool))
        deadline = time.time() + TIMEOUT
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.time() > deadline:
                p.kill()
            time.sleep(0.002)
        wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    time.sleep(REAP_WAIT)  # a forking server reaps its session child; its CPU lands in cutime then
    cpu1 = cpu_seconds(server)
    server_rss = watcher.finish()
    with open(out_path, "rb") as f:
        output = f.read().decode(errors="replace")
    error = None
    if p.returncode != 0:
        error = f"exit {p.returncode}: {output.strip()[-300:]}"
    nbytes = work.bytes
    if tool == "iperf3" and not error:
        j = json.loads(output)
        s = j["end"]["sum_received"]
        nbytes, wall = int(s["bytes"]), float(s["seconds"])
    elif not error and work.key.startswith("small"):
        if tool == "pxfer-1file":
            if os.path.getsize(dest) != nbytes:
                error = f"{dest}: wrong size"
        else:
            files, total = tree_totals(dest)
            if (files, total) != (SMALL_COUNT, nbytes):
                error = f"{dest}: {files} files, {total} bytes, expected {SMALL_COUNT} and {nbytes}"
            elif rnd == 1 or CHECK_ALL:
                src_top = path("cli", "tree") if work.key.endswith("put") else path("srv", "tree")
                for i in random.Random(1).sample(range(SMALL_COUNT), min(50, SMALL_COUNT)):
                    rel = os.path.join("%03d" % (i // 500), "f%06d" % i)
                    got = find_file(dest, rel)
                    if not got or not filecmp.cmp(got, os.path.join(src_top, rel), shallow=False):
                        error = f"{dest}: {rel} differs or is missing"
                        break
    elif not error and work.check:
        error = work.check()
        if not error and (rnd == 1 or CHECK_ALL) and not filecmp.cmp(dest, path("cli", "large.bin"), shallow=False):
            error = f"{dest}: contents differ"
    return {"work": work.key, "tool": tool, "round": rnd, "bytes": nbytes, "seconds": wall,
            "client_cpu": ru.ru_utime + ru.ru_stime, "client_rss_kib": ru.ru_maxrss,
            "server_cpu": cpu1 - cpu0, "server_rss_kib": server_rss, "error": error,
            "argv": argv}


# --- data ----------------------------------------------------------------------------------

def make_data(works):
    keys = {w.key.split("-")[0] for w in works}
    large = parse_size(LARGE)
    os.makedirs(path("cli"), exist_ok=True)
    os.makedirs(path("srv"), exist_ok=True)
    os.makedirs(path("home"), exist_ok=True)
    if keys & {"large", "enc"}:
        log(f"compare: writing {LARGE} of random data twice")
        with open("/dev/urandom", "rb") as r, open(path("cli", "large.bin"), "wb") as w:
            left = large
            while left:
                n = min(left, 16 << 20)
                w.write(r.read(n))
                left -= n
        subprocess.run(["cp", path("cli", "large.bin"), path("srv", "large.bin")], check=True)
    if "small" in keys:
        log(f"compare: writing {SMALL_COUNT} files of {SMALL_SIZE}")
        size = parse_size(SMALL_SIZE)
        top = path("cli", "tree")
        with open(path("cli", "total.bin"), "wb") as total:
            for i in range(SMALL_COUNT):
                d = os.path.join(top, "%03d" % (i // 500))  # 500 files a directory, as bench/small_files.sh
                os.makedirs(d, exist_ok=True)
                data = os.urandom(size)
                with open(os.path.join(d, "f%06d" % i), "wb") as f:
                    f.write(data)
                total.write(data)
        subprocess.run(["cp", "-r", top, path("srv", "tree")], check=True)
        subprocess.run(["cp", path("cli", "total.bin"), path("srv", "total.bin")], check=True)


# --- report --------------------------------------------------------------------------------

def fmt(x, digits=1):
    return "n/a" if x is None else f"{x:.{digits}f}"


def summarize(results, works):
    """Per (work, tool): median and min-max MB/s, median CPU s/GiB client and server, peak RSS."""
    rows = {}
    for w in works:
        for t in w.tools:
            rs = [r for r in results if r["work"] == w.key and r["tool"] == t and not r["error"]]
            fails = [r for r in results if r["work"] == w.key and r["tool"] == t and r["error"]]
            if not rs:
                rows[(w.key, t)] = {"ok": 0, "fail": len(fails)}
                continue
            rates = [r["bytes"] / r["seconds"] / 1e6 for r in rs]
            gib = [r["bytes"] / GIB for r in rs]
            rows[(w.key, t)] = {
                "ok": len(rs), "fail": len(fails),
                "median": statistics.median(rates), "min": min(rates), "max": max(rates),
                "first": rates[0] if rs[0]["round"] == 1 else None,
                "cpu_c": statistics.median(r["client_cpu"] / g for r, g in zip(rs, gib)),
                "cpu_s": statistics.median(r["server_cpu"] / g for r, g in zip(rs, gib)),
                "rss_c": max(r["client_rss_kib"] for r in rs) / 1024,
                "rss_s": max(r["server_rss_kib"] for r in rs) / 1024,
                "argv": rs[0]["argv"],
            }
    return rows


def short_argv(argv):
    return " ".join(a.replace(WORK, "$W").replace(BIN, "$BIN") for a in argv)


def report(results, works, meta):
    rows = summarize(results, works)
    out = []
    p = out.append
    p("# pxfer against GridFTP, XRootD, scp and iperf3: one run of bench/compare.sh\n")
    p("Written by `bench/compare.sh` (the acceptance figure of issue 12). Everything ran on loopback in a "
      "private network namespace, as an unprivileged user, with the data where the table below says; each (work, tool) pair "
      f"ran {ROUNDS} time(s), the tools interleaved round by round (each round starts with the next tool), "
      "and every run wrote a fresh destination (removed before the run).\n")
    p("| | |\n| --- | --- |")
    for k, v in meta.items():
        p(f"| {k} | {v} |")
    p("")
    p("MB/s = 10^6 bytes over the wall time of the client command (process start to exit; iperf3: its own "
      "receiver figure). CPU = seconds of user + system time per GiB moved: client from wait4 (with its "
      "children: scp's ssh), server from /proc/PID/stat of the server's own process and every process it "
      "forks (utime+stime+cutime+cstime deltas; each server runs below a child subreaper, so sshd's and "
      "GridFTP's session processes are counted even when they outlive their parent). Peak RSS in MiB: client from wait4, server the largest VmHWM among its processes (reset "
      "with clear_refs before each run). Medians over the rounds, min-max beside them; ratio = pxfer's "
      "median MB/s over the tool's.\n")
    ceilings = {}
    for w in works:
        p(f"## {w.title}\n")
        p("| tool | MB/s median | min-max | CPU s/GiB client | server | total | peak RSS MiB client / server | runs | pxfer/tool |")
        p("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        px = rows.get((w.key, "pxfer"), {})
        for t in w.tools:
            r = rows[(w.key, t)]
            if not r["ok"]:
                p(f"| {t} | failed | | | | | | 0 ok, {r['fail']} failed | |")
                continue
            ratio = px.get("median", 0) / r["median"] if px.get("median") and t != "pxfer" else None
            p(f"| {t} | {r['median']:.0f} | {r['min']:.0f}-{r['max']:.0f} | {r['cpu_c']:.2f} | {r['cpu_s']:.2f} | "
              f"{r['cpu_c'] + r['cpu_s']:.2f} | {r['rss_c']:.0f} / {r['rss_s']:.0f} | {r['ok']}"
              f"{', %d failed' % r['fail'] if r['fail'] else ''} | {fmt(ratio, 2) if ratio else ''} |")
            if t == "iperf3":
                ceilings[w.key.split("-")[1]] = r["median"]
        p("")
    p("## Against the issue's acceptance criteria\n")
    p(acceptance(rows, works, ceilings))
    p("## Exact commands (first round; $W is the work directory, $BIN the build's bin/)\n")
    p("```")
    seen = set()
    for w in works:
        for t in w.tools:
            r = rows[(w.key, t)]
            if r.get("argv") and (w.key, t) not in seen:
                seen.add((w.key, t))
                env = {"xrdcp-tuned": "XRD_CPUSEPGWRTRD=0 ", "xrdcp-cksum": "XRD_CPUSEPGWRTRD=0 ", "pxfer": "PXFER_TOKEN=... ", "pxfer-1file": "PXFER_TOKEN=... "}
                p(f"{w.key:12} {env.get(t, '')}{short_argv(r['argv'])}")
    p("```\n")
    p("Servers (started by the script as the same unprivileged user, stopped by PID):\n")
    p("```")
    for line in meta_servers():
        p(line)
    p("```\n")
    failures = [r for r in results if r["error"]]
    if failures:
        p("## Failed runs\n")
        for r in failures:
            p(f"- {r['work']} {r['tool']} round {r['round']}: {r['error']}")
        p("")
    p("<details><summary>Every run</summary>\n")
    p("| round | work | tool | MB/s | s | CPU client s | CPU server s | error |")
    p("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        rate = r["bytes"] / r["seconds"] / 1e6
        p(f"| {r['round']} | {r['work']} | {r['tool']} | {rate:.0f} | {r['seconds']:.2f} | {r['client_cpu']:.2f} | "
          f"{r['server_cpu']:.2f} | {r['error'] or ''} |")
    p("\n</details>")
    return "\n".join(out) + "\n"


def acceptance(rows, works, ceilings):
    lines = []

    def get(key, tool, field="median"):
        return rows.get((key, tool), {}).get(field)

    for key in [w.key for w in works]:
        px = get(key, "pxfer")
        if px is None:
            continue
        peers = {t: get(key, t) for t in ("gridftp", "xrdcp-tuned", "xrdcp", "scp") if get(key, t)}
        if key.startswith("large"):
            best_t = max(("gridftp", "xrdcp-tuned"), key=lambda t: peers.get(t) or 0)
            best = peers.get(best_t)
            n = key.split("-")[2]
            ceil = ceilings.get(n)
            cpu_px = get(key, "pxfer", "cpu_c") + get(key, "pxfer", "cpu_s")
            cpu_peers = [get(key, t, "cpu_c") + get(key, t, "cpu_s") for t in ("gridftp", "xrdcp-tuned") if get(key, t)]
            first = get(key, "pxfer", "first")
            lines.append(f"- {key}: pxfer {px:.0f} MB/s = {px / best:.2f}x {best_t} (goal 1.3x)"
                         + (f", {px / ceil:.2f}x iperf3 -P{n} (goal 0.6x)" if ceil else "")
                         + f"; CPU {cpu_px:.2f} s/GiB vs {', '.join(f'{c:.2f}' for c in cpu_peers)} (goal: below both)"
                         + (f"; first round {first:.0f} MB/s = {first / px:.2f}x the median (goal within 20 %)" if first else "")
                         if best else f"- {key}: pxfer {px:.0f} MB/s (no peer measured)")
        elif key.startswith("small"):
            g = peers.get("gridftp")
            one = get(key, "pxfer-1file")
            cpu_px = get(key, "pxfer", "cpu_c") + get(key, "pxfer", "cpu_s")
            cpu_peers = [get(key, t, "cpu_c") + get(key, t, "cpu_s") for t in ("gridftp", "xrdcp-tuned") if get(key, t)]
            lines.append(f"- {key}: pxfer {px:.0f} MB/s" + (f" = {px / g:.2f}x GridFTP -cc {SMALL_CONC} (goal 2x)" if g else "")
                         + (f", {px / one:.2f}x one file of the same size (goal 0.5x)" if one else "")
                         + f"; CPU {cpu_px:.2f} s/GiB vs {', '.join(f'{c:.2f}' for c in cpu_peers)} (goal: below both)")
        elif key.startswith("enc"):
            s = peers.get("scp")
            lines.append(f"- {key}: pxfer --encrypt {px:.0f} MB/s" + (f" = {px / s:.2f}x scp aes128-gcm (goal 2x)" if s else ""))
    return "\n".join(lines) + "\n"


SERVER_LINES = []


def meta_servers():
    return SERVER_LINES


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def versions():
    out = {}
    for pkg in ("globus-gridftp-server-progs", "globus-gass-copy-progs", "xrootd-server", "xrootd-client",
                "iperf3", "openssh-server"):
        r = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg], capture_output=True, text=True)
        out[pkg] = r.stdout or "?"
    return ", ".join(f"{k} {v}" for k, v in out.items())


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    works = build_works()
    needed = {server_of(t) for w in works for t in w.tools}
    load_before = uptime()
    make_data(works)
    try:
        start_servers(needed)
        SERVER_LINES.extend([
            f"pxferd --root $W/srv --listen 127.0.0.1:{PORTS['pxfer']} --tokens $W/tokens --state-dir $W/pxferd-state   # token from `pxferd token create bench --tokens $W/tokens`",
            f"globus-gridftp-server -control-interface 127.0.0.1 -data-interface 127.0.0.1 -p {PORTS['gridftp']} -aa -anonymous-names-allowed '*' -S -pidfile $W/gridftp.pid -l $W/gridftp.log",
            f"xrootd -b -c $W/xrootd.cfg -l $W/xrootd.log -s $W/xrootd.pid -n pxcmp   # all.export $W/srv, xrd.port {PORTS['xrootd']}, xrd.network nodnr",
            f"iperf3 -s -p {PORTS['iperf3']}",
            f"/usr/sbin/sshd -f $W/ssh/sshd_config   # port {PORTS['ssh']}, ed25519 keys, UsePAM no, Subsystem sftp internal-sftp",
        ])
        results = []
        t_start = time.time()
        for rnd in range(1, ROUNDS + 1):
            for w in works:
                k = (rnd - 1) % len(w.tools)
                for t in w.tools[k:] + w.tools[:k]:
                    r = run_one(w, t, rnd)
                    results.append(r)
                    log(f"round {rnd} {w.key:14} {t:12} {r['bytes'] / r['seconds'] / 1e6:8.0f} MB/s  "
                        f"{r['seconds']:6.2f} s  cpu c {r['client_cpu']:.2f} s {r['server_cpu']:.2f}"
                        + (f"  ERROR {r['error']}" if r["error"] else ""))
        elapsed = time.time() - t_start
    finally:
        stop_servers()
    load_after = uptime()
    meta = dict(json.loads(E.get("PXCMP_META", "{}")))
    meta["load before (uptime)"] = load_before
    meta["load after (uptime)"] = load_after
    # Only the load before the run says whether something else was running: the load after is
    # mostly the benchmark's own runs (two busy processes on two cores read as a load of 2-4).
    before = [float(x) for x in re.findall(r"load average: ([0-9.]+)", load_before)][:1]
    meta["machine state"] = ("LOADED: the 1-minute load was above half the cores before the run (other work on this "
                             "machine); absolute rates are lower than on an idle machine, the interleaved rounds keep "
                             "the ratios meaningful" if any(l > os.cpu_count() / 2 for l in before)
                             else "idle before the run (1-minute load below half the cores; the load after is the "
                                  "benchmark's own)")
    meta["memory"] = ("warmed before every run (the run's bytes + 256 MiB touched and freed, PXCMP_WARM=1): "
                      "this VM hands freed memory back to its host, and writes into such pages fault on the host "
                      "(docs/performance.md section 12)" if WARM else
                      "not warmed (PXCMP_WARM=0): a run may write into pages this VM handed back to its host")
    meta["rounds / duration"] = f"{ROUNDS} / {elapsed:.0f} s of runs"
    meta["peer versions"] = versions()
    with open(path("results.json"), "w") as f:
        json.dump(results, f)
    sys.stdout.write(report(results, works, meta))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--reaper":
        reaper_main(sys.argv[2:])
    else:
        main()
