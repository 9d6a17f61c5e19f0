// Runs a WebAssembly command module (wasm32-wasi) under node's WASI, as
// qemu-user runs the foreign ISAs' test programs: arguments, environment,
// the host's / for files (absolute paths: wasi-libc resolves a relative one
// against /), exit status passed on.
// Usage: node scripts/wasi-run.mjs PROGRAM.wasm [ARG...]
import { readFile } from 'node:fs/promises';
import { WASI } from 'node:wasi';
import process from 'node:process';

const [program, ...args] = process.argv.slice(2);
const wasi = new WASI({
  version: 'preview1',
  args: [program, ...args],
  env: process.env,
  preopens: { '/': '/' },
  returnOnExit: true,
});
const module = await WebAssembly.compile(await readFile(program));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exitCode = wasi.start(instance);
