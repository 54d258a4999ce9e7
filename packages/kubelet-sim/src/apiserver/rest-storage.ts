// Writes to the API slice, as kube-apiserver's generic registry store does them
// (k8s.io/apiserver/pkg/registry/generic/registry/store.go with the resource's strategy):
// create (name or generateName, uid, creationTimestamp, generation 1; a kind with a status
// subresource drops the status it was sent), update (optimistic concurrency on resourceVersion,
// an unchanged spec keeps the generation, the main resource keeps the stored status and the
// status subresource changes only the status), patch (JSON merge patch, JSON patch, and strategic
// merge patch — applied as a merge patch, which is what it means for these kinds, whose lists are
// all atomic), delete (answers the deleted object, as immediate deletion does, or a Success Status
// for a store that does not return it) and deletecollection. What differs between kinds comes from
// a RestStrategy: validation, defaulting and PrepareForCreate/PrepareForUpdate, whether an update
// may leave out the resourceVersion, what a delete answers. Validation errors are 422 `Invalid`
// with one cause per field, as apimachinery's field.ErrorList renders them.

import { randomUUID } from 'node:crypto';
import { applyPatchImmutable, PatchError, type JsonPatchOp } from '@plugboard/api';
import { kubeTime } from '../util/kube-time.js';
import { HttpError } from './http.js';
import type { KubeObject, ObjectFilter, ObjectStore } from './object-store.js';
import type { ResourceInfo } from './resources.js';

/** One field error (k8s.io/apimachinery/pkg/util/validation/field.Error). */
export interface FieldError {
  type:
    | 'FieldValueRequired'
    | 'FieldValueInvalid'
    | 'FieldValueNotSupported'
    | 'FieldValueDuplicate'
    | 'FieldValueForbidden'
    | 'FieldValueTooMany'
    | 'FieldValueTooLong';
  field: string;
  /** The rendered message after the field, e.g. `Required value` or `Invalid value: "x": must be …`. */
  detail: string;
}

/** Checks an object (and, on update, the stored one); returns every field error. */
export type Validator = (obj: KubeObject, old: KubeObject | undefined) => FieldError[];

/**
 * A kind's part in the generic registry store: its strategy (rest.RESTCreateStrategy and
 * RESTUpdateStrategy, with the defaulting of the request's decoding) and its store options.
 */
export interface RestStrategy {
  /** Validate and ValidateUpdate (the status subresource's too). */
  validate: Validator;
  /** Defaulting and PrepareForCreate beyond what every kind gets (name, uid, generation, no status). */
  prepareForCreate?: (obj: KubeObject) => void;
  /**
   * Defaulting and PrepareForUpdate of the main resource beyond what every kind gets (identity,
   * stored status); runs before the generation is compared, so changes it makes to the spec count.
   */
  prepareForUpdate?: (obj: KubeObject, old: KubeObject) => void;
  /** PrepareForUpdate of the status subresource, after the stored object took the sent status. */
  prepareForStatusUpdate?: (obj: KubeObject, old: KubeObject) => void;
  /** AllowUnconditionalUpdate; when false, an update without metadata.resourceVersion is refused (422). */
  allowUnconditionalUpdate?: boolean;
  /** Store.ReturnDeletedObject; when false, a delete answers a Success Status naming the object. */
  returnDeletedObject?: boolean;
}

/** kube-apiserver's generateName suffix alphabet (no vowels, no confusable characters). */
const SUFFIX = 'bcdfghjklmnpqrstvwxz2456789';

export function generateNameSuffix(): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += SUFFIX[Math.floor(Math.random() * SUFFIX.length)];
  return s;
}

/**
 * apierrors.NewInvalid for the kind; `kind` overrides it where the API server passes the resource
 * instead (the generic store's "must be specified for an update").
 */
export function invalid(info: ResourceInfo, name: string, errors: FieldError[], kind = info.kind): HttpError {
  const group = info.group ? `.${info.group}` : '';
  const rendered = errors.map((e) => `${e.field}: ${e.detail}`);
  const message = `${kind}${group} "${name}" is invalid: ${
    rendered.length === 1 ? rendered[0] : `[${rendered.join(', ')}]`
  }`;
  return new HttpError(422, 'Invalid', message, {
    name,
    ...(info.group ? { group: info.group } : {}),
    kind,
    causes: errors.map((e) => ({ reason: e.type, message: e.detail, field: e.field })),
  });
}

function qualified(info: ResourceInfo): string {
  return info.group ? `${info.resource}.${info.group}` : info.resource;
}

