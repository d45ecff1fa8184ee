/**
 * The parts of zod caesar uses, re-exported by name. Modules write `import * as z from ".../support/zod.js"`
 * and keep zod's own spelling (`z.object`, `z.infer`…), but the bundler can now leave out what nobody
 * uses — zod's namespace object would pull in all of zod, its 40 locales included, into every process's
 * start-up.
 */

export type { infer, input, output } from "zod";
export {
  array,
  boolean,
  coerce,
  discriminatedUnion,
  enum,
  iso,
  literal,
  looseObject,
  number,
  object,
  record,
  strictObject,
  string,
  toJSONSchema,
  union,
  unknown,
  uuid,
  ZodDefault,
  ZodError,
  ZodObject,
  ZodOptional,
  ZodType,
} from "zod";
export type * as core from "zod/v4/core";

import { config } from "zod";

// No generated parsers: zod compiles each object schema into a function (new Function) the first time it
// parses with it, which pays only after thousands of parses. caesar's processes parse a few documents
// each: compiling the task state's schema alone cost more time and ≈ 5 MiB of memory than parsing it.
config({ jitless: true });
