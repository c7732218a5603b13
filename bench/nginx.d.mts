// Types of bench/nginx.mjs, for the tests that import it (test/e2e/ops/nginx.ts).
import type { ChildProcess } from 'node:child_process';

export interface NginxOptions {
  listen: number;
  upstreams: [number, number];
  dir: string;
}

export interface NginxProcess {
  child: ChildProcess;
  base: string;
  accessLog: string;
  stderr(): string;
  stop(): Promise<void>;
}

export const DEPLOY_NGINX_CONF: string;
export function findNginx(): string | undefined;
export function nginxConfigFor(nginx: string, o: NginxOptions): string;
export function startNginx(nginx: string, o: NginxOptions): Promise<NginxProcess>;
