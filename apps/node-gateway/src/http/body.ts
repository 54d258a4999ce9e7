// Request bodies: size-limited reads, content-type checks, JSON/YAML parsing and zod validation.
// Every failure is a GatewayError that maps to 400/413/415/422 problem+json.
import type { IncomingMessage } from 'node:http';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { GatewayError } from '../errors.js';

export type BodyFormat = 'json' | 'yaml';

const YAML_TYPES = new Set(['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml']);

export function bodyFormat(req: IncomingMessage, allowed: readonly BodyFormat[]): BodyFormat {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if ((type === 'application/json' || type.endsWith('+json')) && allowed.includes('json')) return 'json';
  if (YAML_TYPES.has(type) && allowed.includes('yaml')) return 'yaml';
  const accepted = allowed.map((f) => (f === 'json' ? 'application/json' : 'application/yaml')).join(' or ');
  throw new GatewayError('unsupported-media-type', `Content-Type must be ${accepted}, got ${type || 'none'}`);
}

export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    req.resume();
    throw new GatewayError(
      'payload-too-large',
      `request body of ${declared} bytes exceeds the limit of ${maxBytes} bytes`,
    );
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      req.resume();
      throw new GatewayError('payload-too-large', `request body exceeds the limit of ${maxBytes} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export class ValidationError extends GatewayError {
  readonly errors: { path: string; message: string }[];
  constructor(message: string, errors: { path: string; message: string }[]) {
    super('invalid-body', message);
    this.errors = errors;
  }
}

export function validate<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const errors = result.error.issues.map((i) => ({
    path: i.path.length ? i.path.map(String).join('.') : '(root)',
    message:
      i.code === 'unrecognized_keys' ? `unknown key(s) ${i.keys.map((k) => `"${k}"`).join(', ')}` : i.message,
  }));
  throw new ValidationError(
    `invalid request body: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`,
    errors,
  );
}

/** Reads, parses and validates a body in one step. */
export async function parseBody<S extends z.ZodType>(
  req: IncomingMessage,
  schema: S,
  options: { maxBytes: number; formats: readonly BodyFormat[] },
): Promise<z.output<S>> {
  const format = bodyFormat(req, options.formats);
  const raw = (await readBody(req, options.maxBytes)).toString('utf8');
  let value: unknown;
  try {
    value = format === 'json' ? JSON.parse(raw) : parseYaml(raw, { maxAliasCount: 100 });
  } catch (err) {
    throw new GatewayError(
      'bad-request',
      `request body is not valid ${format.toUpperCase()}: ${(err as Error).message.split('\n')[0]}`,
    );
  }
  return validate(schema, value);
}
