import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { AnyProcessorContract } from "iterate/stream/processor";
import { checkAgainstZod } from "iterate/stream/test-support";
import { AgentContract } from "../agent/agent-contract.ts";
import { ReplayContract } from "../bench/replay-processor.ts";
import { ItxContract } from "../capability-host/itx-contract.ts";
import { ProjectContract } from "../project/project-contract.ts";
import { SchedulerContract } from "../scheduler/scheduler-contract.ts";
import { StreamCoreContract } from "../stream/stream-core.ts";

const CONTRACTS = [AgentContract, ItxContract, SchedulerContract, ProjectContract, StreamCoreContract, ReplayContract] as unknown as AnyProcessorContract[];

const SCHEMAS: [string, z.ZodType][] = CONTRACTS.flatMap((contract) => [
  [`${contract.slug} state`, contract.stateSchema] as [string, z.ZodType],
  ...Object.entries(contract.events).map(([type, schema]) => [`${contract.slug} ${type}`, schema] as [string, z.ZodType]),
]);

// Folds and checkpoints parse every payload and state through compileSafeParse; these are the
// platform's own schemas, run here against the interpreted zod that workerd runs.
describe("the platform's contract schemas parse as zod parses them", () => {
  it("runs zod's interpreted parser here, as in a deployment", () => {
    expect(z.util.allowsEval.value).toBe(false);
  });

  it.each(SCHEMAS)("%s", (_name, schema) => {
    const report = checkAgainstZod(schema, { runs: 600 });
    expect(report.mismatches).toEqual([]);
    expect(report.compiled).toBe(true);
    // Nothing of a contract is left to zod's own run.
    expect(report.islands).toEqual([]);
    expect(report.accepted).toBeGreaterThan(10);
    expect(report.rejected).toBeGreaterThan(10);
  });
});
