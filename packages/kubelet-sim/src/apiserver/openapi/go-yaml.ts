// The YAML text gnostic keeps in an `openapi_v2.Any` (vendor extensions, `default`, `enum`,
// `example`): gnostic's compiler.Marshal clears the style of the parsed JSON node and hands it to
// go.yaml.in/yaml/v3's Marshal, so kube-apiserver's protobuf OpenAPI carries block-style YAML such as
// `- group: ""\n  kind: Pod\n  version: v1\n`. This is that encoder (emitterc.go, yaml.v3's port of
// libyaml) for JSON values: indentation 4 with a sequence's items indented 2 past their dash, no
// line wrapping, a string quoted only where plain style is not allowed or would read back as
// another type (resolve.go), literal block style for strings with line breaks, `? ` for keys that
// cannot be simple. go-yaml.test.ts holds its output for tricky values as yaml.v3 itself wrote it.

type Tag = 'str' | 'int' | 'float' | 'bool' | 'null';
type Parent = 'root' | 'sequence' | 'mapping';
type Style = 'plain' | 'single' | 'double' | 'literal';

const BEST_INDENT = 4;
/** emitterc.go check_simple_key: a longer key (in bytes) is written as a `? ` complex key. */
const MAX_SIMPLE_KEY = 128;

/** `value` as gnostic's compiler.Marshal writes it (always ends with a line break). */
export function marshalYaml(value: unknown): string {
  const emitter = new Emitter();
  emitter.node(value, -1, 'root');
  emitter.writeIndent(-1); // yaml_emitter_emit_document_end
  return emitter.out;
}

function isBreak(c: string): boolean {
  return c === '\n' || c === '\r' || c === '\u0085' || c === '\u2028' || c === '\u2029';
}

/** emitterc.go is_printable, by code point (yaml.v3 emits with unicode allowed). */
function isPrintable(c: string): boolean {
  const cp = c.codePointAt(0)!;
  return (
    cp === 0x0a ||
    (cp >= 0x20 && cp <= 0x7e) ||
    (cp >= 0xa0 && cp <= 0xd7ff) ||
    (cp >= 0xe000 && cp <= 0xfffd && cp !== 0xfeff)
  );
}

const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const GO_INT = /^[-+]?(0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|0[0-7]*|[1-9][0-9]*)$/;
const TIMESTAMP =
  /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})?)?$/;
/** resolve.go's resolveMap, less `<<`, which is never looked up (its first character has no hint). */
const RESOLVE_MAP = new Set(
  'true True TRUE false False FALSE ~ null Null NULL .nan .NaN .NAN .inf .Inf .INF +.inf +.Inf +.INF -.inf -.Inf -.INF'.split(
    ' ',
  ),
);

/** Whether resolve.go reads a plain scalar `s` as something other than a string. */
function resolvesToOtherThanString(s: string): boolean {
  if (s === '' || RESOLVE_MAP.has(s)) return true;
  const c = s[0]!;
  if (c === '.') return /^\.[0-9]+([eE][-+]?[0-9]+)?$/.test(s);
  if (c === '+' || c === '-' || (c >= '0' && c <= '9')) {
    if (TIMESTAMP.test(s)) return true;
    const plain = s.replaceAll('_', '');
    return GO_INT.test(plain) || YAML_STYLE_FLOAT.test(plain);
  }
  return false;
}

interface ScalarAnalysis {
  multiline: boolean;
  blockPlainAllowed: boolean;
  singleQuotedAllowed: boolean;
  blockAllowed: boolean;
}

