// nginx for the replica tests: the one launcher in bench/nginx.mjs, which the soak uses too.
export { findNginx, type NginxProcess, startNginx } from '../../../bench/nginx.mjs';
