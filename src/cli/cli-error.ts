/**
 * An error the user caused, printed as one line, no stack trace. Exit 2 (the default) is for bad
 * command-line arguments (an unknown option, a bad value, a missing path); 1 for what is wrong
 * outside the command line (a configuration value, a file's content, a service that fails).
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
  }
}

/**
 * Runs an argument parser (node:util parseArgs), turning its errors into a one-line CliError;
 * `say` words the message (a command's prefix, its usage).
 */
export function parsedOrCliError<T>(parse: () => T, say: (message: string) => string = (m) => m): T {
  try {
    return parse();
  } catch (error) {
    throw new CliError(say(error instanceof Error ? error.message : String(error)));
  }
}

/** A --port option's value, checked: decimal digits, 0-65535 (a usage error otherwise). */
export function portOption(value: string): string {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535)
    throw new CliError(`--port must be a port number (0-65535), not '${value}'`);
  return value;
}

/** Prints a command's usage when --help (-h) was given; the command then exits 0. */
export function printedHelp(values: { help?: unknown }, usage: string): boolean {
  if (values.help !== true) return false;
  process.stdout.write(`${usage}\n`);
  return true;
}
