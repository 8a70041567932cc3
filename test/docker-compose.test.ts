import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { configVariables, loadConfig, requiredConfigVariables } from '../runtime/config.js';
import { searchAttributes } from '../scripts/servers.js';

// Images cannot be pulled here, so the deployment files are checked for what can go wrong without them:
// dangling references, unknown or missing configuration, missing health checks.
const root = fileURLToPath(new URL('..', import.meta.url));

interface Service {
  image?: string;
  build?: { context: string; dockerfile?: string };
  command?: string[] | string;
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  volumes?: string[];
  restart?: string;
}
interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), {
  maxAliasCount: 100,
}) as Compose;
const services = Object.entries(compose.services);
const ours = ['api', 'worker'] as const;

/**
 * Variables a deployment of several processes must set even though they have defaults: the defaults
 * (loopback address, a key generated into a local directory, localhost URLs) only fit one machine.
 */
const deploymentVariables = [
  'HOST',
  'PUBLIC_BASE_URL',
  'TEMPORAL_ADDRESS',
  'TEMPORAL_NAMESPACE',
  'MONGODB_URI',
  'RECOUP_MASTER_KEY',
];

/** Compose interpolation as `docker compose` does it for `$VAR`, `${VAR}`, `${VAR:-default}`, `${VAR:?err}`, `$$`. */
function interpolate(value: string, env: Record<string, string>): string {
  return value.replace(/\$\$|\$\{(\w+)(?::([-?])([^}]*))?\}|\$(\w+)/g, (all, braced, op, arg, bare) => {
    if (all === '$$') return '$';
    const name = (braced ?? bare) as string;
    const set = env[name];
    if (set) return set;
    if (op === '-') return arg as string;
    if (op === '?') throw new Error(`${name}: ${arg as string}`);
    return '';
  });
}

describe('docker-compose.yml', () => {
  it('references only services that exist, and volumes that are declared', () => {
    for (const [name, service] of services) {
      for (const target of Object.keys(service.depends_on ?? {}))
        expect(compose.services, `${name} depends on ${target}`).toHaveProperty(target);
      for (const volume of service.volumes ?? []) {
        const source = volume.split(':')[0] ?? '';
        if (!source.startsWith('.') && !source.startsWith('/'))
          expect(compose.volumes ?? {}, `${name} mounts ${source}`).toHaveProperty(source);
      }
    }
  });

  it('builds the API and the worker from our Dockerfile into one image', () => {
    for (const name of ours) {
      const build = compose.services[name]?.build;
      expect(build, name).toBeDefined();
      expect(existsSync(join(root, build?.context ?? '-', build?.dockerfile ?? 'Dockerfile'))).toBe(true);
    }
    expect(compose.services.api?.image).toBe(compose.services.worker?.image);
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^FROM node:20-bookworm-slim$/m);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
  });

  it('runs entry points that exist', () => {
    for (const name of ours) {
      const service = compose.services[name];
      const files = [service?.command, service?.healthcheck?.test]
        .flat()
        .filter((arg): arg is string => typeof arg === 'string' && arg.endsWith('.ts'));
      expect(files.length, name).toBeGreaterThan(0);
      for (const file of files) expect(existsSync(join(root, file)), file).toBe(true);
    }
  });

  it('configures the API and the worker only with variables runtime/config.ts knows, all it needs set', () => {
    for (const name of ours) {
      const environment = compose.services[name]?.environment ?? {};
      const known: readonly string[] = configVariables;
      for (const variable of Object.keys(environment))
        expect(known, `${name}: ${variable}`).toContain(variable);
      for (const variable of [...requiredConfigVariables, ...deploymentVariables])
        expect(environment, `${name} must set ${variable}`).toHaveProperty(variable);
      expect(environment.HOST).toBe('0.0.0.0');
    }
  });

  it('gives values that the configuration parser accepts, and refuses to start without a master key', () => {
    const key = Buffer.alloc(32, 7).toString('base64');
    for (const name of ours) {
      const environment = compose.services[name]?.environment ?? {};
      const env = Object.fromEntries(
        Object.entries(environment).map(([k, v]) => [k, interpolate(String(v), { RECOUP_MASTER_KEY: key })]),
      );
      const config = loadConfig(env);
      expect(config.temporal.address).toBe('temporal:7233');
      expect(config.mongoUri).toMatch(/^mongodb:\/\/mongo:27017\//);
      expect(config.masterKey.equals(Buffer.alloc(32, 7))).toBe(true);
      expect(() => interpolate(environment.RECOUP_MASTER_KEY ?? '', {})).toThrow(/RECOUP_MASTER_KEY/);
    }
  });

  it('has health checks wherever a service waits for another to be healthy, and on every long-running part of ours', () => {
    for (const [name, service] of services)
      for (const [target, { condition }] of Object.entries(service.depends_on ?? {})) {
        if (condition === 'service_healthy')
          expect(compose.services[target]?.healthcheck, `${name} waits for ${target}`).toBeDefined();
        if (condition === 'service_completed_successfully')
          expect(compose.services[target]?.restart).toBe('no');
      }
    for (const name of [...ours, 'temporal', 'mongo', 'postgresql'])
      expect(compose.services[name]?.healthcheck, name).toBeDefined();
  });

  it('runs Temporal on PostgreSQL with the web UI, and registers every search attribute the workflows use', () => {
    expect(compose.services.temporal?.environment).toMatchObject({
      DB: 'postgres12',
      POSTGRES_SEEDS: 'postgresql',
    });
    expect(compose.services['temporal-ui']?.image).toMatch(/^temporalio\/ui:/);
    const script = [compose.services['temporal-search-attributes']?.command].flat().join('\n');
    const registered: Record<string, string> = {};
    for (const [, name, type] of script.matchAll(/(\w+)=(Keyword|Datetime|Text|Int|Double|Bool)\b/g))
      if (name && type) registered[name] = type;
    expect(registered).toEqual(searchAttributes);
    expect(script).toContain('temporal operator search-attribute create');
  });
});

describe('.dockerignore', () => {
  it('keeps local state, build tools and secrets out of the image', () => {
    const ignored = readFileSync(join(root, '.dockerignore'), 'utf8').split('\n');
    for (const entry of ['.git', 'node_modules', '.tools', '.data', '.env']) expect(ignored).toContain(entry);
  });
});
