const BASE64_PREFIX = "=?base64?";
const BASE64_SUFFIX = "?=";

/**
 * `true` when `value` cannot travel as a plain HTTP field value (RFC 9110 §5.5): empty, a
 * character outside visible ASCII and tab, leading or trailing whitespace (field parsing
 * strips it), or already shaped like the base64 form (the spec's "to avoid ambiguity" rule).
 */
function needsBase64(value: string): boolean {
  if (value.length === 0 || value !== value.trim()) return true;
  if (value.startsWith(BASE64_PREFIX) && value.endsWith(BASE64_SUFFIX)) return true;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code !== 9 && (code < 32 || code > 126)) return true;
  }
  return false;
}

/**
 * Encodes an `Mcp-Name` (or other 2026-07-28 routing header) value the way the spec and the
 * SDK client do: unchanged when it is a safe ASCII field value, else `=?base64?{utf-8 b64}?=`.
 */
export function encodeRoutingHeader(value: string): string {
  if (!needsBase64(value)) return value;
  let binary = "";
  for (const byte of new TextEncoder().encode(value)) binary += String.fromCharCode(byte);
  return `${BASE64_PREFIX}${btoa(binary)}${BASE64_SUFFIX}`;
}
