/**
 * The certification recipe (docs/certify.md), run as a third party runs it: the packed package installed into
 * an app with vitest and fast-check, the page's test file copied verbatim, `vitest run`.
 * It must pass on PGlite with only the skips it names; the same harness with one method broken must fail,
 * so the suite certifies something.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/package.js';
import { installApp, removeApp, run } from './app.js';

const TIMEOUT = 900_000;
const version = (name: string) =>
  (JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string })
    .version;

/** The fenced block that follows docs/certify.md's `<!-- certify-recipe -->` marker. */
function recipe(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'docs', 'certify.md'), 'utf8');
  const found = /<!-- certify-recipe -->\n```ts\n([\s\S]*?)```/.exec(readme);
  if (!found) throw new Error('docs/certify.md lost its <!-- certify-recipe --> block');
  return found[1]!;
}

interface VitestReport {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  testResults: Array<{ assertionResults: Array<{ fullName: string; status: string; failureMessages: string[] }> }>;
}

let app: string;

beforeAll(async () => {
  app = await installApp('certify', [`vitest@${version('vitest')}`, `fast-check@${version('fast-check')}`]);
}, TIMEOUT);

afterAll(() => removeApp(app));

async function vitest(file: string, extra: string[] = []): Promise<{ code: number; report: VitestReport }> {
  const out = path.join(app, `${file}.json`);
  const result = await run(
    path.join(app, 'node_modules', '.bin', 'vitest'),
    ['run', file, '--reporter=json', `--outputFile=${out}`, ...extra],
    // Not our CI's settings: the app sees only what a third party's shell would give it.
    { cwd: app, env: { CI: '', DATABASE_URL: '' } },
  );
  if (!fs.existsSync(out)) throw new Error(`vitest wrote no report (exit ${result.code}):\n${result.stderr}`);
  return { code: result.code, report: JSON.parse(fs.readFileSync(out, 'utf8')) as VitestReport };
}

describe('certifying a backend with hermes-sessiondb/testing (the docs/certify.md recipe)', () => {
  it(
    'passes on PGlite, skipping only the multi-process tests, with their reason',
    async () => {
      fs.writeFileSync(path.join(app, 'certify.test.ts'), recipe());
      const { code, report } = await vitest('certify.test.ts');
      const results = report.testResults.flatMap((f) => f.assertionResults);
      const failed = results
        .filter((r) => r.status === 'failed')
        .map((r) => `${r.fullName}: ${r.failureMessages[0]?.slice(0, 400)}`);
      expect(failed).toEqual([]);
      expect(code).toBe(0);
      // The whole suite ran: every contract area is there.
      expect(report.numPassedTests).toBeGreaterThan(130);
      for (const area of ['every call settles', 'appending and reading messages', 'search', 'titles', 'handoff']) {
        expect(
          results.some((r) => r.status === 'passed' && r.fullName.toLowerCase().includes(area)),
          area,
        ).toBe(true);
      }
      // Nothing skipped but what the harness's skip list names.
      const skipped = results.filter((r) => r.status !== 'passed');
      expect(skipped.length).toBeLessThanOrEqual(report.numPendingTests);
      for (const r of skipped) expect(r.fullName).toMatch(/two stores|other process|multi-process|PGlite runs/i);
    },
    TIMEOUT,
  );

  it(
    'fails a backend that breaks the contract (titles read back as null)',
    async () => {
      const open = "open: (options) => openStore('pglite:memory', options),";
      const text = recipe();
      expect(text).toContain(open);
      // A store whose getSessionTitle forgets every title: a backend with a bug the suite must catch.
      const sabotaged = text.replace(
        open,
        `open: async (options) => {
    const store = await openStore('pglite:memory', options);
    return new Proxy(store, {
      get: (target, key, receiver) =>
        key === 'getSessionTitle' ? async () => null : Reflect.get(target, key, receiver),
    });
  },`,
      );
      fs.writeFileSync(path.join(app, 'sabotaged.test.ts'), sabotaged);
      const { code, report } = await vitest('sabotaged.test.ts', ['-t', 'title']);
      expect(code).not.toBe(0);
      expect(report.numFailedTests).toBeGreaterThan(0);
    },
    TIMEOUT,
  );
});
