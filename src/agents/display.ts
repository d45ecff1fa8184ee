/** Longest single argument shown in full; longer ones (the brief, inline JSON) are shortened. */
const ARG_MAX = 80;

/**
 * The command as shown to people (the `started` event): shell-quoted, long arguments shortened,
 * values of secret-looking options hidden.
 */
export function displayCommand(bin: string, args: string[]): string {
  const shown: string[] = [];
  let hideNext = false;
  for (const arg of args) {
    if (hideNext) {
      shown.push("***");
      hideNext = false;
      continue;
    }
    if (/^--?[\w-]*(key|token|secret|password)[\w-]*$/i.test(arg)) hideNext = true;
    const secretInline = /^(--?[\w-]*(?:key|token|secret|password)[\w-]*=)/i.exec(arg);
    shown.push(secretInline ? `${secretInline[1]}***` : quote(shorten(arg)));
  }
  return [quote(bin), ...shown].join(" ");
}

function shorten(arg: string): string {
  const line = arg.replace(/\s+/g, " ");
  return line.length <= ARG_MAX ? line : `${line.slice(0, ARG_MAX - 1)}…`;
}

function quote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, "'\\''")}'`;
}
