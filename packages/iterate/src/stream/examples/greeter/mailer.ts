/** What the greeter's effect answers: sending is the expected path, a refusal an expected outcome. */
export type MailResult = { status: "sent"; receiptId: string } | { status: "refused"; reason: string };

/**
 * The greeter's one side effect. `idempotencyKey` is the same for every attempt of a run, so a
 * mailer that already sent under it answers its earlier receipt instead of mailing twice.
 */
export interface Mailer {
  send(message: { to: string; text: string; idempotencyKey: string }): Promise<MailResult>;
}

/** How the fake mailer answers the next calls. */
export type FakeMailerMode = "send" | "refuse" | "throw" | "hang";

export interface FakeMailer extends Mailer {
  /** Every call, in order. */
  readonly calls: { to: string; text: string; idempotencyKey: string }[];
  /** Greetings actually sent, by idempotency key. */
  readonly sent: ReadonlyMap<string, { to: string; text: string; receiptId: string }>;
  /** send: mail it; refuse: answer refused; throw: fail; hang: never answer, as when the host dies mid-call. */
  mode: FakeMailerMode;
}

/**
 * An in-memory mailer for tests and examples. It accepts its own earlier success: a key it
 * already sent under answers the same receipt, whatever its mode.
 *
 * @example
 * const mailer = fakeMailer();
 * mailer.mode = "hang"; // the next attempt dies mid-call
 */
export function fakeMailer(): FakeMailer {
  const calls: FakeMailer["calls"] = [];
  const sent = new Map<string, { to: string; text: string; receiptId: string }>();
  const mailer: FakeMailer = {
    calls,
    sent,
    mode: "send",
    async send(message) {
      calls.push(message);
      const earlier = sent.get(message.idempotencyKey);
      if (earlier !== undefined) return { status: "sent", receiptId: earlier.receiptId };
      switch (mailer.mode) {
        case "refuse":
          return { status: "refused", reason: `${message.to} does not accept mail` };
        case "throw":
          throw new Error("mail server closed the connection");
        case "hang":
          return new Promise<MailResult>(() => {});
        case "send": {
          const receiptId = `receipt-${sent.size + 1}`;
          sent.set(message.idempotencyKey, { to: message.to, text: message.text, receiptId });
          return { status: "sent", receiptId };
        }
      }
    },
  };
  return mailer;
}
