import { env, exports } from "cloudflare:workers";
import { describe, expect, test } from "vitest";
import { createProject } from "../project/project-lifecycle.ts";
import { projectSlugOfHost } from "./project-ingress.ts";

describe("project ingress", () => {
  test.each([
    ["shop.localhost", "shop"],
    ["shop.localhost:8790", "shop"],
    ["SHOP.localhost", "shop"],
    ["localhost", undefined],
    ["a.b.localhost", undefined],
    ["cap--shop.localhost", undefined],
    ["shop.example.com", undefined],
    ["-x.localhost", undefined],
  ])("%s names %s", (host, slug) => {
    expect(projectSlugOfHost(host, "localhost")).toBe(slug);
  });

  test("a project's host answers its worker's homepage; an unknown slug 404s", async () => {
    const slug = `home-${Date.now().toString(36)}`;
    await createProject(env, slug, "tester");
    const page = await exports.default.fetch(new Request(`http://${slug}.localhost/`));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`Homepage of ${slug}`);
    const missing = await exports.default.fetch(new Request(`http://nobody-${Date.now().toString(36)}.localhost/`));
    expect(missing.status).toBe(404);
  });
});
