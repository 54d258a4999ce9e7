// The shapes of the OpenAPI documents this folder serves, kept loose on purpose: the schemas are
// upstream data passed through (and converted v2 → v3), not something the simulator interprets.

/** A JSON object whose members are not typed further (a schema, an operation, a parameter). */
export type JsonObject = { [key: string]: unknown };

/** Kubernetes' `api/openapi-spec/swagger.json` (Swagger 2.0), or the slice of it that is generated. */
export interface UpstreamSwagger {
  swagger: string;
  info: JsonObject;
  /** Path → path item (operations by HTTP method, plus path-level `parameters`). */
  paths: Record<string, JsonObject>;
  /** Shared parameters that operations point at with `#/parameters/…`. */
  parameters: Record<string, JsonObject>;
  definitions: Record<string, JsonObject>;
  securityDefinitions: Record<string, JsonObject>;
  security: JsonObject[];
}

/** Where a generated swagger came from. */
export interface SwaggerSource {
  /** The Kubernetes release of `api/openapi-spec/swagger.json` (`v1.35.0`). */
  kubernetesVersion: string;
  /** sha256 (hex) of the swagger.json bytes the generator read. */
  sha256: string;
  /** Where those bytes were read from. */
  origin: string;
}