export function notFoundError(info: ResourceInfo, name: string): HttpError {
  return new HttpError(404, 'NotFound', `${qualified(info)} "${name}" not found`, {
    name,
    ...(info.group ? { group: info.group } : {}),
    kind: info.resource,
  });
}

function asObject(body: unknown, info: ResourceInfo): KubeObject {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new HttpError(400, 'BadRequest', 'the body of the request was in an unknown format');
  const obj = body as Record<string, unknown>;
  const apiVersion = info.group ? `${info.group}/${info.version}` : info.version;
  if (obj['kind'] !== undefined && obj['kind'] !== info.kind)
    throw new HttpError(
      400,
      'BadRequest',
      `the object provided is unrecognized (must be of type ${info.kind}): ${JSON.stringify(obj['kind'])}`,
    );
  if (obj['apiVersion'] !== undefined && obj['apiVersion'] !== apiVersion)
    throw new HttpError(
      400,
      'BadRequest',
      `the API version in the data (${JSON.stringify(obj['apiVersion'])}) does not match the expected API version (${apiVersion})`,
    );
  const metadata = obj['metadata'];
  if (
    metadata !== undefined &&
    (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))
  )
    throw new HttpError(400, 'BadRequest', 'metadata: must be an object');
  return {
    ...obj,
    apiVersion,
    kind: info.kind,
    metadata: { ...((metadata as Record<string, unknown> | undefined) ?? {}) },
  } as KubeObject;
}

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    target !== null && typeof target === 'object' && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** Drops strategic-merge-patch directives (`$patch`, `$retainKeys`, `$setElementOrder/…`, `$deleteFromPrimitiveList/…`). */
function stripDirectives(patch: unknown): unknown {
  if (Array.isArray(patch)) return patch.map(stripDirectives);
  if (patch === null || typeof patch !== 'object') return patch;
  return Object.fromEntries(
    Object.entries(patch as Record<string, unknown>)
      .filter(([k]) => !k.startsWith('$'))
      .map(([k, v]) => [k, stripDirectives(v)]),
  );
}

export const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
] as const;

