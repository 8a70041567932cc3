/**
 * Builds or finds the servers Recoup runs against, idempotently, with stamp files under `.tools/`:
 * the Temporal CLI (dev server + UI), FerretDB (MongoDB wire protocol on SQLite) and the Java
 * time-skipping test server. Nothing is downloaded except through Go's module proxy and Maven Central.
 *
 * Usage: tsx scripts/toolchain.ts [--for start|test]
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildFailure, goModMinimum, goProblem, type GoNeed } from './toolchain-checks.js';
import { toolchainFile, toolsDir, type Toolchain } from './toolchain-paths.js';

const TEMPORAL_CLI_VERSION = '1.5.1';
/** The `go` line of github.com/temporalio/cli's go.mod at TEMPORAL_CLI_VERSION: change them together. */
const TEMPORAL_CLI_GO = '1.25.0';
const root = join(toolsDir, '..');
const binDir = join(toolsDir, 'bin');
const stampDir = join(toolsDir, 'stamps');

function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, name);
    if (dir && existsSync(candidate) && !candidate.startsWith(binDir)) return candidate;
  }
  return null;
}

/** Stops the step with one line for the operator, never a stack trace. */
function stop(sentence: string): never {
  console.error(`toolchain: ${sentence}`);
  process.exit(1);
}

function requireTool(cmd: string, args: string[], what: string): void {
  const probe = spawnSync(cmd, args, { stdio: 'ignore' });
  if (probe.error || probe.status !== 0) stop(what);
}

function fingerprint(...parts: string[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(existsSync(p) ? readFileSync(p) : p);
  return h.digest('hex').slice(0, 16);
}

/** Runs `build` unless the stamp named `name` already holds `fp` and `output` exists. */
function cached(name: string, fp: string, output: string, build: () => void): string {
  const stamp = join(stampDir, name);
  if (existsSync(output) && existsSync(stamp) && readFileSync(stamp, 'utf8') === fp) return output;
  const started = Date.now();
  console.error(`toolchain: building ${name} (first run only; this takes a few minutes)…`);
  build();
  mkdirSync(stampDir, { recursive: true });
  writeFileSync(stamp, fp);
  console.error(`toolchain: ${name} ready in ${Math.round((Date.now() - started) / 1000)} s`);
  return output;
}

/** Runs a build command with its output on ours; stops the step with one line if it fails. */
function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): void {
  const cwd = opts.cwd ?? root;
  const outcome = spawnSync(cmd, args, {
    stdio: ['ignore', 'inherit', 'inherit'],
    cwd,
    env: { ...process.env, ...opts.env },
  });
  if (outcome.error || outcome.status !== 0) stop(buildFailure([cmd, ...args], cwd, outcome));
}

// GOTOOLCHAIN=local: build with the Go installed, never one a go.mod would have downloaded.
const goEnv = { GOTOOLCHAIN: 'local', CGO_ENABLED: '0', GOFLAGS: '-mod=mod' };

/** Runs `go …args`, first stopping the step with one sentence unless the Go on PATH is new enough for `need`. */
function goBuild(need: GoNeed, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): void {
  const env = { ...goEnv, ...opts.env };
  const probe = spawnSync('go', ['env', 'GOVERSION'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    env: { ...process.env, ...env },
  });
  const reported = probe.error ? null : probe.status === 0 ? probe.stdout.trim() : '';
  const problem = goProblem(reported, need);
  if (problem) stop(problem);
  run('go', args, { ...opts, env });
}

function temporalCli(): string {
  const existing = onPath('temporal');
  if (existing) return existing;
  const out = join(binDir, 'temporal');
  const need = {
    minimum: TEMPORAL_CLI_GO,
    build: 'the Temporal CLI',
    instead: 'put a `temporal` binary on PATH',
  };
  return cached(`temporal-${TEMPORAL_CLI_VERSION}`, TEMPORAL_CLI_VERSION, out, () =>
    goBuild(
      need,
      [
        'install',
        '-ldflags',
        `-X github.com/temporalio/cli/temporalcli.Version=${TEMPORAL_CLI_VERSION}`,
        `github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`,
      ],
      { env: { GOBIN: binDir } },
    ),
  );
}

function mongoServer(): Toolchain['mongo'] {
  const mongod = onPath('mongod');
  if (mongod) return { kind: 'mongod', path: mongod };
  const src = join(root, 'tools', 'ferretdb');
  const sources = readdirSync(src).filter((f) => f.endsWith('.go') || f === 'go.mod' || f === 'go.sum');
  const fp = fingerprint(...sources.sort().map((f) => join(src, f)));
  const out = join(binDir, 'ferretdb');
  const need = {
    minimum: goModMinimum(readFileSync(join(src, 'go.mod'), 'utf8')),
    build: 'FerretDB',
    instead: 'put `mongod` on PATH',
  };
  cached('ferretdb', fp, out, () => goBuild(need, ['build', '-o', out, '.'], { cwd: src }));
  return { kind: 'ferretdb', path: out };
}

function timeSkippingServer(): string {
  requireTool(
    'java',
    ['-version'],
    'A JDK 17 (java on PATH) is needed for the Temporal time-skipping test server: install openjdk-17-jdk-headless.',
  );
  requireTool(
    'mvn',
    ['-v'],
    'Maven is needed to fetch the Temporal time-skipping test server: install maven.',
  );
  const pom = join(root, 'tools', 'tts', 'pom.xml');
  const lib = join(toolsDir, 'tts', 'lib');
  const wrapper = join(binDir, 'temporal-test-server');
  return cached('temporal-test-server', fingerprint(pom, 'v2'), wrapper, () => {
    run('mvn', [
      '-q',
      '-B',
      '-f',
      pom,
      'org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies',
      '-DincludeScope=runtime',
      `-DoutputDirectory=${lib}`,
    ]);
    mkdirSync(binDir, { recursive: true });
    // The SDK kills only the process it spawned, so the wrapper must exec java rather than fork it.
    writeFileSync(
      wrapper,
      `#!/bin/sh\nexec java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto -cp "${lib}/*" io.temporal.testserver.TestServer "$@"\n`,
    );
    chmodSync(wrapper, 0o755);
  });
}

function existingTestServer(): string | null {
  const wrapper = join(binDir, 'temporal-test-server');
  return existsSync(wrapper) ? wrapper : null;
}

function chromium(): string | null {
  return ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p)) ?? null;
}

const { values } = parseArgs({ options: { for: { type: 'string', default: 'test' } } });
const purpose = values.for === 'start' ? 'start' : 'test';
mkdirSync(binDir, { recursive: true });
const external = Boolean(process.env.TEMPORAL_ADDRESS) && Boolean(process.env.MONGODB_URI);
const toolchain: Toolchain = {
  temporal: purpose === 'start' && process.env.TEMPORAL_ADDRESS ? null : temporalCli(),
  mongo: purpose === 'start' && process.env.MONGODB_URI ? null : mongoServer(),
  // Keep what an earlier run for the other purpose built, so `npm start` and `npm test` can share `.tools/`.
  testServer: purpose === 'test' ? timeSkippingServer() : existingTestServer(),
  chromium: chromium(),
};
if (external)
  console.error(
    'toolchain: TEMPORAL_ADDRESS and MONGODB_URI are set: npm start uses those servers; npm test starts its own.',
  );
writeFileSync(toolchainFile, JSON.stringify(toolchain, null, 2));
