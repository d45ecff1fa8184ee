/**
 * Starts `caesar chat` (dist/cli/chat-code.cjs, see chat-main.ts) with V8's code cache
 * (dist/cli/chat-code.cache, made by `npm run build` after running a post): the bundle's functions come
 * compiled instead of being parsed and compiled again in every process — a measurable share of a
 * `caesar chat post` (bench/chat). Built as dist/cli/chat.cjs, the file bin/caesar.js loads for `caesar chat`.
 *
 * The cache is used only when it was made for this very bundle (the id the build appends to both) and
 * V8 accepts it (same V8 version and flags); otherwise the bundle compiles as usual. Nothing is ever
 * written at run time, except by the build (CAESAR_CHAT_CODE_CACHE_OUT).
 */
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Script } from "node:vm";

const CODE = join(__dirname, "chat-code.cjs");
const CACHE = join(__dirname, "chat-code.cache");
// The build appends `//# caesar-code-id=<hash>` to the bundle and writes `<hash>\n` before the cache bytes.
const ID = /\/\/# caesar-code-id=([0-9a-f]+)\s*$/;

function readCache(id: string | undefined): Buffer | undefined {
  if (id === undefined) return undefined;
  try {
    const file = readFileSync(CACHE);
    const header = Buffer.from(`${id}\n`);
    return file.subarray(0, header.length).equals(header) ? file.subarray(header.length) : undefined;
  } catch {
    return undefined;
  }
}

const source = readFileSync(CODE, "utf8");
const id = ID.exec(source)?.[1];
const cachedData = readCache(id);
const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
  filename: CODE,
  cachedData,
});
if (process.env.CAESAR_TRACE === "1") {
  const verdict = cachedData === undefined ? "none" : script.cachedDataRejected ? "rejected" : "used";
  process.stderr.write(`[trace] ${process.pid} chat: code cache ${verdict}\n`);
}
const output = process.env.CAESAR_CHAT_CODE_CACHE_OUT;
if (output !== undefined && id !== undefined) {
  // After the run, so that the functions it compiled are in the cache too.
  process.once("exit", () => {
    const temp = `${output}.${process.pid}.tmp`;
    writeFileSync(temp, Buffer.concat([Buffer.from(`${id}\n`), script.createCachedData()]));
    renameSync(temp, output);
  });
}
const module = { exports: {} };
(script.runInThisContext() as (...args: unknown[]) => void).call(
  module.exports,
  module.exports,
  require,
  module,
  CODE,
  dirname(CODE),
);
