/**
 * Fixtures written by the Python reference live in ../shared/fixtures (beside the repository in CI).
 * A user's clone may not have them: then the tests that need them skip with the reason; under CI=true a
 * missing fixture is a failure.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isCI } from '../backends.js';

const sharedFixtures = path.resolve(fileURLToPath(new URL('../../../shared/fixtures', import.meta.url)));

export interface Fixture {
  path: string | undefined;
  /** Why the fixture is missing (undefined when present). */
  missing: string | undefined;
}

export function sharedFixture(name: string): Fixture {
  const file = path.join(sharedFixtures, name);
  if (fs.existsSync(file)) return { path: file, missing: undefined };
  const missing = `fixture ${file} is not present (it ships in ../shared beside the repository)`;
  if (isCI) throw new Error(`CI=true and ${missing}`);
  console.warn(`skipping fixture tests: ${missing}`);
  return { path: undefined, missing };
}

/** Copy a fixture to a temp dir (never open the original: tests must not write to it). */
export function copyFixture(file: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-fixture-'));
  const target = path.join(dir, path.basename(file));
  fs.copyFileSync(file, target);
  return target;
}

export function sha256(file: string): string {
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}
