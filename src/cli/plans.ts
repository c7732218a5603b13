import { parseArgs } from 'node:util';
import { PLANS } from '../access/plans.js';
import { StateNotFoundError } from '../access/state-store.js';
import { CliError, parsedOrCliError, printedHelp } from './cli-error.js';
import { STATE_USAGE, toPlan, withStore } from './keys.js';

const USAGE = `usage: ri plans set EMAIL ${PLANS.join('|')}

Changes the plan of the account with that email. Every key of the account has the new plan at
once, on every server sharing the state store.

${STATE_USAGE}`;

export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parsedOrCliError(() => parse(args));
  if (printedHelp(values, USAGE)) return 0;
  const [sub, ...rest] = positionals;
  if (sub === undefined) throw new CliError(`no subcommand given\n${USAGE}`);
  if (sub !== 'set') throw new CliError(`unknown subcommand 'plans ${sub}' (expected set)`);
  if (rest.length !== 2) throw new CliError('plans set needs EMAIL and PLAN');
  const [email, planName] = rest as [string, string];
  const plan = toPlan(planName);
  return withStore(values['data-dir'], async (store) => {
    try {
      const account = await store.setPlan(email, plan);
      process.stderr.write(`account ${account.id} (${account.email}) now has plan ${account.plan}\n`);
      return 0;
    } catch (error) {
      if (error instanceof StateNotFoundError) throw new CliError(error.message, 1);
      throw error;
    }
  });
}

function parse(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    options: { 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
}