/** emitterc.go yaml_emitter_analyze_scalar (block context: flow-plain rules are not needed). */
function analyzeScalar(value: string): ScalarAnalysis {
  if (value === '')
    return { multiline: false, blockPlainAllowed: true, singleQuotedAllowed: true, blockAllowed: false };
  const chars = [...value];
  let blockIndicators = value.startsWith('---') || value.startsWith('...');
  let lineBreaks = false;
  let special = false;
  let tabs = false;
  let leadingSpace = false;
  let leadingBreak = false;
  let trailingSpace = false;
  let trailingBreak = false;
  let breakSpace = false;
  let spaceBreak = false;
  let precededByWhitespace = true;
  let previousSpace = false;
  let previousBreak = false;
  chars.forEach((c, i) => {
    const next = chars[i + 1];
    const followedByWhitespace = next === undefined || next === ' ' || next === '\t';
    if (i === 0) {
      if ('#,[]{}&*!|>\'"%@`'.includes(c)) blockIndicators = true;
      else if ((c === '?' || c === ':' || c === '-') && followedByWhitespace) blockIndicators = true;
    } else if ((c === ':' && followedByWhitespace) || (c === '#' && precededByWhitespace)) {
      blockIndicators = true;
    }
    if (c === '\t') tabs = true;
    else if (!isPrintable(c)) special = true;
    const last = i === chars.length - 1;
    if (c === ' ') {
      if (i === 0) leadingSpace = true;
      if (last) trailingSpace = true;
      if (previousBreak) breakSpace = true;
      previousSpace = true;
      previousBreak = false;
    } else if (isBreak(c)) {
      lineBreaks = true;
      if (i === 0) leadingBreak = true;
      if (last) trailingBreak = true;
      if (previousSpace) spaceBreak = true;
      previousSpace = false;
      previousBreak = true;
    } else {
      previousSpace = false;
      previousBreak = false;
    }
    precededByWhitespace = c === ' ' || c === '\t' || isBreak(c) || c === '\0';
  });
  let blockPlainAllowed = !(leadingSpace || leadingBreak || trailingSpace || trailingBreak);
  let singleQuotedAllowed = true;
  let blockAllowed = !trailingSpace;
  if (breakSpace || spaceBreak || tabs || special) blockPlainAllowed = singleQuotedAllowed = false;
  if (spaceBreak || special) blockAllowed = false;
  if (lineBreaks || blockIndicators) blockPlainAllowed = false;
  return { multiline: lineBreaks, blockPlainAllowed, singleQuotedAllowed, blockAllowed };
}

function hex(cp: number, digits: number): string {
  return cp.toString(16).toUpperCase().padStart(digits, '0');
}

const ESCAPES: Record<number, string> = {
  0x00: '0',
  0x07: 'a',
  0x08: 'b',
  0x09: 't',
  0x0a: 'n',
  0x0b: 'v',
  0x0c: 'f',
  0x0d: 'r',
  0x1b: 'e',
  0x22: '"',
  0x5c: '\\',
  0x85: 'N',
  0xa0: '_',
  0x2028: 'L',
  0x2029: 'P',
};

class Emitter {
  out = '';
  private column = 0;
  private whitespace = true;
  private indention = true;

  private put(text: string): void {
    this.out += text;
    this.column += [...text].length;
  }

  private putBreak(): void {
    this.out += '\n';
    this.column = 0;
    this.indention = true;
  }

  /** write_break: a `\n` is a line break; other break characters are copied as they are. */
  private writeBreak(c: string): void {
    if (c === '\n') return this.putBreak();
    this.out += c;
    this.column = 0;
    this.indention = true;
  }

  writeIndent(indent: number): void {
    const target = Math.max(indent, 0);
    if (!this.indention || this.column > target || (this.column === target && !this.whitespace))
      this.putBreak();
    while (this.column < target) this.put(' ');
    this.whitespace = true;
  }

  private indicator(
    text: string,
    needWhitespace: boolean,
    isWhitespace: boolean,
    isIndention: boolean,
  ): void {
    if (needWhitespace && !this.whitespace) this.put(' ');
    this.put(text);
    this.whitespace = isWhitespace;
    this.indention = this.indention && isIndention;
  }

  /** yaml_emitter_increase_indent, given the state its container pushed. */
  private increaseIndent(indent: number, parent: Parent, flow: boolean): number {
    if (indent < 0) return flow ? BEST_INDENT : 0;
    if (parent === 'sequence') return indent + 2;
    return BEST_INDENT * Math.floor((indent + BEST_INDENT) / BEST_INDENT);
  }

