// nginx in front of `ri serve` replicas, running deploy/nginx.conf with only ports and paths
// changed: one copy for the soak (bench/soak.mjs) and the replica test (test/e2e/ops/nginx.ts).
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, chmodSync, constants, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The deployment's nginx configuration, run with only ports and paths changed. */
export const DEPLOY_NGINX_CONF = resolve(import.meta.dirname, '../deploy/nginx.conf');

/** The nginx binary: on PATH, else Debian's /usr/sbin/nginx (not on a non-root user's PATH); undefined when not installed. */
export function findNginx() {
  for (const dir of [
    ...(process.env.PATH ?? '').split(':').filter(Boolean),
    '/usr/sbin',
    '/usr/local/sbin',
  ]) {
    const candidate = join(dir, 'nginx');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Replaces `from` in `text`, which must occur exactly once (a changed deploy file fails loudly here). */
function replaceOnce(text, from, to) {
  const pattern =
    typeof from === 'string' ? new RegExp(from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'g') : from;
  const count = [...text.matchAll(new RegExp(pattern.source, 'gm'))].length;
  if (count !== 1) throw new Error(`deploy/nginx.conf: expected one ${pattern} but found ${count}`);
  return text.replace(new RegExp(pattern.source, 'm'), to);
}

/**
 * deploy/nginx.conf with the public port and the two replica ports substituted, and every file
 * nginx writes (access log, temp folders) inside `o.dir`. Nothing else is changed.
 */
export function nginxConfigFor(nginx, o) {
  let conf = readFileSync(DEPLOY_NGINX_CONF, 'utf8');
  conf = replaceOnce(conf, /^(\s*)listen 8080;$/, `$1listen 127.0.0.1:${o.listen};`);
  conf = replaceOnce(conf, /^(\s*)server 127\.0\.0\.1:8081 /, `$1server 127.0.0.1:${o.upstreams[0]} `);
  conf = replaceOnce(conf, /^(\s*)server 127\.0\.0\.1:8082 /, `$1server 127.0.0.1:${o.upstreams[1]} `);
  conf = replaceOnce(conf, '/var/log/nginx/ri-access.log', join(o.dir, 'access.log'));
  // The temp folders are compiled in (Debian: /var/lib/nginx/*); every module nginx has wants its own.
  const built = spawnSync(nginx, ['-V'], { encoding: 'utf8' }).stderr;
  const temps = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .filter((m) => m === 'client_body' || !built.includes(`--without-http_${m}_module`))
    .map((m) => `    ${m}_temp_path ${join(o.dir, `${m}_temp`)};`)
    .join('\n');
  conf = replaceOnce(conf, /^http \{$/, `http {\n${temps}`);
  // `user` is for a master started as root; anyone else would get a warning for it.
  if (process.getuid?.() !== 0) conf = replaceOnce(conf, /^user \S+;$/, '');
  return conf;
}

/** Runs nginx in the foreground on the generated configuration; resolves once it answers /healthz through a replica. */
export async function startNginx(nginx, o) {
  // Worker processes (www-data when the master is root) must reach the temp folders inside `dir`.
  chmodSync(o.dir, 0o755);
  const conf = join(o.dir, 'nginx.conf');
  writeFileSync(conf, nginxConfigFor(nginx, o));
  const child = spawn(
    nginx,
    [
      '-e',
      'stderr',
      '-p',
      o.dir,
      '-c',
      conf,
      '-g',
      `daemon off; pid ${join(o.dir, 'nginx.pid')}; error_log stderr;`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const exited = new Promise((r) => child.once('exit', () => r()));
  const base = `http://127.0.0.1:${o.listen}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}: ${stderr}`);
    const ok = await fetch(`${base}/healthz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`nginx did not answer on ${base}: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    base,
    accessLog: join(o.dir, 'access.log'),
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
