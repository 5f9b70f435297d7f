/**
 * `npm run admin -- <command>`: the admin CLI, a thin client of the admin HTTP API
 * (src/tenancy/admin-api.ts). Against the local stack (`npm start`, http://127.0.0.1:8787 with the
 * local admin key, read from the local secrets file beside its state: `DELTAGATE_STATE_DIR`, else
 * .wrangler/state; scripts/local-secrets.ts) by default; `--remote https://deltagate.example.workers.dev` (or
 * `DELTAGATE_ADMIN_URL`) targets a deployed one, with its key from `DELTAGATE_ADMIN_KEY` (never a
 * command-line argument, so it stays out of shell history).
 * Commands:
 *   tenants create <id> [--name N]       tenants list
 *   keys create <tenant> [--name N]      keys list <tenant>      keys revoke <tenant> <key_id>
 *   usage [--tenant T] [--since YYYY-MM-DD]
 *   limits set <tenant> [--max-sockets N] [--sessions-per-key N] [--turns-per-minute N]
 *                       [--request-bytes-per-minute N] [--tokens-per-day N]   (N or "none")
 *   settings set <tenant> '{"models":[…],"safety":{…},"model_aliases":{…}}'
 *   upstream-key set <tenant> --from-env VAR | upstream-key remove <tenant>
 *   webhook set <tenant> <url> [--secret-from-env VAR]   webhook show <tenant>   webhook remove <tenant>
 * Add `--json` for raw JSON. A new key, and a webhook's signing secret, is printed once; nothing
 * can show it again.
 */

import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { LOCAL_SECRETS_FILE, localSecrets } from "./local-secrets.ts";
import { REPO_ROOT } from "./local-stack.ts";

const LIMIT_FLAGS = {
  "max-sockets": "max_sockets",
  "sessions-per-key": "sessions_per_key",
  "turns-per-minute": "turns_per_minute",
  "request-bytes-per-minute": "request_bytes_per_minute",
  "tokens-per-day": "tokens_per_day",
} as const;

/** What `--help` (or a command line the CLI cannot read) prints: the commands of the header above. */
const USAGE = `Usage: npm run admin -- <command> [--remote URL] [--json]
  tenants create <id> [--name N]       tenants list
  keys create <tenant> [--name N]      keys list <tenant>      keys revoke <tenant> <key_id>
  usage [--tenant T] [--since YYYY-MM-DD]
  limits set <tenant> [--max-sockets N] [--sessions-per-key N] [--turns-per-minute N]
                      [--request-bytes-per-minute N] [--tokens-per-day N]   (N or "none")
  settings set <tenant> '{"models":[...],"safety":{...},"model_aliases":{...}}'
  upstream-key set <tenant> --from-env VAR | upstream-key remove <tenant>
  webhook set <tenant> <url> [--secret-from-env VAR]   webhook show <tenant>   webhook remove <tenant>
Against http://127.0.0.1:8787 (npm start) by default; --remote or DELTAGATE_ADMIN_URL targets a
deployment, with its admin key from DELTAGATE_ADMIN_KEY. A new key or webhook secret is printed once.`;

function parseCommandLine() {
  try {
    return parseArgs({ allowPositionals: true, options: OPTIONS });
  } catch (error) {
    // An unknown flag: say which, then how to use the CLI (no stack trace).
    console.error(`${(error as Error).message.split(". ")[0]}.\n\n${USAGE}`);
    process.exit(2);
  }
}

const OPTIONS = {
  help: { type: "boolean", short: "h", default: false },
  remote: { type: "string" },
  name: { type: "string" },
  tenant: { type: "string" },
  since: { type: "string" },
  json: { type: "boolean", default: false },
  "from-env": { type: "string" },
  "secret-from-env": { type: "string" },
  ...Object.fromEntries(Object.keys(LIMIT_FLAGS).map((flag) => [flag, { type: "string" as const }])),
} as const;

const { values, positionals } = parseCommandLine();
if (values.help || positionals[0] === "help") {
  console.log(USAGE);
  process.exit(0);
}

const remote = values.remote || process.env.DELTAGATE_ADMIN_URL || undefined;
const base = (remote ?? `http://127.0.0.1:${process.env.PORT ?? 8787}`).replace(/\/+$/, "");
/** The local stack's admin key, from its secrets file (only if `npm start` has written one). */
function localAdminKey(): string | undefined {
  const stateDir = process.env.DELTAGATE_STATE_DIR || join(REPO_ROOT, ".wrangler", "state");
  return existsSync(join(stateDir, LOCAL_SECRETS_FILE)) ? localSecrets(stateDir).ADMIN_API_KEY : undefined;
}
const adminKey = process.env.DELTAGATE_ADMIN_KEY || (remote ? undefined : localAdminKey());

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

async function call(method: string, path: string, body?: unknown): Promise<unknown> {
  if (!adminKey)
    fail(
      remote
        ? "Set DELTAGATE_ADMIN_KEY to the deployment's ADMIN_API_KEY."
        : "No local admin key: start the local stack (`npm start`) first, or set DELTAGATE_ADMIN_KEY.",
    );
  let response: Response;
  try {
    response = await fetch(`${base}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (error) {
    fail(`Cannot reach ${base} (${(error as Error).message}). Is \`npm start\` running?`);
  }
  const text = await response.text();
  const parsed: unknown = text ? JSON.parse(text) : null;
  if (!response.ok) {
    const message = (parsed as { error?: { message?: string } } | null)?.error?.message ?? text;
    fail(`${response.status}: ${message}`);
  }
  return parsed;
}

