import { makeOptionTable, type OptionTable, parseArgs } from "./options.js";

/**
 * git 2.39's read-only subcommands and the options of each caesar allows. git's parse-options accepts
 * unique abbreviations (`git grep --open-f=…` is `--open-files-in-pager`), so every table lists the
 * options that write or run a program (`!`) for prefixes to resolve against; an unknown option, a
 * negation not listed (`--no-…`) included, is refused.
 */

/** git's own options, before the subcommand: -c, -C, --config-env, --exec-path… change what git runs. */
const GLOBAL = makeOptionTable(
  "no-pager paginate! exec-path[=]! html-path man-path info-path git-dir=! work-tree=! namespace=! bare! " +
    "no-replace-objects literal-pathspecs glob-pathspecs noglob-pathspecs icase-pathspecs no-optional-locks " +
    "config-env=! list-cmds=! super-prefix=! attr-source=!",
  "P=no-pager p=paginate c:! C:!",
);

/** Diff output (diff, log, show): --output writes a file, --ext-diff and --textconv run programs. */
const DIFF =
  "patch no-patch unified= output=! output-indicator-new= output-indicator-old= output-indicator-context= raw " +
  "patch-with-raw indent-heuristic no-indent-heuristic minimal patience histogram anchored= diff-algorithm= " +
  "stat[=] compact-summary numstat shortstat dirstat[=] cumulative dirstat-by-file[=] summary patch-with-stat " +
  "name-only name-status submodule[=] color[=] no-color color-moved[=] no-color-moved color-moved-ws= " +
  "no-color-moved-ws word-diff[=] word-diff-regex= color-words[=] no-renames rename-empty no-rename-empty " +
  "check ws-error-highlight= full-index binary abbrev[=] no-abbrev break-rewrites[=] find-renames[=] " +
  "find-copies[=] find-copies-harder irreversible-delete diff-filter= find-object= pickaxe-all pickaxe-regex " +
  "skip-to= rotate-to= relative[=] no-relative text ignore-cr-at-eol ignore-space-at-eol ignore-space-change " +
  "ignore-all-space ignore-blank-lines ignore-matching-lines= inter-hunk-context= function-context exit-code " +
  "quiet ext-diff! no-ext-diff textconv! no-textconv ignore-submodules[=] src-prefix= dst-prefix= no-prefix " +
  "default-prefix line-prefix= ita-invisible-in-index ita-visible-in-index stat-width= stat-name-width= " +
  "stat-count= stat-graph-width=";
const DIFF_SHORT =
  "p=patch u=patch s=no-patch U=unified z B=break-rewrites M=find-renames C=find-copies " +
  "D=irreversible-delete l: S: G: O: R a=text b=ignore-space-change w=ignore-all-space I=ignore-matching-lines " +
  "W=function-context X=dirstat";

/** Revision walking and commit formatting (log, show, shortlog). */
const REVISIONS =
  "max-count= skip= since= after= until= before= author= committer= grep= grep-reflog= all-match invert-grep " +
  "regexp-ignore-case basic-regexp extended-regexp fixed-strings perl-regexp remove-empty merges no-merges " +
  "min-parents= max-parents= no-min-parents no-max-parents first-parent exclude-first-parent-only not all " +
  "branches[=] tags[=] remotes[=] glob= exclude= reflog alternate-refs single-worktree ignore-missing " +
  "cherry-mark cherry-pick left-only right-only cherry walk-reflogs merge boundary simplify-by-decoration " +
  "full-history dense sparse simplify-merges ancestry-path[=] show-pulls date-order author-date-order " +
  "topo-order reverse no-walk[=] do-walk pretty[=] format= abbrev-commit no-abbrev-commit oneline encoding= " +
  "expand-tabs[=] no-expand-tabs notes[=] no-notes show-notes[=] standard-notes no-standard-notes " +
  "show-signature relative-date date= parents children left-right graph show-linear-break[=] follow " +
  "decorate[=] no-decorate decorate-refs= decorate-refs-exclude= clear-decorations source mailmap " +
  "use-mailmap no-mailmap no-use-mailmap full-diff log-size diff-merges= no-diff-merges combined-all-paths " +
  "cc dd remerge-diff";
const REVISIONS_SHORT =
  "n=max-count i=regexp-ignore-case E=extended-regexp F=fixed-strings P=perl-regexp " +
  "g=walk-reflogs L: m c t r";

const table = (long: string, short = "", numeric = false) => makeOptionTable(long, short, numeric);

