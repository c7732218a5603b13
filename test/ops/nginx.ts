// nginx for the replica tests: the one launcher in bench/nginx.mjs, which the soak uses too.
export {
  DEPLOY_NGINX_CONF,
  findNginx,
  type NginxOptions,
  type NginxProcess,
  nginxConfigFor,
  startNginx,
} from '../../bench/nginx.mjs';
