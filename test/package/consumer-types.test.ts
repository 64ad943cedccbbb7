/**
 * A strict TypeScript consumer of the installed tarball: fixtures/consumer/strict.mts (ESM) and require.cts
 * (CommonJS, through require(esm)) compiled with `tsc --strict --skipLibCheck false --module nodenext`, so every
 * published .d.ts is checked, and `any` leaking out of them is an error (see notAny in strict.mts).
 *
 * One exception, named exactly: drizzle-orm 0.45's own .d.ts do not compile with skipLibCheck false (upstream
 * drizzle-team/drizzle-orm#5187: ~80 errors in its mysql/singlestore/gel builders and missing optional peers
 * such as `gel` and `mysql2`), for any app that imports drizzle-orm at all. Those, and only those, are tolerated.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, installApp, removeApp, rootBin, run } from './app.js';

const TIMEOUT = 180_000;

interface TscError {
  file: string;
  code: string;
  message: string;
  line: string;
}

/** drizzle-orm#5187's error codes, inside drizzle-orm's own declarations. */
const DRIZZLE_UPSTREAM_CODES = new Set(['TS2307', 'TS2344', 'TS2416', 'TS2420', 'TS2515', 'TS2559']);
const DRIZZLE_OPTIONAL_PEERS = /^Cannot find module '(gel|mysql2)(\/[^']*)?'/;

function isDrizzleUpstream(error: TscError): boolean {
  if (!error.file.startsWith('node_modules/drizzle-orm/') || !DRIZZLE_UPSTREAM_CODES.has(error.code)) return false;
  return error.code !== 'TS2307' || DRIZZLE_OPTIONAL_PEERS.test(error.message);
}

function parseTscErrors(output: string): TscError[] {
  const errors: TscError[] = [];
  for (const line of output.split('\n')) {
    // file(line,col): error TSxxxx: message, or a located-nowhere one (a bad option): error TSxxxx: message.
    const match = /^(?:(.+?)\(\d+,\d+\): )?error (TS\d+): (.*)$/.exec(line);
    if (match) errors.push({ file: match[1] ?? '', code: match[2]!, message: match[3]!, line });
  }
  return errors;
}

let app: string;

beforeAll(async () => {
  // A consumer's own @types/node, as any TypeScript app on Node has.
  app = await installApp('consumer-types', ['@types/node@^20.19.43']);
  fs.cpSync(path.join(FIXTURES, 'consumer'), app, { recursive: true });
}, 600_000);

afterAll(() => removeApp(app));

describe('a strict TypeScript consumer of the installed package', () => {
  it(
    'compiles with zero errors in its code and in every published declaration',
    async () => {
      const result = await run(
        rootBin('tsc'),
        [
          '--noEmit',
          '--strict',
          '--skipLibCheck',
          'false',
          '--module',
          'nodenext',
          '--moduleResolution',
          'nodenext',
          'strict.mts',
          'require.cts',
        ],
        { cwd: app },
      );
      const errors = parseTscErrors(result.stdout);
      const ours = errors.filter((e) => !isDrizzleUpstream(e));
      expect(
        ours.map((e) => e.line),
        `${ours.length} of ${errors.length} errors are not drizzle-orm#5187`,
      ).toEqual([]);
      // A failing tsc must have said why in errors parsed above (not, say, crashed).
      expect(result.code === 0 || errors.length > 0, result.stdout + result.stderr).toBe(true);
    },
    TIMEOUT,
  );
});
