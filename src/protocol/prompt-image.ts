/** Images a front end hands a task's agent with its brief (an editor's prompt, `caesar acp`). */
import * as z from "../support/zod.js";

/** The most images one task takes, and the largest one (base64 characters: about 3 MiB of image). */
export const MAX_PROMPT_IMAGES = 8;
export const MAX_IMAGE_BASE64_CHARS = 4 * 1024 * 1024;

export const PromptImageSchema = z.strictObject({
  mime_type: z.enum(["image/png", "image/jpeg", "image/gif", "image/webp"], {
    error: "expected image/png, image/jpeg, image/gif or image/webp",
  }),
  data: z
    .string()
    .min(1)
    .max(MAX_IMAGE_BASE64_CHARS, { error: `an image is at most ${MAX_IMAGE_BASE64_CHARS} base64 characters` })
    .regex(/^[A-Za-z0-9+/]+={0,2}$/, { error: "expected the image's bytes in base64" }),
});
export type PromptImage = z.infer<typeof PromptImageSchema>;
