// CEL device selectors: k8s.io/dynamic-resource-allocation/cel/compile.go (+ cache.go), 1.37, on
// @marcbachmann/cel-js.
//
// The environment is the one the scheduler compiles with (environment.StoredExpressions, which
// ignores feature gates): the `device` variable of type kubernetes.DRADevice with
//   device.driver (string), device.allowMultipleAllocations (bool),
//   device.attributes["<domain>"].<id> (int, bool, string, kubernetes.Semver, or a list of them),
//   device.capacity["<domain>"].<id> (kubernetes.Quantity),
// an unknown domain reading as an empty map; cel.bind (ext.Bindings), optional types, the quantity
// and semver libraries, `includes`, and the base environment's string/list/set/regex extensions
// (library/extensions.ts). A selector must evaluate to bool (or dyn); anything else at runtime is an
// error, and so is a lookup of a missing attribute ("no such key: …", with the hint
// EnhanceRuntimeError adds).
//
// Where this differs from cel-go, knowingly:
// - Compile errors keep cel-go's frame ("compilation failed: ERROR: <input>:1:8: … | expr | ...^")
//   but the message after the position is the JS library's wording.
// - No cost estimation or runtime cost limit (CELSelectorExpressionMaxCost): the library has no cost
//   model. The 10 Ki length limit is enforced.
// - `has(e.f)` where `e` is not a plain select chain (e.g. `has(device.attributes["d"].model)`) is
//   rewritten to `cel.bind(v, e, has(v.f))` before compiling because the library's has() only
//   accepts `a.b.c.f`; the meaning is the same.
// - `"domain" in device.attributes` is true for every domain (the lookup default makes every domain
//   present); upstream only for domains the device has. Per-domain maps are exact.
// - Missing from the base environment: strings' format(), ext.Lists' sortBy, two-variable
//   comprehensions, and the URL/IP/CIDR/format/authz libraries.

import { Environment, EvaluationError, type ASTNode } from '@marcbachmann/cel-js';
import type { DeviceAttribute, DeviceCapacity, QualifiedName } from '../../types.js';
import { registerExtensions } from './library/extensions.js';
import { Quantity } from '@plugboard/apimachinery';
import { QUANTITY_TYPE, registerQuantityLibrary } from './library/quantity.js';
import { registerSemverLibrary, Semver, SEMVER_TYPE } from './library/semver.js';

/** resourceapi.CELSelectorExpressionMaxLength. */
export const CEL_SELECTOR_EXPRESSION_MAX_LENGTH = 10 * 1024;
/** resourceapi.ResourceSliceMaxAttributeValuesPerDevice: the longest list `includes` accepts. */
export const MAX_ATTRIBUTE_VALUES_PER_DEVICE = 48;

/** apiservercel.Error: the type decides how API validation reports it. */
export interface CelCompileError {
  type: 'Invalid' | 'Internal';
  detail: string;
}

/** A compiled selector (CompilationResult without the cost fields). */
export interface CompiledSelector {
  readonly expression: string;
  /** The expression's output type as the checker sees it (`bool` or `dyn`). */
  readonly outputType: string;
  /** DeviceMatches: whether the device is selected, or the runtime error's message. */
  deviceMatches(
    device: CelDevice,
  ): { matches: boolean; error?: undefined } | { matches: false; error: string };
}

export type CompileResult =
  { ok: true; selector: CompiledSelector } | { ok: false; expression: string; error: CelCompileError };

/** cel.Device: the input of a selector. */
export interface CelDevice {
  /** Also the domain of attributes and capacities named without one. */
  driver: string;
  allowMultipleAllocations?: boolean;
  attributes?: Record<QualifiedName, DeviceAttribute>;
  capacity?: Record<QualifiedName, DeviceCapacity>;
}

/** The `device` variable's type (kubernetes.DRADevice). */
class DraDevice {
  constructor(
    readonly driver: string,
    readonly allowMultipleAllocations: boolean,
    readonly attributes: Map<string, Map<string, unknown>>,
    readonly capacity: Map<string, Map<string, Quantity>>,
  ) {}
}

