/**
 * CPU time and memory of the `workerd` processes that `wrangler dev` started for this benchmark,
 * read from Linux's /proc (https://man7.org/linux/man-pages/man5/proc_pid_stat.5.html).
 * Owns finding them: every process named `workerd` that descends from this process (so another
 * `wrangler dev` on the machine is never counted), found again on each call because wrangler may
 * restart workerd.
 * Per stack (`stackCpuMs`): one `wrangler dev`'s process group (scripts/local-stack.ts starts each
 * in its own), its workerd processes apart from its other processes (wrangler's Node processes).
 * Also tells apart wrangler dev's own proxy: `wrangler dev` runs the Worker in one workerd and,
 * in front of it, a ProxyWorker in another workerd that owns the public port and relays every
 * request and WebSocket message to the Worker (wrangler 4's startDevWorker; production has no such
 * hop). Found as the workerd that holds the listening socket of that port (/proc/net/tcp, then the
 * socket inode among /proc/PID/fd: https://man7.org/linux/man-pages/man5/proc_pid_net.5.html).
 * Invariant: never throws; off Linux (no /proc) every reading is null.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/** Clock ticks per second of /proc's utime/stime (`getconf CLK_TCK`, almost always 100). */
export const CLOCK_TICKS_PER_SECOND: number = (() => {
  try {
    const n = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim());
    return Number.isInteger(n) && n > 0 ? n : 100;
  } catch {
    return 100;
  }
})();

interface ProcStat {
  pid: number;
  ppid: number;
  /** Process group (wrangler dev's own, for everything it starts: scripts/local-stack.ts). */
  pgrp: number;
  comm: string;
  /** utime + stime, clock ticks. */
  cpuTicks: number;
}

function readStat(pid: number): ProcStat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // comm is in parentheses and may contain spaces: split after the last ')'.
    const close = text.lastIndexOf(")");
    const comm = text.slice(text.indexOf("(") + 1, close);
    const fields = text
      .slice(close + 2)
      .trim()
      .split(" ");
    // fields[0] is state (field 3); ppid is field 4, pgrp 5, utime 14, stime 15.
    const ppid = Number(fields[1]);
    const pgrp = Number(fields[2]);
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    if (!Number.isFinite(ppid) || !Number.isFinite(utime) || !Number.isFinite(stime)) return null;
    return { pid, ppid, pgrp, comm, cpuTicks: utime + stime };
  } catch {
    return null;
  }
}

function allStats(): ProcStat[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const stats: ProcStat[] = [];
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(Number(name));
    if (stat) stats.push(stat);
  }
  return stats;
}

/**
 * The `workerd` processes descending from this process, with their CPU ticks; only those of
 * process group `group` (one `wrangler dev`) when it is given.
 */
function ownWorkerd(group?: number): ProcStat[] {
  const stats = allStats();
  const byPid = new Map(stats.map((s) => [s.pid, s]));
  const descends = (stat: ProcStat): boolean => {
    let current: ProcStat | undefined = stat;
    for (let depth = 0; current && depth < 64; depth++) {
      if (current.ppid === process.pid) return true;
      current = byPid.get(current.ppid);
    }
    return false;
  };
  return stats.filter(
    (s) => s.comm === "workerd" && (group === undefined || s.pgrp === group) && descends(s),
  );
}

const ticksToMs = (ticks: number): number => (ticks * 1000) / CLOCK_TICKS_PER_SECOND;

/**
 * Total CPU time (user + system) of this run's workerd processes (of one `wrangler dev` when
 * `group` is given), ms; null when none is found.
 */
export function workerdCpuMs(group?: number): number | null {
  const procs = ownWorkerd(group);
  if (procs.length === 0) return null;
  return ticksToMs(procs.reduce((sum, p) => sum + p.cpuTicks, 0));
}

