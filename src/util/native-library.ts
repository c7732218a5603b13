import { fileURLToPath } from 'node:url';

const SUFFIX: string = { darwin: 'dylib', win32: 'dll' }[process.platform as string] ?? 'so';

/**
 * The path of one of the project's SQLite extensions (native/NAME.c), built by
 * scripts/build-native.mjs (`npm run build`) into dist/native/: the same from src/ or dist/.
 */
export function nativeLibrary(name: string): string {
  return fileURLToPath(new URL(`../../dist/native/${name}.${SUFFIX}`, import.meta.url));
}
