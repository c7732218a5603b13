// Types of bench/hostile-strings.mjs, for the tests that import it.
export declare const HOSTILE_STRINGS: readonly string[];
