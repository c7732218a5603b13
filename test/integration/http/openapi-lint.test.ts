import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sampleApp } from '../../helpers/app.js';
import { tempDir } from '../../helpers/works.js';
import { PAID_CONFIG } from '../../helpers/x402.js';

/**
 * The OpenAPI document as the linters people run on it see it: Spectral's OpenAPI ruleset and
 * Redocly's recommended rules, with no error and no warning, as served with per-call payments off
 * (`npm start`'s default) and on (x-payment-info and the 402s). `npm run lint:openapi` runs this.
 */
const BIN = join(process.cwd(), 'node_modules/.bin');

function lint(doc: unknown): { spectral: unknown[]; redocly: unknown[] } {
  const dir = tempDir('ri-openapi-');
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(doc));
  writeFileSync(join(dir, '.spectral.yaml'), 'extends: ["spectral:oas"]\n');
  const spectral = spawnSync(
    join(BIN, 'spectral'),
    ['lint', file, '-r', join(dir, '.spectral.yaml'), '-f', 'json', '--quiet'],
    { cwd: dir, encoding: 'utf8', timeout: 120_000 },
  );
  const redocly = spawnSync(join(BIN, 'redocly'), ['lint', file, '--format', 'json'], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
  const spectralOut = spectral.stdout.trim();
  const redoclyOut = redocly.stdout.slice(redocly.stdout.indexOf('{'));
  return {
    spectral: spectralOut ? (JSON.parse(spectralOut) as unknown[]) : [],
    redocly: (JSON.parse(redoclyOut) as { problems: unknown[] }).problems,
  };
}

describe('the OpenAPI document passes Spectral (spectral:oas) and Redocly (recommended)', () => {
  it.each([
    ['without payments', {}],
    ['with payments', PAID_CONFIG],
  ])(
    '%s: no error, no warning',
    async (_name, config) => {
      const { app, keys } = await sampleApp(config as never);
      const doc = (await (await app.request('/v1/openapi.json')).json()) as {
        paths: Record<string, Record<string, { tags?: string[]; description?: string }>>;
      };
      // What the linters check, checked here too, so a linter's silence cannot pass an untagged doc.
      for (const [path, item] of Object.entries(doc.paths))
        for (const [method, op] of Object.entries(item)) {
          expect([method, path, op.tags?.length]).toEqual([method, path, 1]);
          expect(op.description, `${method} ${path}`).toMatch(/\.$/);
        }
      // Examples are the served data's own answers: trying the example gives the example.
      const example = (path: string) =>
        (
          doc.paths[path]!.get as unknown as {
            responses: Record<string, { content: Record<string, { example?: unknown }> }>;
          }
        ).responses['200']!.content['application/json']!.example;
      expect(example('/elements/{symbol}')).toEqual(await (await app.request('/v1/elements/Fe')).json());
      expect(example('/versions')).toEqual(await (await app.request('/v1/versions')).json());
      const personal = { headers: { authorization: `Bearer ${keys.personal}` } };
      expect(example('/subjects/{subject_type}/{subject_id}')).toEqual(
        await (await app.request('/v1/subjects/topic/T10030', personal)).json(),
      );
      const problems = lint(doc);
      expect(problems.spectral).toEqual([]);
      expect(problems.redocly).toEqual([]);
    },
    180_000,
  );
});