function show(value: unknown, rows?: (value: unknown) => Record<string, unknown>[]): void {
  if (values.json || !rows) console.log(JSON.stringify(value, null, 2));
  else console.table(rows(value));
}

const time = (ms: unknown) => (typeof ms === "number" ? new Date(ms).toISOString() : "");
const need = (value: string | undefined, what: string) => value ?? fail(`Missing ${what}.`);

const [group, action, ...rest] = positionals;
switch (`${group} ${action ?? ""}`.trim()) {
  case "tenants create": {
    const id = need(rest[0], "tenant id");
    show(await call("POST", "/tenants", { id, ...(values.name ? { name: values.name } : {}) }));
    break;
  }
  case "tenants list":
    show(await call("GET", "/tenants"), (v) =>
      (v as { data: Record<string, unknown>[] }).data.map((t) => ({
        id: t.id,
        name: t.name,
        created: time(t.created_at),
        limits: JSON.stringify(t.limits ?? {}),
        open_sockets: t.open_sockets,
      })),
    );
    break;
  case "keys create": {
    const tenant = need(rest[0], "tenant id");
    const created = (await call(
      "POST",
      `/tenants/${tenant}/keys`,
      values.name ? { name: values.name } : {},
    )) as {
      key: string;
      key_id: string;
    };
    if (values.json) show(created);
    else console.log(`${created.key}\n\nKey ${created.key_id} of ${tenant}. Shown once: store it now.`);
    break;
  }
  case "keys list": {
    const tenant = need(rest[0], "tenant id");
    show(await call("GET", `/tenants/${tenant}/keys`), (v) =>
      (v as { data: Record<string, unknown>[] }).data.map((k) => ({
        key_id: k.key_id,
        prefix: k.prefix,
        name: k.name,
        created: time(k.created_at),
        last_used: time(k.last_used_at),
        revoked: time(k.revoked_at),
      })),
    );
    break;
  }
  case "keys revoke": {
    const tenant = need(rest[0], "tenant id");
    const keyId = need(rest[1], "key id");
    show(await call("POST", `/tenants/${tenant}/keys/${keyId}/revoke`));
    break;
  }
  case "usage": {
    const query = new URLSearchParams();
    if (values.tenant) query.set("tenant", values.tenant);
    if (values.since) query.set("since", values.since);
    show(await call("GET", `/usage?${query}`), (v) =>
      (v as { data: Record<string, unknown>[] }).data.map((u) => ({
        ...u,
        statuses: JSON.stringify(u.statuses),
      })),
    );
    break;
  }
  case "limits set": {
    const tenant = need(rest[0], "tenant id");
    const limits: Record<string, number | null> = {};
    for (const [flag, field] of Object.entries(LIMIT_FLAGS)) {
      const raw = (values as Record<string, unknown>)[flag];
      if (typeof raw !== "string") continue;
      const value = raw === "none" ? null : Number(raw);
      if (value !== null && !(Number.isInteger(value) && value > 0))
        fail(`--${flag} takes a positive integer or "none".`);
      limits[field] = value;
    }
    if (Object.keys(limits).length === 0)
      fail(
        `Name at least one limit: ${Object.keys(LIMIT_FLAGS)
          .map((f) => `--${f}`)
          .join(" ")}`,
      );
    show(await call("PATCH", `/tenants/${tenant}`, { limits }));
    break;
  }
  case "settings set": {
    const tenant = need(rest[0], "tenant id");
    const json = need(rest[1] ?? process.env.DELTAGATE_SETTINGS, "settings JSON (argument)");
    show(await call("PATCH", `/tenants/${tenant}`, { settings: JSON.parse(json) }));
    break;
  }
  case "upstream-key set": {
    const tenant = need(rest[0], "tenant id");
    const variable = need(values["from-env"], "--from-env VAR (the key is read from that variable)");
    const key = process.env[variable] ?? fail(`${variable} is not set.`);
    show(await call("PATCH", `/tenants/${tenant}`, { upstream_api_key: key }));
    break;
  }
  case "upstream-key remove":
    show(await call("PATCH", `/tenants/${need(rest[0], "tenant id")}`, { upstream_api_key: null }));
    break;
  case "webhook set": {
    const tenant = need(rest[0], "tenant id");
    const url = need(rest[1], "endpoint URL");
    const variable = values["secret-from-env"];
    const secret = variable ? (process.env[variable] ?? fail(`${variable} is not set.`)) : undefined;
    const set = (await call("PUT", `/tenants/${tenant}/webhook`, { url, ...(secret ? { secret } : {}) })) as {
      url: string;
      secret: string;
    };
    if (values.json) show(set);
    else
      console.log(
        `${set.secret}\n\nSigning secret of ${tenant}'s webhook ${set.url}. Shown once: store it now.`,
      );
    break;
  }
  case "webhook show":
    show(await call("GET", `/tenants/${need(rest[0], "tenant id")}/webhook`));
    break;
  case "webhook remove":
    show(await call("DELETE", `/tenants/${need(rest[0], "tenant id")}/webhook`));
    break;
  default:
    fail(USAGE);
}
