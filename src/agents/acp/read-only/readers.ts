import { makeOptionTable, type OptionTable, type ParsedArgs } from "./options.js";

/**
 * The programs a read-only task may run, each with every long option it knows (so that an abbreviation
 * resolves as the program resolves it) and the ones caesar allows. Taken from the `--help` of GNU
 * coreutils 9.1, grep 3.8, sed 4.9, diffutils 3.8, findutils 4.9 and file 5.44; an option missing here
 * is refused. `!` marks what writes a file, runs a program or changes the system.
 */
export interface ReaderSpec {
  options: OptionTable;
  /** A further check of what was parsed (sed's scripts, uniq's output operand). */
  check?: (args: ParsedArgs) => boolean;
}

const reader = (long: string, short = "", check?: ReaderSpec["check"]): ReaderSpec => ({
  options: makeOptionTable(long, short),
  ...(check ? { check } : {}),
});
const counted = (long: string, short: string): ReaderSpec => ({
  options: makeOptionTable(long, short, true),
});

export const READERS: Readonly<Record<string, ReaderSpec>> = {
  ls: reader(
    "all almost-all author block-size= classify[=] color[=] context dereference dereference-command-line " +
      "dereference-command-line-symlink-to-dir directory dired escape file-type format= full-time " +
      "group-directories-first hide-control-chars hide= human-readable hyperlink[=] ignore-backups ignore= " +
      "indicator-style= inode kibibytes literal no-group numeric-uid-gid quote-name quoting-style= recursive " +
      "reverse show-control-chars si size sort= tabsize= time= time-style= width= zero",
    "a=all A=almost-all b=escape B=ignore-backups c C d=directory D=dired f F=classify g G=no-group " +
      "h=human-readable H=dereference-command-line i=inode I=ignore k=kibibytes l L=dereference m n=numeric-uid-gid " +
      "N=literal o p q=hide-control-chars Q=quote-name r=reverse R=recursive s=size S t T=tabsize u U v w=width " +
      "x X Z=context 1",
  ),
  cat: reader(
    "number number-nonblank show-all show-ends show-nonprinting show-tabs squeeze-blank",
    "A=show-all b=number-nonblank e E=show-ends n=number s=squeeze-blank t T=show-tabs u v=show-nonprinting",
  ),
  head: counted(
    "bytes= lines= quiet silent verbose zero-terminated",
    "c=bytes n=lines q=quiet v=verbose z=zero-terminated",
  ),
  tail: counted(
    "bytes= follow[=] lines= max-unchanged-stats= pid= quiet retry silent sleep-interval= verbose zero-terminated",
    "c=bytes f F n=lines q=quiet s=sleep-interval v=verbose z=zero-terminated",
  ),
  wc: reader(
    "bytes chars files0-from= lines max-line-length words",
    "c=bytes m=chars l=lines L=max-line-length w=words",
  ),
  grep: counted(
    "after-context= basic-regexp before-context= binary binary-files= byte-offset color[=] colour[=] context= " +
      "count dereference-recursive devices= directories= exclude-dir= exclude-from= exclude= extended-regexp " +
      "file= files-with-matches files-without-match fixed-strings group-separator= ignore-case include= " +
      "initial-tab invert-match label= line-buffered line-number line-regexp max-count= no-filename " +
      "no-group-separator no-ignore-case no-messages null null-data only-matching perl-regexp quiet recursive " +
      "regexp= silent text with-filename word-regexp",
    "A=after-context a=text B=before-context b=byte-offset C=context c=count D=devices d=directories " +
      "E=extended-regexp e=regexp F=fixed-strings f=file G=basic-regexp H=with-filename h=no-filename " +
      "i=ignore-case L=files-without-match l=files-with-matches m=max-count n=line-number o=only-matching " +
      "P=perl-regexp q=quiet R=dereference-recursive r=recursive s=no-messages T=initial-tab U=binary " +
      "V=version v=invert-match w=word-regexp x=line-regexp y Z=null z=null-data",
  ),
  sort: reader(
    "batch-size= buffer-size= check[=] compress-program=! debug dictionary-order field-separator= files0-from= " +
      "general-numeric-sort human-numeric-sort ignore-case ignore-leading-blanks ignore-nonprinting key= merge " +
      "month-sort numeric-sort output=! parallel= random-sort random-source= reverse sort= stable " +
      "temporary-directory=! unique version-sort zero-terminated",
    "b=ignore-leading-blanks C c d=dictionary-order f=ignore-case g=general-numeric-sort h=human-numeric-sort " +
      "i=ignore-nonprinting k=key M=month-sort m=merge n=numeric-sort o=output R=random-sort r=reverse " +
      "S=buffer-size s=stable T=temporary-directory t=field-separator u=unique V=version-sort z=zero-terminated",
  ),
  // `uniq input output` writes its second operand.
  uniq: reader(
    "all-repeated[=] check-chars= count group[=] ignore-case repeated skip-chars= skip-fields= unique zero-terminated",
    "c=count D d=repeated f=skip-fields i=ignore-case s=skip-chars u=unique w=check-chars z=zero-terminated",
    (args) => args.operands.length <= 1,
  ),
  cut: reader(
    "bytes= characters= complement delimiter= fields= only-delimited output-delimiter= zero-terminated",
    "b=bytes c=characters d=delimiter f=fields n s=only-delimited z=zero-terminated",
  ),
  tr: reader(
    "complement delete squeeze-repeats truncate-set1",
    "C c=complement d=delete s=squeeze-repeats t=truncate-set1",
  ),
  nl: reader(
    "body-numbering= footer-numbering= header-numbering= join-blank-lines= line-increment= no-renumber " +
      "number-format= number-separator= number-width= section-delimiter= starting-line-number=",
    "b=body-numbering d=section-delimiter f=footer-numbering h=header-numbering i=line-increment " +
      "l=join-blank-lines n=number-format p=no-renumber s=number-separator v=starting-line-number w=number-width",
  ),
  // --paginate pipes the output through `pr`, a program of diff's own choosing.
  diff: reader(
    "brief color[=] context[=] ed exclude-from= exclude= expand-tabs from-file= ignore-all-space " +
      "ignore-blank-lines ignore-case ignore-file-name-case ignore-matching-lines= ignore-space-change " +
      "ignore-tab-expansion ignore-trailing-space initial-tab label= left-column line-format= minimal new-file " +
      "new-group-format= new-line-format= no-dereference no-ignore-file-name-case normal old-group-format= " +
      "old-line-format= changed-group-format= unchanged-group-format= unchanged-line-format= paginate! " +
      "palette= rcs recursive report-identical-files show-c-function show-function-line= side-by-side " +
      "speed-large-files starting-file= strip-trailing-cr suppress-blank-empty suppress-common-lines tabsize= " +
      "text to-file= unidirectional-new-file unified[=] width= horizon-lines= ifdef=",
    "a=text B=ignore-blank-lines b=ignore-space-change C: c D=ifdef d=minimal E=ignore-tab-expansion " +
      "e=ed F=show-function-line f i=ignore-case I=ignore-matching-lines l=paginate N=new-file n=rcs " +
      "p=show-c-function q=brief r=recursive S=starting-file s=report-identical-files T=initial-tab " +
      "t=expand-tabs U: u v=version W=width w=ignore-all-space x=exclude X=exclude-from y=side-by-side Z=ignore-trailing-space",
  ),
  cmp: reader(
    "bytes= ignore-initial= print-bytes quiet silent verbose",
    "b=print-bytes i=ignore-initial l=verbose n=bytes s=quiet",
  ),
  // --compile writes a compiled magic file; --no-sandbox lifts file's own seccomp filter; --preserve-date
  // sets the files' access times back.
  file: reader(
    "apple brief checking-printout compile! debug dereference exclude= exclude-quiet= extension files-from= " +
      "keep-going list magic-file= mime mime-encoding mime-type no-buffer no-dereference no-pad no-sandbox! " +
      "parameter= preserve-date! print0 raw separator= special-files uncompress uncompress-noreport",
    "b=brief C=compile c=checking-printout d=debug E e=exclude F=separator f=files-from h=no-dereference " +
      "i=mime k=keep-going L=dereference l=list m=magic-file N=no-pad n=no-buffer P=parameter p=preserve-date " +
      "r=raw S=no-sandbox s=special-files v=version Z=uncompress-noreport z=uncompress 0=print0",
  ),
  du: reader(
    "all apparent-size block-size= bytes count-links dereference dereference-args exclude-from= exclude= " +
      "files0-from= human-readable inodes max-depth= no-dereference null one-file-system separate-dirs si " +
      "summarize threshold= time[=] time-style= total",
    "0=null a=all B=block-size b=bytes c=total D=dereference-args d=max-depth H h=human-readable k " +
      "L=dereference l=count-links m P=no-dereference S=separate-dirs s=summarize t=threshold X=exclude-from " +
      "x=one-file-system",
  ),
  df: reader(
    "all block-size= exclude-type= human-readable inodes local no-sync output[=] portability print-type si " +
      "sync total type=",
    "a=all B=block-size H=si h=human-readable i=inodes k l=local P=portability T=print-type t=type " +
      "x=exclude-type v",
  ),
  stat: reader(
    "cached= dereference file-system format= printf= terse",
    "c=format f=file-system L=dereference t=terse",
  ),
  // -s / --set sets the system clock.
  date: reader(
    "date= debug file= iso-8601[=] reference= resolution rfc-3339= rfc-email set=! universal utc",
    "d=date f=file I=iso-8601 R=rfc-email r=reference s=set u=utc",
  ),
  basename: reader("multiple suffix= zero", "a=multiple s=suffix z=zero"),
  dirname: reader("zero", "z=zero"),
  realpath: reader(
    "canonicalize-existing canonicalize-missing logical no-symlinks physical quiet relative-base= relative-to= " +
      "strip zero",
    "e=canonicalize-existing L=logical m=canonicalize-missing P=physical q=quiet s=strip z=zero",
  ),
  readlink: reader(
    "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent verbose zero",
    "e=canonicalize-existing f=canonicalize m=canonicalize-missing n=no-newline q=quiet s=silent v=verbose z=zero",
  ),
  pwd: reader("logical physical", "L=logical P=physical"),
  which: reader("", "a s"),
  // tree's own parser takes no abbreviations; -o / --output writes its listing to a file.
  tree: reader(
    "noreport dirsfirst filesfirst gitignore du charset= filelimit= timefmt= prune matchdirs ignore-case " +
      "info sort= fromfile output!",
    "a d l f x L: P: I: q N Q p u g s h D F v t c r C n J X i o:!",
  ),
  // ripgrep: --pre runs a program on every file searched; -z runs decompressors (which only read).
  rg: counted(
    "after-context= before-context= case-sensitive color= colors= column context= count count-matches " +
      "files files-with-matches files-without-match fixed-strings follow glob= hidden heading iglob= " +
      "ignore-case invert-match json line-number max-count= max-depth= multiline no-filename no-heading " +
      "no-ignore no-line-number null only-matching pre=! pre-glob=! pretty regexp= replace= search-zip " +
      "smart-case sort= sortr= stats text trim type= type-not= type-list vimgrep with-filename word-regexp",
    "A=after-context B=before-context C=context c=count e=regexp F=fixed-strings g=glob H=with-filename " +
      "i=ignore-case I=no-filename L=follow l=files-with-matches m=max-count n=line-number N=no-line-number " +
      "o=only-matching p=pretty r=replace S=smart-case s=case-sensitive t=type T=type-not U=multiline " +
      "u v=invert-match w=word-regexp z=search-zip 0=null",
  ),
};

/**
 * Programs whose every argument is harmless: they print them (echo, printf — bash's `printf -v` sets a
 * variable, not a file), ignore them (true), or cannot write a file whatever they are given (jq).
 */
export const ANY_ARGUMENTS = new Set(["echo", "printf", "true", "jq"]);
