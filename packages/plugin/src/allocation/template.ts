// `{{name}}` string templates for the Allocate response (and DRA attribute values), compiled once
// at config time so an Allocate call only joins precomputed parts.
import { PluginError } from '../errors.js';

export const TEMPLATE_VARIABLES = ['ids', 'physicalIds', 'count', 'resource', 'deviceNodes'] as const;
export type TemplateVariable = (typeof TEMPLATE_VARIABLES)[number];
export type TemplateValues = Record<TemplateVariable, string>;
export type CompiledTemplate = (values: TemplateValues) => string;

const PLACEHOLDER = /\{\{\s*([A-Za-z]+)\s*\}\}/g;

/** Names of unknown placeholders in `text` (empty when all are known). */
export function unknownPlaceholders(text: string, known: readonly string[] = TEMPLATE_VARIABLES): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1]!).filter((name) => !known.includes(name));
}

export function compileTemplate(text: string): CompiledTemplate;
export function compileTemplate<V extends string>(
  text: string,
  known: readonly V[],
): (values: Record<V, string>) => string;
export function compileTemplate(
  text: string,
  known: readonly string[] = TEMPLATE_VARIABLES,
): (values: Record<string, string>) => string {
  const unknown = unknownPlaceholders(text, known);
  if (unknown.length > 0) {
    throw new PluginError(
      'config-invalid',
      `unknown template variable(s) ${unknown.map((u) => `{{${u}}}`).join(', ')} in "${text}"; known: ${known.join(', ')}`,
    );
  }
  const parts = text.split(PLACEHOLDER);
  if (parts.length === 1) return () => text;
  // split() with a capture group alternates literal, variable, literal, …
  return (values) => {
    let out = parts[0]!;
    for (let i = 1; i < parts.length; i += 2) out += values[parts[i]!]! + parts[i + 1]!;
    return out;
  };
}
