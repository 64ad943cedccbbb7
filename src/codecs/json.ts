/** JSON values as the API speaks them, and reading JSON text written by either side. */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * What callers may pass where JSON is stored: like JsonValue, but object properties may be `undefined`
 * (they are left out, as JSON.stringify does), so ordinary object literals type-check.
 */
export type JsonInput =
  | null
  | boolean
  | number
  | string
  | readonly JsonInput[]
  | { readonly [key: string]: JsonInput | undefined };

/**
 * Parse JSON text read from a TEXT column. Text that does not parse (foreign or damaged data) comes back
 * as the raw string rather than being dropped (Hermes returns `[]` for bad tool_calls, which hides data).
 */
export function parseStoredJson(text: string | null | undefined): JsonValue | null {
  if (text === null || text === undefined) return null;
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

/** Python truthiness for the JSON payloads Hermes stores only "if truthy": null, '', [], {} and 0 are falsy. */
export function isTruthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}
