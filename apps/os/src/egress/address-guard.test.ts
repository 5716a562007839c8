import { describe, expect, test } from "vitest";
import { errorCode } from "iterate/errors";
import { privateAddressPolicy } from "./address-guard.ts";
import { assertPublicDestination } from "./egress-pipe.ts";

const none = privateAddressPolicy(undefined);

function refused(url: string, policy = none): string | undefined {
  try {
    assertPublicDestination(new URL(url), policy, new Headers());
    return "allowed";
  } catch (error) {
    return errorCode(error);
  }
}

describe("the private-address guard", () => {
  test.each([
    "http://127.0.0.1/",
    "http://127.1.2.3:8080/",
    "http://2130706433/",
    "http://0x7f000001/",
    "http://0177.0.0.1/",
    "http://0.0.0.0/",
    "http://10.0.0.1/",
    "http://172.16.5.4/",
    "http://172.31.255.255/",
    "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://100.64.0.1/",
    "http://192.0.2.10/",
    "http://198.51.100.7/",
    "http://203.0.113.9/",
    "http://198.18.0.1/",
    "http://224.0.0.251/",
    "http://255.255.255.255/",
    "http://[::1]/",
    "http://[::]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:8.8.8.8]/",
    "http://[fc00::1]/",
    "http://[fd12:3456::1]/",
    "http://[fe80::1]/",
    "http://[ff02::1]/",
    "http://[2001:db8::1]/",
    "http://[64:ff9b::10.0.0.1]/",
    "http://localhost/",
    "http://api.localhost/",
    "http://printer.local/",
    "http://metadata.google.internal/",
    "http://router.home.arpa/",
    "http://intranet/",
    // Empty labels and trailing dots: each is a spelling of a private name.
    "http://localhost./",
    "http://localhost../",
    "http://localhost.../",
    "http://vm../",
    "http://vm./",
    "http://api.localhost../",
    "http://example..com/",
    "http://localhost%2e%2e/",
    "http://printer.local./",
    // IPv4 embedded in IPv6: mapped, translated (SIIT), compatible, NAT64 and Teredo forms.
    "http://[::ffff:0:7f00:1]/",
    "http://[::ffff:0:127.0.0.1]/",
    "http://[::ffff:0:a00:1]/",
    "http://[::ffff:7f00:1]/",
    "http://[0:0:0:0:0:ffff:127.0.0.1]/",
    "http://[::ffff:169.254.169.254]/",
    "http://[::127.0.0.1]/",
    "http://[::7f00:1]/",
    "http://[64:ff9b::7f00:1]/",
    "http://[64:ff9b::169.254.169.254]/",
    "http://[64:ff9b:1::a00:1]/",
    "http://[64:ff9b:0:1::1]/",
    "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
    "http://[2002:7f00:1::1]/",
  ])("%s is refused", (url) => {
    expect(refused(url)).toBe("EGRESS_REFUSED");
  });

  test.each(["https://example.com/", "https://example.com./", "https://[64:ff9b::808:808]/", "https://1.1.1.1/", "http://8.8.8.8/", "https://[2606:4700::1111]/", "https://api.slack.com/x"])("%s is allowed", (url) => {
    expect(refused(url)).toBe("allowed");
  });

  test("the loopback policy allows this machine by its canonical spellings only", () => {
    const loopback = privateAddressPolicy("loopback");
    for (const url of ["http://127.0.0.1:8787/", "http://[::1]:9/", "http://localhost:1234/", "http://0x7f000001/"]) {
      expect(refused(url, loopback), url).toBe("allowed");
    }
    for (const url of [
      "http://127.0.0.2/",
      "http://localhost../",
      "http://localhost./",
      "http://api.localhost/",
      "http://[::ffff:127.0.0.1]/",
      "http://[::ffff:0:7f00:1]/",
      "http://[64:ff9b::127.0.0.1]/",
      "http://10.0.0.1/",
      "http://192.168.1.1/",
      "http://169.254.169.254/",
      "http://[fd00::1]/",
    ]) {
      expect(refused(url, loopback), url).toBe("EGRESS_REFUSED");
    }
    expect(refused("https://example.com/", loopback)).toBe("allowed");
  });

  test("a deployment can allow all private addresses, or named hosts only", () => {
    expect(refused("http://127.0.0.1/", privateAddressPolicy("1"))).toBe("allowed");
    const hosts = privateAddressPolicy("127.0.0.1, localhost");
    expect(refused("http://127.0.0.1:9999/", hosts)).toBe("allowed");
    expect(refused("http://localhost/", hosts)).toBe("allowed");
    expect(refused("http://10.0.0.1/", hosts)).toBe("EGRESS_REFUSED");
    expect(refused("http://127.0.0.2/", hosts)).toBe("EGRESS_REFUSED");
  });
});
