/**
 * The origin at which the `workerd` runtime of a `wrangler dev` serves the Worker itself, behind
 * wrangler's dev proxy. `wrangler dev` answers on its port with a proxy Worker (wrangler 4.164
 * `templates/startDevWorker/ProxyWorker.ts`): every request goes through one singleton Durable
 * Object of that proxy, which forwards it to the runtime of the Worker, and a proxied WebSocket's
 * frames are relayed through that object too. A deployment has no such hop, so a measurement of
 * how one connection affects another (a flood of frames, a noisy tenant) is taken here, at the
 * runtime, as well as through the proxy.
 * How it is found: the listening TCP ports on 127.0.0.1 of the `workerd` processes in wrangler's
 * process group (Linux `/proc`), less the proxy's own, probed with `GET /healthz` for Deltagate's
 * answer. Linux only; elsewhere it throws, and callers measure through the proxy.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/** Process ids of `workerd` processes whose process group is `group`. */
function workerdProcesses(group: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // pid (comm) state ppid pgrp …: comm may hold spaces, so parse after its closing parenthesis.
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (comm === "workerd" && Number(fields[2]) === group) pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

/** Ports on 127.0.0.1 in LISTEN state owned by `pids`. */
function listeningPorts(pids: number[]): number[] {
  const inodes = new Set<string>();
  for (const pid of pids) {
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`, { encoding: "utf8" });
        const match = /^socket:\[(\d+)\]$/.exec(target);
        if (match?.[1]) inodes.add(match[1]);
      }
    } catch {
      // the process ended, or a descriptor closed while we looked
    }
  }
  const ports: number[] = [];
  // /proc/net/tcp: "sl local_address rem_address st … inode", addresses as hex IP:port.
  for (const line of readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1)) {
    const cols = line.trim().split(/\s+/);
    const [local, state, inode] = [cols[1], cols[3], cols[9]];
    if (!local || state !== "0A" || !inode || !inodes.has(inode)) continue;
    const [address, port] = local.split(":");
    if (address === "0100007F" && port) ports.push(Number.parseInt(port, 16));
  }
  return ports;
}

/** The ports on 127.0.0.1 that the `workerd` processes of process group `group` listen on. */
export function workerdListeningPorts(group: number): number[] {
  return listeningPorts(workerdProcesses(group));
}

/**
 * The runtime's own origin (`http://127.0.0.1:PORT`) of the `wrangler dev` whose process group is
 * `group` and whose proxy answers at `proxyOrigin`.
 */
export async function runtimeOrigin(group: number, proxyOrigin: string): Promise<string> {
  if (process.platform !== "linux") throw new Error("runtimeOrigin reads /proc: Linux only");
  const proxyPort = Number(new URL(proxyOrigin).port);
  for (const port of workerdListeningPorts(group)) {
    if (port === proxyPort) continue;
    const origin = `http://127.0.0.1:${port}`;
    try {
      const response = await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(2_000) });
      const body = (await response.json()) as { status?: unknown };
      if (response.ok && body.status === "ok") return origin;
    } catch {
      // another of the runtime's sockets (the inspector, a loopback): not the Worker
    }
  }
  throw new Error(`no workerd port of process group ${group} answers GET /healthz`);
}
