import type { Hono } from 'hono';
import { PinnedQuery } from '../../../contracts/params.js';
import { buildSkill, type Skill } from '../../../skill/skill.js';
import type { AppEnv } from '../../context.js';
import { type RouteDeps, strictQuery } from '../shared.js';

/**
 * The agent skill: GET /v1/skill (a zip in the Agent Skills layout), GET /skill.md (its main
 * file) and GET /v1/skill/version (what the skill checks to tell its user about a newer one).
 * Free and keyless; built once, with this server's address in every link.
 */
export function registerSkill(app: Hono<AppEnv>, deps: Pick<RouteDeps, 'publicUrl' | 'edition'>): void {
  let skill: Skill | null = null;
  const get = () => {
    // The edition's own skill: the older edition's names only what it serves.
    skill ??= buildSkill(deps.publicUrl, deps.edition);
    return skill;
  };
  // Under /v1, as any read: a data_version pin is taken (and answered 410 once gone), nothing else.
  app.get('/v1/skill', strictQuery(PinnedQuery), (c) => {
    const s = get();
    return c.body(s.zip as Uint8Array<ArrayBuffer>, 200, {
      'content-type': 'application/zip',
      'content-disposition': `attachment; filename="research-intensity-skill-${s.version}.zip"`,
      'cache-control': 'public, max-age=300',
    });
  });
  // The version and where to get it, with what every answer carries (the interface spec): the
  // page to cite and notes, here on reading the version (it does not depend on the data served).
  app.get('/v1/skill/version', strictQuery(PinnedQuery), (c) => {
    const s = get();
    return c.json(
      {
        name: 'research-intensity',
        version: s.version,
        zip_url: `${deps.publicUrl}/v1/skill`,
        skill_md_url: `${deps.publicUrl}/skill.md`,
        canonical_url: `${deps.publicUrl}/skill.md`,
        notes: {
          version: `The skill's version served here (semver). If it is newer than the version in the front matter of your copy's SKILL.md, a newer skill is at zip_url (its main file at skill_md_url).`,
        },
      },
      200,
      { 'cache-control': 'public, max-age=60' },
    );
  });
  app.get('/skill.md', (c) =>
    c.body(get().files.get('SKILL.md')!, 200, {
      'content-type': 'text/markdown; charset=utf-8',
      'cache-control': 'public, max-age=300',
    }),
  );
}
