// Serves examples/wasm-node's page on 127.0.0.1 with the module build.sh
// made, opens it in headless Chromium, and checks that what the page prints
// equals what node prints from the same module: the same codes, values and
// digest of every output byte, and SIMD agreeing with scalar.
// Usage: node page_check.mjs PAGE_DIR KERNELS.wasm CHROMIUM
import { spawn } from 'node:child_process';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [pageDir, kernelsPath, chromium] = process.argv.slice(2);
const { instantiateKernels } = await import(pathToFileURL(join(pageDir, 'kernels.mjs')).href);
const { runDemo } = await import(pathToFileURL(join(pageDir, 'demo.mjs')).href);
const want = runDemo(await instantiateKernels(readFileSync(kernelsPath))).lines.join('\n');

const files = {
  '/': [join(pageDir, 'index.html'), 'text/html'],
  '/kernels.mjs': [join(pageDir, 'kernels.mjs'), 'text/javascript'],
  '/demo.mjs': [join(pageDir, 'demo.mjs'), 'text/javascript'],
  '/kernels.wasm': [kernelsPath, 'application/wasm'],
};

let browser, done = false;
const profile = mkdtempSync(join(tmpdir(), 'qgen-page-'));
function finish(code, message) {
  if (done) return;
  done = true;
  (code ? console.error : console.log)(message);
  server.close();
  if (!browser || browser.exitCode !== null) cleanUp(code);
  else {
    browser.on('exit', () => cleanUp(code));
    process.kill(-browser.pid, 'SIGKILL'); // Chromium and every process it started
  }
}
function cleanUp(code) {
  try {
    rmSync(profile, { recursive: true, force: true, maxRetries: 5 });
  } catch (e) {
    console.error(`page_check: ${profile} left behind: ${e.message}`);
  }
  process.exit(code);
}

const server = createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/result') {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      res.end();
      if (body === want) finish(0, `page_check: the page printed what node prints:\n${body}`);
      else finish(1, `page_check: the page printed\n${body}\nwhere node prints\n${want}`);
    });
    return;
  }
  const file = files[req.url];
  if (!file) { res.writeHead(404).end(); return; }
  res.writeHead(200, { 'content-type': file[1] }).end(readFileSync(file[0]));
});

server.listen(0, '127.0.0.1', () => {
  const url = `http://127.0.0.1:${server.address().port}/`;
  browser = spawn(chromium, ['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run',
    `--user-data-dir=${profile}`, url], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let log = '';
  browser.stderr.on('data', (d) => (log += d));
  browser.on('exit', (code) => finish(1, `page_check: ${chromium} exited (${code}) before the page reported:\n${log.slice(-2000)}`));
  setTimeout(() => finish(1, `page_check: no result from the page at ${url} within 90 s:\n${log.slice(-2000)}`), 90000);
});
