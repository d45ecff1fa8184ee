/**
 * Random hex for names that must not collide — task and question ids, temporary files — and need not be
 * secret (never for tokens: those use node:crypto). Math.random is enough here and, unlike node:crypto,
 * does not initialise OpenSSL, which costs every caesar process ≈ 2 MiB and some start-up time. V8 seeds
 * it per process.
 */
export function randomHex(bytes: number): string {
  let hex = "";
  for (let i = 0; i < bytes; i++)
    hex += Math.floor(Math.random() * 256)
      .toString(16)
      .padStart(2, "0");
  return hex;
}
