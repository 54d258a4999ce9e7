// docs/CONFIG.md documents every key of the config schema (a new key without docs fails here).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { pluginConfigSchema } from './config.js';

/** Every object key reachable from a schema, through optionals, defaults, arrays and records. */
function keys(schema: z.ZodType, out = new Set<string>()): Set<string> {
  if (schema instanceof z.ZodObject) {
    for (const [key, child] of Object.entries<z.ZodType>(schema.shape)) {
      out.add(key);
      keys(child, out);
    }
  } else if (
    schema instanceof z.ZodOptional ||
    schema instanceof z.ZodDefault ||
    schema instanceof z.ZodNullable
  ) {
    keys(schema.unwrap() as z.ZodType, out);
  } else if (schema instanceof z.ZodArray) {
    keys(schema.element as z.ZodType, out);
  } else if (schema instanceof z.ZodRecord) {
    keys(schema.valueType as z.ZodType, out);
  } else if (schema instanceof z.ZodPipe) {
    keys(schema.in as z.ZodType, out);
  }
  return out;
}

describe('docs/CONFIG.md', () => {
  it('documents every config key', async () => {
    const doc = await readFile(new URL('../../../docs/CONFIG.md', import.meta.url), 'utf8');
    const all = [...keys(pluginConfigSchema)];
    assert.ok(all.length > 30, `walked ${all.length} keys`);
    const missing = all.filter((key) => !doc.includes(`\`${key}\``));
    assert.deepEqual(missing, []);
  });
});