/** 415 for a patch type the slice does not apply (server-side apply among them), before the body is read. */
export function unsupportedPatch(): HttpError {
  return new HttpError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${PATCH_TYPES.join(', ')}`,
  );
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

export class RestStorage {
  constructor(
    readonly info: ResourceInfo,
    readonly store: ObjectStore,
    private readonly strategy: RestStrategy,
  ) {}

  private get hasStatus(): boolean {
    return this.info.subresources.some((s) => s.name === 'status');
  }

  private checkNamespace(obj: KubeObject, namespace: string | undefined): void {
    const given = obj.metadata.namespace;
    if (this.info.namespaced) {
      if (given !== undefined && given !== '' && given !== namespace)
        throw new HttpError(
          400,
          'BadRequest',
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      obj.metadata.namespace = namespace!;
    } else {
      delete obj.metadata.namespace;
    }
  }

  private check(obj: KubeObject, old: KubeObject | undefined): void {
    const errors = this.strategy.validate(obj, old);
    if (errors.length > 0) throw invalid(this.info, obj.metadata.name, errors);
  }

  create(namespace: string | undefined, body: unknown): KubeObject {
    const obj = asObject(body, this.info);
    this.checkNamespace(obj, namespace);
    const meta = obj.metadata;
    let name = typeof meta.name === 'string' ? meta.name : '';
    if (!name && typeof meta['generateName'] === 'string' && meta['generateName'])
      name = `${meta['generateName']}${generateNameSuffix()}`;
    if (!name)
      throw invalid(this.info, '', [
        {
          type: 'FieldValueRequired',
          field: 'metadata.name',
          detail: 'Required value: name or generateName is required',
        },
      ]);
    if (this.store.get(obj.metadata.namespace, name))
      throw new HttpError(409, 'AlreadyExists', `${qualified(this.info)} "${name}" already exists`, {
        name,
        ...(this.info.group ? { group: this.info.group } : {}),
        kind: this.info.resource,
      });
    const created: KubeObject = {
      ...obj,
      metadata: {
        ...meta,
        name,
        uid: randomUUID(),
        creationTimestamp: kubeTime(),
        generation: 1,
      },
    };
    delete created.metadata.resourceVersion;
    if (this.hasStatus) delete created['status'];
    this.strategy.prepareForCreate?.(created);
    this.check(created, undefined);
    return this.store.upsert(created);
  }

  get(namespace: string | undefined, name: string): KubeObject {
    const obj = this.store.get(this.info.namespaced ? namespace : undefined, name);
    if (!obj) throw notFoundError(this.info, name);
    return obj;
  }

  /** PUT of the object (`status` false) or of its status subresource. */
  update(namespace: string | undefined, name: string, body: unknown, status = false): KubeObject {
    const obj = asObject(body, this.info);
    this.checkNamespace(obj, namespace);
    if (obj.metadata.name !== undefined && obj.metadata.name !== name)
      throw new HttpError(
        400,
        'BadRequest',
        `the name of the object (${String(obj.metadata.name)}) does not match the name on the URL (${name})`,
      );
    const old = this.get(namespace, name);
    return this.replace(old, obj, status);
  }

  private replace(old: KubeObject, obj: KubeObject, status: boolean): KubeObject {
    const rv = obj.metadata.resourceVersion;
    if ((rv === undefined || rv === '') && this.strategy.allowUnconditionalUpdate === false)
      throw invalid(
        this.info,
        old.metadata.name,
        [
          {
            type: 'FieldValueInvalid',
            field: 'metadata.resourceVersion',
            detail: 'Invalid value: 0: must be specified for an update',
          },
        ],
        this.info.resource,
      );
    if (rv !== undefined && rv !== '' && rv !== old.metadata.resourceVersion)
      throw new HttpError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${qualified(this.info)} "${old.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`,
        {
          name: old.metadata.name,
          ...(this.info.group ? { group: this.info.group } : {}),
          kind: this.info.resource,
        },
      );
    // Identity and server-set fields come from the stored object.
    const identity = {
      name: old.metadata.name,
      ...(old.metadata.namespace !== undefined ? { namespace: old.metadata.namespace } : {}),
      uid: old.metadata.uid,
      creationTimestamp: old.metadata.creationTimestamp,
    };
    let next: KubeObject;
    if (status) {
      next = { ...old, status: obj['status'] };
      this.strategy.prepareForStatusUpdate?.(next, old);
    } else {
      next = { ...obj, metadata: { ...obj.metadata, ...identity } };
      if (this.hasStatus) {
        if (old['status'] === undefined) delete next['status'];
        else next['status'] = old['status'];
      }
      this.strategy.prepareForUpdate?.(next, old);
      const generation = Number(old.metadata['generation'] ?? 1);
      next.metadata['generation'] = sameJson(next['spec'], old['spec']) ? generation : generation + 1;
    }
    delete next.metadata.resourceVersion;
    this.check(next, old);
    return this.store.upsert(next);
  }

  /** PATCH with the request's Content-Type. */
  patch(
    namespace: string | undefined,
    name: string,
    contentType: string,
    body: unknown,
    status = false,
  ): KubeObject {
    const old = this.get(namespace, name);
    let patched: unknown;
    switch (contentType) {
      case 'application/merge-patch+json':
        patched = mergePatch(old, body);
        break;
      case 'application/strategic-merge-patch+json':
        patched = mergePatch(old, stripDirectives(body));
        break;
      case 'application/json-patch+json':
        if (!Array.isArray(body))
          throw new HttpError(400, 'BadRequest', 'json patch: the body must be an array of operations');
        try {
          patched = applyPatchImmutable(old, body as JsonPatchOp[]);
        } catch (err) {
          if (err instanceof PatchError)
            throw new HttpError(
              422,
              'Invalid',
              `the server rejected our request due to an error in our request: ${err.message}`,
            );
          throw err;
        }
        break;
      default:
        throw unsupportedPatch();
    }
    // A patch applies to the stored object and carries its resourceVersion (unless it names another,
    // which then conflicts): a patch is never an unconditional update.
    return this.replace(old, asObject(patched, this.info), status);
  }

  /** The deleted object, or (a store that does not return it) the Success Status finalizeDelete answers. */
  delete(namespace: string | undefined, name: string): unknown {
    this.get(namespace, name);
    const deleted = this.store.delete(this.info.namespaced ? namespace : undefined, name)!;
    if (this.strategy.returnDeletedObject !== false) return deleted;
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: {
        name: deleted.metadata.name,
        ...(this.info.group ? { group: this.info.group } : {}),
        kind: this.info.resource,
        uid: deleted.metadata.uid,
      },
    };
  }

  deleteCollection(filter: ObjectFilter): KubeObject[] {
    return this.store
      .list(filter)
      .items.map((o) => this.store.delete(o.metadata.namespace, o.metadata.name)!)
      .filter(Boolean);
  }
}