function fail(message: string): never {
  throw new EvaluationError(message);
}

const EMPTY_MAP: ReadonlyMap<string, unknown> = new Map();

/**
 * newStringInterfaceMapWithDefault: a Map whose lookups of unknown keys return an empty map. A Proxy
 * rather than a subclass because the library dispatches on `value.constructor === Map`.
 */
function withEmptyDefault<V>(map: Map<string, V>): Map<string, V> {
  return new Proxy(map, {
    get(target, prop) {
      if (prop === 'constructor') return Map;
      if (prop === 'get') return (key: string) => (target.has(key) ? target.get(key) : EMPTY_MAP);
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

function createEnvironment(): Environment {
  const env = new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: true });
  registerQuantityLibrary(env, fail);
  registerSemverLibrary(env, fail);
  registerExtensions(env, fail);
  env.registerType('kubernetes.DRADevice', {
    ctor: DraDevice,
    fields: {
      driver: 'string',
      allowMultipleAllocations: 'bool',
      attributes: 'map<string, map<string, dyn>>',
      capacity: `map<string, map<string, ${QUANTITY_TYPE}>>`,
    },
  });
  env.registerVariable('device', 'kubernetes.DRADevice');
  return env;
}

let environment: Environment | undefined;
function getEnvironment(): Environment {
  environment ??= createEnvironment();
  return environment;
}

/** cel-go's issue format: `ERROR: <input>:line:col: message` plus the source line and a caret. */
function formatIssue(expression: string, message: string, pos: number | undefined): string {
  const offset = Math.max(0, Math.min(pos ?? 0, expression.length));
  const before = expression.slice(0, offset);
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const column = offset - lineStart;
  const lineEnd = expression.indexOf('\n', offset);
  const sourceLine = expression.slice(lineStart, lineEnd < 0 ? undefined : lineEnd);
  return `ERROR: <input>:${line}:${column + 1}: ${message}\n | ${sourceLine}\n | ${'.'.repeat(column)}^`;
}

function issueOf(err: unknown): { message: string; pos: number | undefined } {
  if (err instanceof Error) {
    const e = err as Error & { summary?: string; node?: { pos?: number }; range?: { start: number } };
    return { message: e.summary ?? e.message, pos: e.node?.pos ?? e.range?.start };
  }
  return { message: String(err), pos: undefined };
}

/** Rewrites has(e.f) with a non-select operand e into cel.bind(v, e, has(v.f)) (see the header). */
function rewriteHas(env: Environment, expression: string): string {
  let current = expression;
  for (let round = 0; round < 32; round++) {
    const offending = findComplexHas(env.parse(current).ast);
    if (!offending) return current;
    const { call, operand, field } = offending;
    const variable = `__has${round}`;
    const replacement = `cel.bind(${variable}, ${current.slice(operand.start, operand.end)}, has(${variable}.${field}))`;
    current = current.slice(0, call.start) + replacement + current.slice(call.end);
  }
  return current;
}

function findComplexHas(node: ASTNode): { call: ASTNode; operand: ASTNode; field: string } | undefined {
  if (node.op === 'call' && node.args[0] === 'has' && node.args[1].length === 1) {
    const arg = node.args[1][0];
    if (arg?.op === '.') {
      let inner: ASTNode = arg.args[0];
      while (inner.op === '.' || inner.op === '.?') inner = inner.args[0];
      if (inner.op !== 'id') return { call: node, operand: arg.args[0], field: arg.args[1] };
    }
  }
  for (const child of childrenOf(node)) {
    const found = findComplexHas(child);
    if (found) return found;
  }
  return undefined;
}

function childrenOf(node: ASTNode): ASTNode[] {
  const isNode = (v: unknown): v is ASTNode => typeof v === 'object' && v !== null && 'op' in v;
  const out: ASTNode[] = [];
  const visit = (v: unknown): void => {
    if (isNode(v)) out.push(v);
    else if (Array.isArray(v)) v.forEach(visit);
  };
  if (node.op !== 'value' && node.op !== 'id') visit(node.args);
  return out;
}

/** cel-go's type names: list(int), map(string, dyn). */
function celTypeName(type: string): string {
  return type.replace(/</g, '(').replace(/>/g, ')');
}

/**
 * CompileCELExpression with the StoredExpressions environment: parse, type-check, and insist on a
 * bool (or dyn) result. Never throws.
 */
export function compileSelector(expression: string): CompileResult {
  const invalid = (detail: string): CompileResult => ({
    ok: false,
    expression,
    error: { type: 'Invalid', detail },
  });
  const env = getEnvironment();
  let source: string;
  try {
    source = rewriteHas(env, expression);
  } catch (err) {
    const { message, pos } = issueOf(err);
    return invalid(`compilation failed: ${formatIssue(expression, message, pos)}`);
  }
  const checked = env.check(source);
  if (!checked.valid) {
    const { message, pos } = issueOf(checked.error);
    return invalid(`compilation failed: ${formatIssue(source, message, pos)}`);
  }
  const outputType = checked.type ?? 'dyn';
  if (outputType !== 'bool' && outputType !== 'dyn') {
    return invalid(`must evaluate to bool or the unknown type, not ${celTypeName(outputType)}`);
  }
  let program: ReturnType<Environment['parse']>;
  try {
    program = env.parse(source);
  } catch (err) {
    return {
      ok: false,
      expression,
      error: { type: 'Internal', detail: `program instantiation failed: ${issueOf(err).message}` },
    };
  }
  return {
    ok: true,
    selector: {
      expression,
      outputType,
      deviceMatches(device) {
        let variables: { device: DraDevice };
        try {
          variables = { device: toCelDevice(device) };
        } catch (err) {
          return { matches: false, error: err instanceof Error ? err.message : String(err) };
        }
        let result: unknown;
        try {
          result = program(variables);
        } catch (err) {
          return { matches: false, error: runtimeMessage(err) };
        }
        if (typeof result !== 'boolean') {
          const type = celRuntimeTypeName(result);
          return {
            matches: false,
            error: `CEL result of type ${type} could not be converted to bool: type conversion error from '${type}' to 'bool'`,
          };
        }
        return { matches: result };
      },
    },
  };
}

/** The library's runtime messages in cel-go's words where cel-go's are relied upon ("no such key"). */
function runtimeMessage(err: unknown): string {
  const { message } = issueOf(err);
  return message.replace(/^No such key:/, 'no such key:');
}

function celRuntimeTypeName(value: unknown): string {
  if (typeof value === 'bigint') return 'int';
  if (typeof value === 'number') return 'double';
  if (typeof value === 'string') return 'string';
  if (value === null) return 'null_type';
  if (Array.isArray(value)) return 'list';
  if (value instanceof Map) return 'map';
  if (value instanceof Quantity) return QUANTITY_TYPE;
  if (value instanceof Semver) return SEMVER_TYPE;
  return typeof value;
}

/** parseQualifiedName: `<domain>/<id>`, or the driver's domain for a bare id. */
export function parseQualifiedName(name: QualifiedName, defaultDomain: string): [domain: string, id: string] {
  const sep = name.indexOf('/');
  return sep === -1 ? [defaultDomain, name] : [name.slice(0, sep), name.slice(sep + 1)];
}

const toInt = (v: number | string): bigint => BigInt(v);

/** getAttributeValue: the one value an attribute holds, typed as CEL sees it. */
function attributeValue(attr: DeviceAttribute): unknown {
  if (attr.ints !== undefined) return attr.ints.map(toInt);
  if (attr.bools !== undefined) return attr.bools;
  if (attr.strings !== undefined) return attr.strings;
  if (attr.versions !== undefined) {
    return attr.versions.map((v) => {
      try {
        return Semver.parse(v);
      } catch (err) {
        throw new Error(`parse semantic version: ${(err as Error).message}`, { cause: err });
      }
    });
  }
  if (attr.int !== undefined) return toInt(attr.int);
  if (attr.bool !== undefined) return attr.bool;
  if (attr.string !== undefined) return attr.string;
  if (attr.version !== undefined) {
    try {
      return Semver.parse(attr.version);
    } catch (err) {
      throw new Error(`parse semantic version: ${(err as Error).message}`, { cause: err });
    }
  }
  throw new Error('unsupported attribute value');
}

function toCelDevice(input: CelDevice): DraDevice {
  const attributes = new Map<string, Map<string, unknown>>();
  for (const [name, attr] of Object.entries(input.attributes ?? {})) {
    let value: unknown;
    try {
      value = attributeValue(attr);
    } catch (err) {
      throw new Error(`attribute ${name}: ${(err as Error).message}`, { cause: err });
    }
    const [domain, id] = parseQualifiedName(name, input.driver);
    let inner = attributes.get(domain);
    if (!inner) attributes.set(domain, (inner = new Map<string, unknown>()));
    inner.set(id, value);
  }
  const capacity = new Map<string, Map<string, Quantity>>();
  for (const [name, cap] of Object.entries(input.capacity ?? {})) {
    let value: Quantity;
    try {
      value = Quantity.fromJSON(cap.value);
    } catch (err) {
      throw new Error(`capacity ${name}: ${(err as Error).message}`, { cause: err });
    }
    const [domain, id] = parseQualifiedName(name, input.driver);
    let inner = capacity.get(domain);
    if (!inner) capacity.set(domain, (inner = new Map<string, Quantity>()));
    inner.set(id, value);
  }
  return new DraDevice(
    input.driver,
    input.allowMultipleAllocations ?? false,
    withEmptyDefault(attributes),
    withEmptyDefault(capacity),
  );
}

/**
 * cel.Cache: compiled selectors by expression, least recently used dropped first. Only successful
 * compilations are kept, as upstream.
 */
export class SelectorCache {
  private readonly entries = new Map<string, CompiledSelector>();

  constructor(private readonly maxEntries = 64) {}

  getOrCompile(expression: string): CompileResult {
    const cached = this.entries.get(expression);
    if (cached) {
      this.entries.delete(expression);
      this.entries.set(expression, cached);
      return { ok: true, selector: cached };
    }
    const result = compileSelector(expression);
    if (result.ok) {
      this.entries.set(expression, result.selector);
      if (this.entries.size > this.maxEntries) {
        const oldest = this.entries.keys().next();
        if (!oldest.done) this.entries.delete(oldest.value);
      }
    }
    return result;
  }
}

/**
 * One-shot evaluation of a selector against a device (compile + DeviceMatches); compile errors come
 * back with the same wording as runtime errors' callers see them.
 */
export function evaluateSelector(
  expression: string,
  device: CelDevice,
): { ok: true; matches: boolean } | { ok: false; error: string } {
  const compiled = compileSelector(expression);
  if (!compiled.ok) return { ok: false, error: compiled.error.detail };
  const result = compiled.selector.deviceMatches(device);
  return result.error === undefined
    ? { ok: true, matches: result.matches }
    : { ok: false, error: result.error };
}

/** Go's %q for the value in a field.Invalid error. */
function goQuote(s: string): string {
  return JSON.stringify(s);
}

/**
 * validateCELSelector (pkg/apis/resource/validation): the field errors the API server returns for a
 * selector at `fieldPath` (e.g. `spec.devices.requests[0].exactly.selectors[0].cel`), empty when valid.
 */
export function validateSelector(expression: string, fieldPath: string): string[] {
  const path = `${fieldPath}.expression`;
  if (Buffer.byteLength(expression, 'utf8') > CEL_SELECTOR_EXPRESSION_MAX_LENGTH) {
    return [`${path}: Too long: may not be more than ${CEL_SELECTOR_EXPRESSION_MAX_LENGTH} bytes`];
  }
  const result = compileSelector(expression);
  if (result.ok) return [];
  if (result.error.type === 'Internal') return [`${path}: Internal error: ${result.error.detail}`];
  return [`${path}: Invalid value: ${goQuote(expression)}: ${result.error.detail}`];
}
