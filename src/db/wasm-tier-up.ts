import { setFlagsFromString } from 'node:v8';

/**
 * V8's budget before it recompiles a WebAssembly function with its optimizing compiler: ten times its default
 * (docs/startup.md, "WebAssembly tier-up").
 */
const WASM_TIERING_BUDGET = 18_000_000;

/**
 * PGlite's PostgreSQL is WebAssembly. V8 runs it at first from its baseline compiler and recompiles a function with
 * its optimizing compiler once it has run for a budget; at the default budget opening a database recompiles much of
 * the backend only to run a few dozen statements, a third of the CPU of a restart. At ten times the budget a start
 * stays on the baseline code, and the statements a process runs all day are still optimized within its first
 * seconds of work. Call before the first database opens: V8 reads the flag when it compiles the module.
 */
export function deferWasmTierUp(): void {
  setFlagsFromString(`--wasm-tiering-budget=${WASM_TIERING_BUDGET}`);
}
