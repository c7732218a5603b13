#!/usr/bin/env node
/**
 * `ri`: the one executable. Each command lives in its own module and is loaded on demand,
 * so `ri tag` does not pay for the HTTP stack and `ri serve` does not load the generator.
 */
import { CliError } from './cli-error.js';
import { oneLine } from './failure-line.js';

type CommandModule = { run(args: string[]): Promise<number> };

const COMMANDS: Record<string, { summary: string; load: () => Promise<CommandModule> }> = {
  serve: {
    summary: 'serve the REST API, the MCP tool server and the web pages on the current snapshot',
    load: () => import('./serve.js'),
  },
  ingest: {
    summary: 'ingest OpenAlex works files or snapshot folders into the corpus store',
    load: () => import('./ingest.js'),
  },
  build: {
    summary: 'compute and publish a new snapshot from the corpus store',
    load: () => import('./build.js'),
  },
  update: {
    summary: 'ingest + build + publish; --watch follows a folder, --pull reads the OpenAlex API',
    load: () => import('./update.js'),
  },
  pull: {
    summary: 'read new and changed works from the OpenAlex API into the corpus store (resumable)',
    load: () => import('./pull.js'),
  },
  generate: {
    summary: 'write a synthetic corpus in the OpenAlex layout',
    load: () => import('./generate.js'),
  },
  tag: {
    summary: 'tag titles on stdin with element symbols (one JSON array per line)',
    load: () => import('./tag.js'),
  },
  'tagger-eval': {
    summary: 'precision and recall of the tagger on the hand-labelled titles',
    load: () => import('./tagger-eval.js'),
  },
  keys: {
    summary: 'create, list and revoke API keys (create prints the key once, on the last line)',
    load: () => import('./keys.js'),
  },
  subscriptions: {
    summary: 'webhook subscriptions: create (prints the secret once), list, delete, test',
    load: () => import('./subscriptions.js'),
  },
  'feed-tokens': {
    summary: 'feed tokens for feed and badge URLs: create (prints the token once), list, revoke',
    load: () => import('./feed-tokens.js'),
  },
  plans: { summary: "change an account's plan: ri plans set EMAIL PLAN", load: () => import('./plans.js') },
  rollback: { summary: 'publish the previous snapshot again', load: () => import('./rollback.js') },
  state: {
    summary: 'back up and restore the SQLite state store (PostgreSQL: pg_dump)',
    load: () => import('./state.js'),
  },
  payments: {
    summary: 'the per-call payments ledger: list, and reconcile after a crash',
    load: () => import('./payments.js'),
  },
  facilitator: {
    summary: 'a local x402 facilitator over HTTP (development and tests)',
    load: () => import('./facilitator.js'),
  },
};

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ri ${name.padEnd(width)}  ${c.summary}`);
  return ['usage: ri <command> [options]', '', ...lines, '', 'ri <command> --help for its options'].join(
    '\n',
  );
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${usage()}\n`);
    return name ? 0 : 2;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`ri: unknown command '${name}'\n\n${usage()}\n`);
    return 2;
  }
  const module = await command.load();
  try {
    return await module.run(rest);
  } catch (error) {
    // node:util parseArgs's own errors (an unknown option, a missing value): a usage error.
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_'))
      throw new CliError(`${(error as Error).message} (ri ${name} --help for its options)`);
    throw error;
  }
}

/**
 * Output that cannot be written. The reader gone (`ri payments list | head -2`: EPIPE) is the
 * usual end of a pipeline, not an error: exit 0 at once, as a program killed by SIGPIPE would
 * (Node ignores SIGPIPE, so the write fails instead). Anything else (a full disk): one line.
 */
function onOutputError(stream: 'stdout' | 'stderr') {
  return (error: NodeJS.ErrnoException): void => {
    if (error.code === 'EPIPE') process.exit(0);
    if (stream === 'stdout') {
      try {
        process.stderr.write(`ri: cannot write the output: ${oneLine(error) ?? error.message}\n`);
      } catch {
        // stderr failing as well: the exit status says it
      }
    }
    process.exit(1);
  };
}
process.stdout.on('error', onOutputError('stdout'));
process.stderr.on('error', onOutputError('stderr'));

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof CliError) {
      process.stderr.write(`ri: ${error.message}\n`);
      process.exitCode = error.exitCode;
      return;
    }
    const line = oneLine(error);
    process.stderr.write(
      `ri: ${line ?? (error instanceof Error ? (error.stack ?? error.message) : String(error))}\n`,
    );
    process.exitCode = 1;
  },
);
