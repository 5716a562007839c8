import { describe, expect } from "vitest";
import { withItx } from "iterate/client";
import { expectCode } from "iterate/stream/test-support";
import type { IssuedToken } from "iterate/types";
import { test } from "../harness/fixtures.ts";

describe("bearer tokens", () => {
  test("issued by slug, listed, and revoked one by one: the next authenticate fails and open sessions end", async ({ os: { baseUrl }, admin, project: { projectId, slug } }) => {
    const kept = await admin.tokens.issue({ principal: "keeper", projectIds: [slug], ttlSeconds: 600 });
    const doomed = await admin.issueToken({ principal: "laptop", projectIds: [slug], ttlSeconds: 600 });
    expect(doomed.tokenId).toMatch(/^tok_[a-z2-7]{20}$/);
    const listed = await admin.tokens.list();
    expect(listed.find((row: IssuedToken) => row.tokenId === doomed.tokenId)).toMatchObject({ principal: "laptop", projectIds: [projectId] });
    expect(JSON.stringify(listed)).not.toContain(doomed.token);

    using open = withItx({ baseUrl, token: doomed.token, context: slug });
    using other = withItx({ baseUrl, token: kept.token, context: slug });
    expect((await open.whoami()).principal).toBe("laptop");
    expect((await other.whoami()).principal).toBe("keeper");

    expect(await admin.tokens.revoke(doomed.tokenId)).toEqual({ revoked: true });
    expect(await admin.tokens.revoke(doomed.tokenId)).toEqual({ revoked: true });
    // The open session ends: its next call fails (the connection is gone), the other token's does not.
    await expect.poll(async () => (await expectCode(open.whoami(), ["UNAVAILABLE", "UNAUTHENTICATED", "CAPABILITY_DISCONNECTED"]).catch((error: Error) => error)).message, { timeout: 5_000 }).toMatch(/revoked|closed|disconnect|lost/i);
    expect((await other.whoami()).principal).toBe("keeper");
    using again = withItx({ baseUrl, token: doomed.token, context: slug });
    const refused = await expectCode(again.whoami(), "UNAUTHENTICATED");
    expect(refused.message).toContain("revoked");
    expect((await admin.tokens.list()).find((row: IssuedToken) => row.tokenId === doomed.tokenId)?.revokedAt).toEqual(expect.any(String));
    expect(await admin.tokens.revoke("tok_aaaaaaaaaaaaaaaaaaaa")).toEqual({ revoked: false });
    await expectCode(admin.tokens.revoke("not-an-id"), "INVALID_ARGUMENT");
    await expectCode(admin.tokens.issue({ principal: "x", projectIds: ["no-such-project-here"] }), "INVALID_ARGUMENT");
  });

  test("only the admin manages tokens", async ({ os, project: { projectId }, connect }) => {
    const alice = connect({ auth: { type: "impersonate", secret: os.adminSecret, principal: "alice", projectIds: [projectId] } });
    await expectCode(alice.tokens.list(), "PERMISSION_DENIED");
    await expectCode(alice.issueToken({ principal: "alice", projectIds: [projectId] }), "PERMISSION_DENIED");
  });

  test("a token has one spelling: every other spelling of its last character, and malformed text, is UNAUTHENTICATED", async ({ os: { baseUrl }, admin, project: { slug } }) => {
    const { token } = await admin.issueToken({ principal: "speller", projectIds: [slug], ttlSeconds: 600 });
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = token.at(-1) as string;
    // 43 characters hold 256 bits and 2 spare ones: four characters decode to the same bytes.
    const sameBytes = [...alphabet].filter((char) => alphabet.indexOf(char) >> 2 === alphabet.indexOf(last) >> 2 && char !== last);
    expect(sameBytes).toHaveLength(3);
    for (const variant of [...sameBytes.map((char) => token.slice(0, -1) + char), "itk_a.b", "itk_.", `${token}=`, token.replace("itk_", "itk_A")]) {
      using itx = withItx({ baseUrl, token: variant, context: slug });
      await expectCode(itx.whoami(), "UNAUTHENTICATED", variant.slice(-8));
    }
    using good = withItx({ baseUrl, token, context: slug });
    expect((await good.whoami()).principal).toBe("speller");
  });

  test("membership is a fact: a principal reaches the projects it created from any later session", async ({ admin, connect }) => {
    const { token } = await admin.issueToken({ principal: `maker-${Date.now()}`, projectIds: [], ttlSeconds: 600 });
    const slug = `made-${Date.now().toString(36)}`;
    let projectId: string;
    {
      using first = connect({ auth: { type: "bearer", token } });
      projectId = (await first.projects.create({ slug }).whoami()).projectId;
    }
    const later = connect({ auth: { type: "bearer", token } });
    expect((await later.projects.list()).map((row: { id: string }) => row.id)).toEqual([projectId]);
    expect((await later.projects.get(slug).whoami()).projectId).toBe(projectId);
  });
});
