/**
 * An ISO-8601 timestamp with the local UTC offset and whole seconds, as the spec's example writes
 * it: `2026-07-17T14:03:22+07:00` (UTC is written `+00:00`, never `Z`).
 */
export function formatTimestamp(date: Date): string {
  const offsetMinutes = -date.getTimezoneOffset();
  const local = new Date(date.getTime() + offsetMinutes * 60_000);
  const sign = offsetMinutes >= 0 ? "+" : "-";
  const abs = Math.abs(offsetMinutes);
  const offset = `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
  return `${local.toISOString().slice(0, 19)}${offset}`;
}

function pad(value: number): string {
  return String(value).padStart(2, "0");
}

const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

/** Does `raw` read as an ISO-8601 date-time carrying an offset (or `Z`)? */
export function isTimestampWithOffset(raw: string): boolean {
  return ISO_WITH_OFFSET.test(raw) && !Number.isNaN(Date.parse(raw));
}
