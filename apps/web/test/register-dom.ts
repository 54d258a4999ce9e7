// Installs a happy-dom window as the global DOM for component tests (node:test has none).
import { GlobalRegistrator } from '@happy-dom/global-registrator';

GlobalRegistrator.register({ url: 'http://127.0.0.1:3000/', width: 1440, height: 900 });
// React checks this flag to allow act() outside a test framework it knows.
(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
