/**
 * The deepest nesting of arrays and objects a request body may have. `JSON.parse` takes any
 * depth, but what reads the value next (the SDK's schema validation, `JSON.stringify`) is
 * recursive: a body nested 10 000 deep overflowed the stack and was answered `500`. No MCP
 * request comes near this bound.
 */
export const MAX_JSON_DEPTH = 256;

const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether JSON text nests arrays and objects deeper than `max`, found in one pass over the
 * text (brackets inside strings do not count) without recursion. The text need not be
 * valid JSON: for invalid text the answer is about its brackets only.
 */
export function nestsDeeperThan(text: string, max: number = MAX_JSON_DEPTH): boolean {
  // Cheap exit: a text with no more brackets than the bound cannot nest deeper.
  if (text.length <= max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === BACKSLASH) i++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_ARRAY || code === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (code === CLOSE_ARRAY || code === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}
