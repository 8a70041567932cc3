import { z } from 'zod';
import { declaredResponses, type Route } from './route.js';

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  return z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' });
}

function parameters(schema: z.ZodType | undefined, where: 'query' | 'path') {
  if (!schema) return [];
  const js = jsonSchema(schema, 'input') as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(js.properties ?? {}).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || (js.required ?? []).includes(name),
    schema: s,
  }));
}

/** The OpenAPI 3.1 document, generated from the same zod schemas that validate requests. */
export function buildOpenApi(routes: Route[], serverUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { def } of routes) {
    const path = def.path.replace(/:(\w+)/g, '{$1}');
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(declaredResponses(def))) {
      responses[status] = {
        description: r.description,
        ...(r.schema ? { content: { 'application/json': { schema: jsonSchema(r.schema, 'output') } } } : {}),
      };
    }
    (paths[path] ??= {})[def.method] = {
      tags: [def.tag],
      summary: def.summary,
      ...(def.description ? { description: def.description } : {}),
      ...(def.auth === 'none' ? { security: [] } : {}),
      parameters: [...parameters(def.params, 'path'), ...parameters(def.query, 'query')],
      ...(def.body
        ? {
            requestBody: {
              // No body reads as {}: required only when {} is not a valid body.
              required: !def.body.safeParse({}).success,
              content: { 'application/json': { schema: jsonSchema(def.body, 'input') } },
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
    components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-KEY' } } },
    security: [{ apiKey: [] }],
    paths,
  };
}
