import { makeOptionTable, type ParsedArgs } from "./options.js";
import type { ReaderSpec } from "./readers.js";

/**
 * GNU sed 4.9: -i / --in-place writes the files it reads, -f / --file runs a script caesar cannot read
 * (--follow-symlinks only serves --in-place). --sandbox refuses e, r and w itself.
 */
const SED_OPTIONS = makeOptionTable(
  "debug expression= file=! follow-symlinks! in-place[=]! line-length= null-data zero-terminated posix quiet " +
    "silent regexp-extended sandbox separate unbuffered",
  "E=regexp-extended e=expression f=file i=in-place l=line-length n=quiet r=regexp-extended s=separate " +
    "u=unbuffered z=null-data",
);

export const SED: ReaderSpec = { options: SED_OPTIONS, check: sedScriptsRead };

/**
 * sed's scripts (each -e, or the first operand) may print, delete and substitute, but never write (`w`,
 * `W`, the `w` flag), execute (`e`, the `e` flag) or read other files (`r`, `R`): once the `/regex/`
 * addresses and the `s/…/…/flags` bodies are taken out, none of those letters may remain.
 */
function sedScriptsRead(args: ParsedArgs): boolean {
  const expressions = args.options.filter((option) => option.name === "expression");
  const scripts =
    expressions.length > 0 ? expressions.map((option) => option.value ?? "") : args.operands.slice(0, 1);
  return scripts.every((script) => {
    const bare = script
      .replace(/s\/(?:[^/\\\n]|\\.)*\/(?:[^/\\\n]|\\.)*\/[gpiImM0-9]*/g, "s")
      .replace(/\/(?:[^/\\\n]|\\.)*\//g, "");
    return !/[wWeErR]/.test(bare);
  });
}
