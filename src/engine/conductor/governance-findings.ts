import type { Finding } from "../../protocol/report.js";
import { errorEntry, isErrorCode } from "../../support/error-catalogue.js";
import { readRefusals } from "../store/refusals.js";

/**
 * Refusals that mean the agent tried to get around its governance, not merely asked for too much: those
 * the error catalogue marks `governance: "evasion"`. A record's code is read back from a file, so it may
 * be one this caesar does not know (then it is no evasion).
 */
function isEvasion(code: string): boolean {
  return isErrorCode(code) && errorEntry(code).governance === "evasion";
}

const SHOWN = 10;

/**
 * What caesar refused this task's agent while it ran, as findings of its report: an attempt to get around
 * governance (forged or missing credentials, acting outside its subtree, rewriting caesar's records) is
 * `high`; a request the policy refused (too deep, not reachable, over budget…) is `medium`.
 */
export async function governanceFindings(root: string, id: string): Promise<Finding[]> {
  const refusals = await readRefusals(root, id);
  const findings: Finding[] = refusals.slice(0, SHOWN).map((refusal) => ({
    severity: isEvasion(refusal.code) ? "high" : "medium",
    title:
      refusal.code === "records_rewritten"
        ? "The agent rewrote caesar's records in its task directory"
        : refusal.code === "egress_upstream_failed"
          ? `The machine's proxy did not open the agent's \`${refusal.action}\``
          : `caesar refused the agent's \`${refusal.action}\``,
    detail: `${refusal.summary} (${refusal.code}, ${refusal.at})`,
  }));
  if (refusals.length > SHOWN) {
    const evasions = refusals.slice(SHOWN).filter((refusal) => isEvasion(refusal.code)).length;
    findings.push({
      severity: evasions > 0 ? "high" : "medium",
      title: `caesar refused ${refusals.length - SHOWN} more request(s) of the agent`,
      detail: `All of them are on record beside the task's own records (refusals.jsonl in caesar's control directory) and as error events in events.jsonl.`,
    });
  }
  return findings;
}
