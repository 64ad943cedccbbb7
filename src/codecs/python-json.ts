/**
 * `json.dumps` as Python writes it with default arguments: separators ", " and ": ", non-ASCII escaped as
 * \uXXXX (ensure_ascii), floats in Python's repr. Hermes' FTS5 tables index the stored JSON text, so SQLite
 * rows we write must carry the same bytes the Python reference would write, or search results and snippets
 * would differ between rows written by either side.
 *
 * Limits, all outside what JSON from a model looks like: JavaScript has one number type, so 1.0 is written
 * as `1` (Python would write `1.0` for a float); object keys keep JavaScript's order (integer-like keys
 * first). Non-finite numbers are rejected by validation before they get here.
 */

const ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

export function pythonJsonString(value: string): string {
  let out = '"';
  for (let i = 0; i < value.length; i++) {
    const ch = value[i]!;
    const code = value.charCodeAt(i);
    const escaped = ESCAPES[ch];
    if (escaped) out += escaped;
    // ensure_ascii: everything outside ' '..'~' becomes \uXXXX (UTF-16 units, so astral chars become pairs).
    else if (code < 0x20 || code > 0x7e) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** Python's `repr(float)`: shortest round-trip digits, scientific below 1e-4 and from 1e16 up. */
export function pythonFloatRepr(value: number): string {
  if (Number.isInteger(value) && Math.abs(value) < 1e16) return `${value}.0`;
  const [mantissa, exponentText] = value.toExponential().split('e') as [string, string];
  const exponent = Number(exponentText);
  const negative = mantissa.startsWith('-');
  const digits = mantissa.replace('-', '').replace('.', '');
  let body: string;
  if (exponent < -4 || exponent >= 16) {
    const fraction = digits.slice(1);
    body = `${digits[0]}${fraction ? `.${fraction}` : ''}e${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`;
  } else if (exponent < 0) {
    body = `0.${'0'.repeat(-exponent - 1)}${digits}`;
  } else {
    const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, '0');
    const fraction = digits.slice(exponent + 1);
    body = `${whole}.${fraction || '0'}`;
  }
  return negative ? `-${body}` : body;
}

function pythonNumber(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError('JSON cannot hold a non-finite number');
  // An integral number in the exactly-representable range is written like a Python int; anything else
  // like a Python float (beyond 2^53 an integral double most likely was one).
  return Number.isSafeInteger(value) ? String(value) : pythonFloatRepr(value);
}

export function pythonJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'string':
      return pythonJsonString(value);
    case 'number':
      return pythonNumber(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(', ')}]`;
      const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
      return `{${entries.map(([k, v]) => `${pythonJsonString(k)}: ${pythonJsonDumps(v)}`).join(', ')}}`;
    }
    default:
      throw new TypeError(`cannot encode a ${typeof value} as JSON`);
  }
}
