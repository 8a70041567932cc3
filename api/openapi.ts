import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { declaredResponses, type Route } from './route.js';

type Io = 'input' | 'output';
type Json = Record<string, unknown>;

const pointerSegment = (s: string) => s.replaceAll('~', '~0').replaceAll('/', '~1');

/** Replaces each `$ref` found in the map; a local one it lacks could not resolve in the document. */
function repoint(node: unknown, refs: Map<string, string>): unknown {
  if (Array.isArray(node)) return node.map((n) => repoint(n, refs));
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => {
      if (key !== '$ref' || typeof value !== 'string') return [key, repoint(value, refs)];
      const to = refs.get(value);
      if (to === undefined && value.startsWith('#'))
        throw new Error(
          `A schema refers to ${value}, which the document cannot resolve: name it with .meta({ id })`,
        );
      return [key, to ?? value];
    }),
  );
}

/**
 * Writes the document's JSON Schemas. OpenAPI resolves `#/…` against the document's root, never against
 * the schema it sits in, so a schema named with `.meta({ id })` is given once, under `components.schemas`
 * (as `<id>Input` where it describes input: zod renders input and output apart), and referred to there.
 */
function schemaWriter() {
  const components: Record<string, Json> = {};
  const write = (schema: z.ZodType, io: Io): Json => {
    const { $defs, ...root } = z.toJSONSchema(schema, {
      target: 'draft-2020-12',
      io,
      unrepresentable: 'any',
    }) as Json & { $defs?: Record<string, Json> };
    const named = Object.keys($defs ?? {}).map((id) => [id, io === 'input' ? `${id}Input` : id] as const);
    const refs = new Map(
      named.map(([id, name]) => [
        `#/$defs/${pointerSegment(id)}`,
        `#/components/schemas/${pointerSegment(name)}`,
      ]),
    );
    for (const [id, name] of named) {
      const def = repoint($defs?.[id], refs) as Json;
      const given = components[name];
      if (given !== undefined && !isDeepStrictEqual(given, def))
        throw new Error(`Two different schemas are named ${id}`);
      components[name] = def;
    }
    return repoint(root, refs) as Json;
  };
  return { write, components };
}

type Write = ReturnType<typeof schemaWriter>['write'];

function parameters(write: Write, schema: z.ZodType | undefined, where: 'query' | 'path') {
  if (!schema) return [];
  const js = write(schema, 'input') as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(js.properties ?? {}).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || (js.required ?? []).includes(name),
    schema: s,
  }));
}

/** The OpenAPI 3.1 document, generated from the same zod schemas that validate requests. */
export function buildOpenApi(routes: Route[], serverUrl: string): Record<string, unknown> {
  const { write, components } = schemaWriter();
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { def } of routes) {
    const path = def.path.replace(/:(\w+)/g, '{$1}');
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(declaredResponses(def))) {
      responses[status] = {
        description: r.description,
        ...(r.schema ? { content: { 'application/json': { schema: write(r.schema, 'output') } } } : {}),
      };
    }
    (paths[path] ??= {})[def.method] = {
      tags: [def.tag],
      summary: def.summary,
      ...(def.description ? { description: def.description } : {}),
      ...(def.auth === 'none' ? { security: [] } : {}),
      parameters: [...parameters(write, def.params, 'path'), ...parameters(write, def.query, 'query')],
      ...(def.body
        ? {
            requestBody: {
              // No body reads as {}: required only when {} is not a valid body.
              required: !def.body.safeParse({}).success,
              content: { 'application/json': { schema: write(def.body, 'input') } },
            },
          }
        : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Recoup', version: '1.0.0', description: 'Recovers failed subscription payments.' },
    servers: [{ url: serverUrl }],
    components: {
      schemas: components,
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-KEY' } },
    },
    security: [{ apiKey: [] }],
    paths,
  };
}