  node(value: unknown, indent: number, parent: Parent): void {
    if (Array.isArray(value)) {
      if (value.length === 0) return this.emptyFlow('[', ']');
      const inner = this.increaseIndent(indent, parent, false);
      for (const item of value) {
        this.writeIndent(inner);
        this.indicator('-', true, false, true);
        this.node(item, inner, 'sequence');
      }
      return;
    }
    if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value);
      if (entries.length === 0) return this.emptyFlow('{', '}');
      const inner = this.increaseIndent(indent, parent, false);
      for (const [key, item] of entries) {
        this.writeIndent(inner);
        if (Buffer.byteLength(key) <= MAX_SIMPLE_KEY && !analyzeScalar(key).multiline) {
          this.scalar(key, 'str', inner, 'mapping', true);
          this.indicator(':', false, false, false);
        } else {
          // A complex key: `? key` on its own, then `: value`.
          this.indicator('?', true, false, true);
          this.scalar(key, 'str', inner, 'mapping', false);
          this.writeIndent(inner);
          this.indicator(':', true, false, true);
        }
        this.node(item, inner, 'mapping');
      }
      return;
    }
    if (typeof value === 'string') return this.scalar(value, 'str', indent, parent, false);
    if (typeof value === 'boolean') return this.scalar(String(value), 'bool', indent, parent, false);
    if (value === null) return this.scalar('null', 'null', indent, parent, false);
    if (typeof value === 'number' && Number.isFinite(value)) {
      const text = JSON.stringify(value);
      return this.scalar(text, /^-?[0-9]+$/.test(text) ? 'int' : 'float', indent, parent, false);
    }
    throw new Error(`YAML: a ${typeof value} is not a JSON value`);
  }

  private emptyFlow(open: string, close: string): void {
    this.indicator(open, true, true, false);
    this.indicator(close, false, false, false);
  }

  private scalar(value: string, tag: Tag, indent: number, parent: Parent, simpleKey: boolean): void {
    // encode.go: the style asked for; then emitterc.go select_scalar_style.
    let style: Style = 'plain';
    if (tag === 'str') {
      if (value.includes('\n')) style = 'literal';
      else if (resolvesToOtherThanString(value)) style = 'double';
    }
    const analysis = analyzeScalar(value);
    if (simpleKey && analysis.multiline) style = 'double';
    if (style === 'plain' && (!analysis.blockPlainAllowed || (value === '' && simpleKey))) style = 'single';
    if (style === 'single' && !analysis.singleQuotedAllowed) style = 'double';
    if (style === 'literal' && (!analysis.blockAllowed || simpleKey)) style = 'double';

    const scalarIndent = this.increaseIndent(indent, parent, true);
    switch (style) {
      case 'plain':
        if (value !== '' && !this.whitespace) this.put(' ');
        this.put(value);
        if (value !== '') this.whitespace = false;
        this.indention = false;
        return;
      case 'single':
        return this.singleQuoted(value, scalarIndent);
      case 'double':
        return this.doubleQuoted(value);
      case 'literal':
        return this.literal(value, scalarIndent);
    }
  }

  private singleQuoted(value: string, indent: number): void {
    this.indicator("'", true, false, false);
    let breaks = false;
    for (const c of value) {
      if (c === ' ') this.put(c);
      else if (isBreak(c)) {
        if (!breaks && c === '\n') this.putBreak();
        this.writeBreak(c);
        breaks = true;
      } else {
        if (breaks) this.writeIndent(indent);
        this.put(c === "'" ? "''" : c);
        this.indention = false;
        breaks = false;
      }
    }
    this.indicator("'", false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  private doubleQuoted(value: string): void {
    this.indicator('"', true, false, false);
    for (const c of value) {
      const cp = c.codePointAt(0)!;
      if (!isPrintable(c) || isBreak(c) || c === '"' || c === '\\') {
        const escape = ESCAPES[cp];
        if (escape !== undefined) this.put(`\\${escape}`);
        else if (cp <= 0xff) this.put(`\\x${hex(cp, 2)}`);
        else if (cp <= 0xffff) this.put(`\\u${hex(cp, 4)}`);
        else this.put(`\\U${hex(cp, 8)}`);
      } else this.put(c);
    }
    this.indicator('"', false, false, false);
  }

  private literal(value: string, indent: number): void {
    this.indicator('|', true, false, false);
    const chars = [...value];
    if (chars[0] === ' ' || isBreak(chars[0]!)) this.indicator(String(BEST_INDENT), false, false, false);
    // write_block_scalar_hints: strip a missing final break, keep more than one.
    const last = chars.length - 1;
    if (!isBreak(chars[last]!)) this.indicator('-', false, false, false);
    else if (last === 0 || isBreak(chars[last - 1]!)) this.indicator('+', false, false, false);
    this.whitespace = true;
    let breaks = true;
    for (const c of chars) {
      if (isBreak(c)) {
        this.writeBreak(c);
        breaks = true;
      } else {
        if (breaks) this.writeIndent(indent);
        this.put(c);
        this.indention = false;
        breaks = false;
      }
    }
  }
}
