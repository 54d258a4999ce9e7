// `{{name}}` string templates for the Allocate response, compiled once at config time so an
// Allocate call only joins precomputed parts.
import { PluginError } from '../errors.js';

export const TEMPLATE_VARIABLES = ['ids', 'physicalIds', 'count', 'resource', 'deviceNodes'] as const;
export type TemplateVariable = (typeof TEMPLATE_VARIABLES)[number];
export type TemplateValues = Record<TemplateVariable, string>;
export type CompiledTemplate = (values: TemplateValues) => string;

const PLACEHOLDER = /\{\{\s*([A-Za-z]+)\s*\}\}/g;

/** Names of unknown placeholders in `text` (empty when all are known). */
export function unknownPlaceholders(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)]
    .map((m) => m[1]!)
    .filter((name) => !(TEMPLATE_VARIABLES as readonly string[]).includes(name));
}

export function compileTemplate(text: string): CompiledTemplate {
  const unknown = unknownPlaceholders(text);
  if (unknown.length > 0) {
    throw new PluginError(
      'config-invalid',
      `unknown template variable(s) ${unknown.map((u) => `{{${u}}}`).join(', ')} in "${text}"; known: ${TEMPLATE_VARIABLES.join(', ')}`,
    );
  }
  const parts = text.split(PLACEHOLDER);
  if (parts.length === 1) return () => text;
  // split() with a capture group alternates literal, variable, literal, …
  return (values) => {
    let out = parts[0]!;
    for (let i = 1; i < parts.length; i += 2) out += values[parts[i] as TemplateVariable] + parts[i + 1]!;
    return out;
  };
}
