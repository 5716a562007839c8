import { ItxError } from "../../errors/index.ts";
import type { EventInput, Reaction } from "../../types.ts";
import type { AnyProcessorContract } from "./contract.ts";

/**
 * Checks what a processor appends and stamps it: only types its contract emits, payloads valid by
 * their schema, and `source.processor` set to its slug. Throws INVALID_ARGUMENT before anything is
 * appended, so a bad event never reaches the stream for other processors to skip.
 */
export function stampEmitted(contract: AnyProcessorContract, inputs: readonly EventInput[], reaction?: Reaction): EventInput[] {
  return inputs.map((input) => {
    if (!contract.emits.includes(input.type)) {
      throw new ItxError("INVALID_ARGUMENT", `${contract.slug} does not emit "${input.type}"; add it to the contract's emits`);
    }
    const parsed = contract.parsePayload({ type: input.type, payload: input.payload ?? {} });
    if (!parsed.ok) {
      throw new ItxError("INVALID_ARGUMENT", `${contract.slug} appended an invalid "${input.type}": ${parsed.issues.join("; ")}`);
    }
    return { ...input, source: { processor: contract.slug, ...(reaction ? { reaction } : {}) } };
  });
}