/** Inodes of the TCP sockets listening on `port` (IPv4 and IPv6), from /proc/net/tcp{,6}. */
function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode …
      const fields = line.trim().split(/\s+/);
      const local = fields[1];
      if (!local || fields[3] !== "0A") continue; // 0A: TCP_LISTEN
      if (local.slice(local.lastIndexOf(":") + 1) === hexPort && fields[9]) inodes.add(fields[9]);
    }
  }
  return inodes;
}

/** Whether process `pid` holds one of the sockets `inodes`. */
function holdsSocket(pid: number, inodes: Set<string>): boolean {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  for (const fd of fds) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (target.startsWith("socket:[") && inodes.has(target.slice(8, -1))) return true;
    } catch {
      // closed between the listing and the read
    }
  }
  return false;
}

/** The CPU one `wrangler dev` spent, split by who spent it, ms (cumulative: subtract two readings). */
export interface StackCpu {
  /** Every workerd of the stack: the Worker's runtime and wrangler dev's proxy. */
  workerdMs: number;
  /** The workerd that listens on the stack's public port: wrangler dev's proxy; null if not found. */
  proxyMs: number | null;
  /**
   * Every other process of the stack's group: wrangler's Node processes (which read every
   * `console.log` of the Worker from workerd's standard output and print it) and the bundler.
   */
  wranglerMs: number;
}

/**
 * The CPU of the `wrangler dev` whose process group is `group` and whose proxy listens on
 * `proxyPort` (see the module header); null when none of its workerd processes is found.
 */
export function stackCpuMs(group: number, proxyPort: number): StackCpu | null {
  const inGroup = allStats().filter((s) => s.pgrp === group);
  const workerd = inGroup.filter((s) => s.comm === "workerd");
  if (workerd.length === 0) return null;
  const inodes = listeningInodes(proxyPort);
  const proxy = inodes.size > 0 ? workerd.filter((p) => holdsSocket(p.pid, inodes)) : [];
  const sum = (procs: ProcStat[]): number => ticksToMs(procs.reduce((total, p) => total + p.cpuTicks, 0));
  return {
    workerdMs: sum(workerd),
    proxyMs: proxy.length > 0 ? sum(proxy) : null,
    wranglerMs: sum(inGroup.filter((s) => s.comm !== "workerd")),
  };
}

/**
 * Total resident memory (VmRSS) of this run's workerd processes (of one `wrangler dev` when
 * `group` is given), bytes; null when none is found.
 */
export function workerdRssBytes(group?: number): number | null {
  const procs = ownWorkerd(group);
  if (procs.length === 0) return null;
  let total = 0;
  for (const p of procs) {
    try {
      const status = readFileSync(`/proc/${p.pid}/status`, "utf8");
      const kib = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
      if (kib) total += Number(kib) * 1024;
    } catch {
      // exited between the listing and the read
    }
  }
  return total;
}

/** How many workerd processes this run has (for the results file). */
export function workerdCount(): number {
  return ownWorkerd().length;
}

/** The soft limit on open files of this process (/proc/self/limits), or null if unknown. */
export function openFileLimit(): number | null {
  try {
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    if (!line?.[1]) return null;
    return line[1] === "unlimited" ? Number.POSITIVE_INFINITY : Number(line[1]);
  } catch {
    return null;
  }
}

/** The file system type under `path` (from /proc/mounts, longest mount prefix), or null. */
export function fileSystemOf(path: string): string | null {
  try {
    let best: { mount: string; type: string } | null = null;
    for (const line of readFileSync("/proc/mounts", "utf8").split("\n")) {
      const [, mount, type] = line.split(" ");
      if (!mount || !type) continue;
      const prefix = mount.endsWith("/") ? mount : `${mount}/`;
      if ((path === mount || path.startsWith(prefix)) && (!best || mount.length > best.mount.length)) {
        best = { mount, type };
      }
    }
    return best?.type ?? null;
  } catch {
    return null;
  }
}
