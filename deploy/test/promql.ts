// PromQL helpers for the chart tests: syntax errors through lezer-promql (the grammar Prometheus'
// own UI uses) and the `plugboard_*` metric names an expression or a document mentions.
import { parser } from '@prometheus-io/lezer-promql';

/** PromQL syntax errors in an expression, as positions with a text snippet; empty when it parses. */
export function promqlErrors(expr: string): string[] {
  const errors: string[] = [];
  parser.parse(expr).iterate({
    enter: (node) => {
      if (node.type.isError) errors.push(`at ${node.from}: "${expr.slice(node.from, node.from + 20)}"`);
    },
  });
  return errors;
}

/** Every `plugboard_*` metric name in a text (PromQL expressions, docs). */
export function metricNames(text: string): Set<string> {
  return new Set(text.match(/\bplugboard_[a-z_]+[a-z]\b/g) ?? []);
}