const SUBCOMMANDS: Readonly<Record<string, OptionTable>> = {
  status: table(
    "short long branch show-stash porcelain[=] verbose untracked-files[=] ignore-submodules[=] ignored[=] " +
      "null column[=] no-column ahead-behind no-ahead-behind renames no-renames find-renames[=]",
    "s=short b=branch v=verbose u=untracked-files z=null",
  ),
  log: table(`${REVISIONS} ${DIFF}`, `${REVISIONS_SHORT} ${DIFF_SHORT}`, true),
  show: table(`${REVISIONS} ${DIFF}`, `${REVISIONS_SHORT} ${DIFF_SHORT}`, true),
  diff: table(`${DIFF} cached staged no-index merge-base base ours theirs`, `${DIFF_SHORT} 1 2 3 0`),
  shortlog: table(
    `${REVISIONS} committer email group= numbered summary`,
    "c=committer e=email n=numbered s=summary",
  ),
  "rev-parse": table(
    "abbrev-ref[=] verify quiet short[=] symbolic symbolic-full-name show-toplevel show-prefix show-cdup " +
      "git-dir git-common-dir absolute-git-dir is-inside-work-tree is-inside-git-dir is-bare-repository " +
      "is-shallow-repository show-superproject-working-tree shared-index-path all branches[=] tags[=] " +
      "remotes[=] glob= exclude= disambiguate= local-env-vars since= after= until= before= default= prefix= " +
      "revs-only no-revs flags no-flags sq sq-quote not git-path= show-object-format[=] path-format=",
    "q=quiet",
  ),
  "ls-files": table(
    "abbrev[=] cached debug deduplicate deleted directory empty-directory no-empty-directory eol error-unmatch " +
      "exclude= exclude-from= exclude-per-directory= exclude-standard format= full-name ignored killed modified " +
      "others recurse-submodules resolve-undo sparse stage unmerged with-tree=",
    "c=cached d=deleted m=modified o=others i=ignored s=stage k=killed u=unmerged t v f z x=exclude X=exclude-from",
  ),
  "ls-tree": table(
    "abbrev[=] format= full-name full-tree long name-only name-status object-only",
    "d r t l=long z",
  ),
  blame: table(
    "abbrev= color-by-age color-lines contents= ignore-rev= ignore-revs-file= incremental line-porcelain " +
      "minimal porcelain progress no-progress root score-debug show-email show-name show-number show-stats " +
      "encoding= date= first-parent reverse= since=",
    "b c e=show-email f=show-name l L: n=show-number p=porcelain s t w S:",
  ),
  grep: table(
    "after-context= basic-regexp before-context= break cached color[=] column context= count exclude-standard " +
      "no-exclude-standard ext-grep extended-regexp files-with-matches files-without-match fixed-strings " +
      "full-name function-context heading ignore-case invert-match line-number max-count= max-depth= name-only " +
      "no-index not null only-matching open-files-in-pager[=]! or and all-match perl-regexp quiet " +
      "recurse-submodules recursive show-function text textconv! no-textconv threads= untracked word-regexp",
    "A=after-context B=before-context C=context E=extended-regexp F=fixed-strings G=basic-regexp " +
      "P=perl-regexp H h i=ignore-case I l=files-with-matches L=files-without-match n=line-number " +
      "o=only-matching O=open-files-in-pager q=quiet r=recursive v=invert-match w=word-regexp " +
      "W=function-context z=null c=count a=text p=show-function e: f: m=max-count",
    true,
  ),
  describe: table(
    "abbrev= all always broken[=] candidates= contains debug dirty[=] exact-match exclude= first-parent long " +
      "match= tags",
  ),
  // --filters and --textconv run the filters and converters git's configuration names.
  "cat-file": table(
    "allow-unknown-type batch[=] batch-all-objects batch-check[=] batch-command[=] buffer filters! " +
      "follow-symlinks mailmap no-mailmap path= textconv! unordered use-mailmap",
    "e p t s",
  ),
  "merge-base": table("all fork-point independent is-ancestor octopus", "a=all"),
};

/** `git [global options] <read-only subcommand> [its allowed options] [operands]`. */
export function isReadOnlyGit(args: readonly string[]): boolean {
  const sub = args.findIndex((arg) => !arg.startsWith("-"));
  if (sub < 0) return false;
  if (!parseArgs(args.slice(0, sub), GLOBAL)) return false;
  const options = SUBCOMMANDS[args[sub]!];
  return options !== undefined && parseArgs(args.slice(sub + 1), options) !== undefined;
}

/** The tables, for tests that run every abbreviation of every refused option. */
export const GIT_SUBCOMMANDS = SUBCOMMANDS;
