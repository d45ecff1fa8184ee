/** The protocol identifiers this implementation reads and writes. */
export const PROTOCOLS = {
  task: "caesar.task/v1",
  report: "caesar.report/v1",
  event: "caesar.event/v1",
  question: "caesar.question/v1",
  answer: "caesar.answer/v1",
} as const;

export type DocumentKind = keyof typeof PROTOCOLS;

/** The value of `CAESAR_PROTOCOL_VERSION`: the OACP version, shared by the three core documents. */
export const OACP_VERSION = "1";

const FAMILY_PATTERN = /^caesar\.([a-z]+)\/v(\d+)$/;

/** Which document kind a `protocol` value names, and at which version (`undefined` if it is not ours). */
export function parseProtocolId(value: unknown): { kind: string; version: number } | undefined {
  if (typeof value !== "string") return undefined;
  const match = FAMILY_PATTERN.exec(value);
  if (!match) return undefined;
  return { kind: match[1]!, version: Number(match[2]) };
}

/** The supported document kind a `protocol` value names, or `undefined` when it names none we read. */
export function kindOfProtocol(value: unknown): DocumentKind | undefined {
  for (const [kind, id] of Object.entries(PROTOCOLS)) {
    if (id === value) return kind as DocumentKind;
  }
  return undefined;
}
