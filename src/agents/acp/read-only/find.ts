/**
 * GNU find 4.9's expression as an allow-list: tests and printing actions. -delete, -exec, -execdir, -ok,
 * -okdir, -fprint, -fprint0, -fprintf and -fls (which write a file) are not in it, so they are refused
 * like any word find would take that this list does not hold. find takes no abbreviations.
 */

/** Tests and actions without an argument. */
const FLAGS = new Set(
  (
    "! , ( ) -not -and -or -a -o -true -false -empty -executable -readable -writable -nouser -nogroup " +
    "-print -print0 -ls -prune -quit -depth -follow -mount -xdev -noleaf -ignore_readdir_race " +
    "-noignore_readdir_race -daystart -warn -nowarn -help --help -version --version"
  ).split(" "),
);

/** Tests and actions with one argument (printing ones included: -printf writes to stdout). */
const WITH_ARGUMENT = new Set(
  (
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -regextype -lname -ilname -type -xtype " +
    "-maxdepth -mindepth -size -perm -user -group -uid -gid -links -inum -samefile -newer -anewer -cnewer " +
    "-mtime -atime -ctime -mmin -amin -cmin -used -fstype -context -printf -files0-from"
  ).split(" "),
);

export function isReadOnlyFind(args: readonly string[]): boolean {
  let i = 0;
  // Leading options: symbolic-link handling, debug and optimisation levels.
  while (i < args.length && /^-([HLP]|D\S*|O\d)$/.test(args[i]!)) {
    if (args[i] === "-D") i++;
    i++;
  }
  for (; i < args.length; i++) {
    const arg = args[i]!;
    if (FLAGS.has(arg)) continue;
    // -newerXY ref: compares timestamps.
    if (WITH_ARGUMENT.has(arg) || /^-newer[aBcmt][aBcmt]$/.test(arg)) {
      if (++i >= args.length) return false;
      continue;
    }
    // A starting point (a path) comes before the expression; anything else starting with - is unknown.
    if (arg.startsWith("-")) return false;
  }
  return true;
}
