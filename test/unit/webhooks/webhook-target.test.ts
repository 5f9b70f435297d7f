/**
 * Where a webhook may go (src/webhooks/webhook-target.ts): public `https:` targets pass; private,
 * loopback, link-local and reserved targets — in every spelling the URL parser accepts — are
 * refused unless the operator allows them (all, or by origin), and then `http:` is allowed for
 * them; a URL carrying a user name or password is refused whatever the setting.
 */
import { describe, expect, it } from "vitest";
import { isPrivateHost, parsePrivateTargets, targetRefusal } from "../../../src/webhooks/webhook-target.ts";

const NONE = new Set<string>();

describe("targetRefusal", () => {
  it("accepts public https targets", () => {
    for (const url of [
      "https://example.com/hooks",
      "https://hooks.example.com:8443/a?b=c",
      "https://8.8.8.8/hook",
      "https://[2606:4700::1111]/hook",
      "https://172.32.0.1/", // just past 172.16.0.0/12
      "https://100.128.0.1/", // just past 100.64.0.0/10
    ])
      expect(targetRefusal(url, NONE), url).toBeNull();
  });

  it("refuses private, loopback, link-local and reserved targets in every spelling", () => {
    for (const url of [
      "https://localhost/hook",
      "https://api.localhost/hook",
      "https://LOCALHOST./hook",
      "https://127.0.0.1/hook",
      "https://127.1.2.3/hook",
      "https://2130706433/hook", // 127.0.0.1 as one number
      "https://0x7f.0.0.1/hook",
      "https://0.0.0.0/hook",
      "https://10.0.0.1/hook",
      "https://172.16.5.4/hook",
      "https://192.168.1.1/hook",
      "https://100.64.0.1/hook",
      "https://169.254.169.254/latest/meta-data", // cloud metadata
      "https://198.18.0.1/hook",
      "https://224.0.0.1/hook",
      "https://255.255.255.255/hook",
      "https://[::1]/hook",
      "https://[::]/hook",
      "https://[fc00::1]/hook",
      "https://[fd12:3456::1]/hook",
      "https://[fe80::1]/hook",
      "https://[ff02::1]/hook",
      "https://[::ffff:127.0.0.1]/hook", // IPv4-mapped loopback
      "https://[::ffff:10.0.0.1]/hook",
    ]) {
      expect(isPrivateHost(new URL(url).hostname), url).toBe(true);
      expect(targetRefusal(url, NONE), url).toMatch(/Private and loopback targets are refused/);
    }
  });

  it("requires https for public targets, and refuses other schemes, credentials, junk and long URLs", () => {
    expect(targetRefusal("http://example.com/hook", NONE)).toBe("The URL must be https.");
    expect(targetRefusal("ftp://example.com/hook", NONE)).toBe("The URL must be https.");
    expect(targetRefusal("https://user:pass@example.com/", NONE)).toMatch(/user name or password/);
    expect(targetRefusal("https://user@example.com/", "all")).toMatch(/user name or password/);
    expect(targetRefusal("not a url", NONE)).toBe("Not an absolute URL.");
    expect(targetRefusal(`https://example.com/${"a".repeat(2048)}`, NONE)).toMatch(/longer than 2048/);
  });

  it("allows private targets the operator allows, with http, and only those", () => {
    const allowed = new Set(["http://127.0.0.1:9000"]);
    expect(targetRefusal("http://127.0.0.1:9000/hook", allowed)).toBeNull();
    expect(targetRefusal("http://127.0.0.1:9001/hook", allowed)).toMatch(/refused/);
    expect(targetRefusal("http://localhost:9000/hook", allowed)).toMatch(/refused/);
    expect(targetRefusal("http://10.0.0.1/hook", "all")).toBeNull();
    expect(targetRefusal("http://localhost:3000/hook", "all")).toBeNull();
    // Allowing private targets does not allow plain http to a public one.
    expect(targetRefusal("http://example.com/hook", "all")).toBe("The URL must be https.");
  });
});

describe("parsePrivateTargets", () => {
  it("reads unset and false words as none, true words as all, else origins", () => {
    for (const raw of [undefined, "", "  ", "false", "0", "off", "no"])
      expect(parsePrivateTargets(raw, "X")).toEqual(new Set());
    for (const raw of ["true", "1", "ON", "yes"]) expect(parsePrivateTargets(raw, "X")).toBe("all");
    expect(parsePrivateTargets("http://127.0.0.1:9000, http://localhost:3000", "X")).toEqual(
      new Set(["http://127.0.0.1:9000", "http://localhost:3000"]),
    );
  });

  it("refuses an entry that is not exactly an origin, naming the variable", () => {
    for (const raw of ["http://127.0.0.1:9000/hook", "127.0.0.1", "http://127.0.0.1:9000/"])
      expect(() => parsePrivateTargets(raw, "WEBHOOK_ALLOW_PRIVATE_TARGETS")).toThrow(
        /^WEBHOOK_ALLOW_PRIVATE_TARGETS: /,
      );
  });
});
