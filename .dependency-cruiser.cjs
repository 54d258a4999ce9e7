// Dependency rules checked by `npm run lint` (dependency-cruiser): no import cycles, and the
// one-way flow between workspaces (packages never depend on apps, not even in their tests).
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules must not import each other, directly or through others.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-package-to-app',
      severity: 'error',
      comment:
        "Packages are libraries: nothing under packages/ (src, tests, benches, scripts) may depend on an app. A package's tests that need a gateway run the plugboard-gateway binary through @plugboard/testbed (gatewayProcess).",
      from: { path: '^packages/' },
      to: { path: '^apps/' },
    },
    {
      name: 'no-app-to-app',
      severity: 'error',
      comment:
        'Apps share code through packages (the wire contract is @plugboard/api); only the demo composes other apps, and tests may start them.',
      from: {
        path: '^apps/([^/]+)/',
        pathNot: ['^apps/demo/', '\\.test\\.tsx?$', '/(e2e|bench|test)/'],
      },
      to: { path: '^apps/', pathNot: '^apps/$1/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist|\\.next|test-results|playwright-report)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    combinedDependencies: true,
    enhancedResolveOptions: {
      // Workspace packages resolve to their TypeScript source, as everything runs inside the repo.
      conditionNames: ['@plugboard/source', 'import', 'types', 'default'],
      exportsFields: ['exports'],
    },
  },
};
