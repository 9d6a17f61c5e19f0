// Loads kernels.wasm (build.sh) and runs demo.mjs in node.
// Usage: node run.mjs kernels.wasm
import { readFileSync } from 'node:fs';
import { instantiateKernels } from './kernels.mjs';
import { runDemo } from './demo.mjs';

const { lines, agree } = runDemo(await instantiateKernels(readFileSync(process.argv[2])));
for (const line of lines) console.log(line);
process.exitCode = agree ? 0 : 1;
