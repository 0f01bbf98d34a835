import { openApiDocument } from '../../src/app.js';

/** The generated OpenAPI document as the contract tests read it: its operations and schemas. */
export type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
};
export type Operation = {
  security?: Record<string, string[]>[];
  parameters?: { in: string; name: string; required?: boolean; schema?: JsonSchema }[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  responses: Record<string, unknown>;
};
export interface Op {
  method: string;
  path: string;
  name: string;
  operation: Operation;
}

export const doc = openApiDocument() as unknown as {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, JsonSchema> };
};
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
/** Every operation of the document. */
export const ops: Op[] = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([method]) => METHODS.includes(method))
    .map(([method, operation]) => ({ method: method.toUpperCase(), path, name: `${method.toUpperCase()} ${path}`, operation })),
);

/** A well-formed id that names nothing. */
export const UNKNOWN_ID = '0190a4f6-0000-7000-8000-00000000abcd';

/** The schema a `$ref` points at (followed up to ten times). */
export function resolveRef(schema: JsonSchema | undefined): JsonSchema | undefined {
  let s = schema;
  for (let depth = 0; s?.$ref && depth < 10; depth++) s = doc.components?.schemas?.[s.$ref.replace('#/components/schemas/', '')];
  return s;
}

/** The JSON body schema of an operation. */
export const jsonBody = (op: Op) => op.operation.requestBody?.content?.['application/json']?.schema;
