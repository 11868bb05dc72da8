/** `app.request` and `app.testClient`: answering in process, through the runtime an entry registers. */
import { type AppInstance, type App } from './app.js';

/** What a test client changes: modules' settings by module name, over what the files and the environment say. */
export interface TestClientOptions {
  settings?: Record<string, Record<string, unknown>>;
}

/** Answers requests in process, as `app.request` does, from its own instance. */
export interface TestClient {
  request(input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /** Stops its app: the modules' onClose, then its storage closed. */
  close(): Promise<void>;
}

/** An app a test runtime started: its request handler, and how to stop it. */
export interface TestInstance {
  instance: AppInstance;
  stop(): Promise<void>;
}

/** How `app.request` runs an app: set by a runtime (the Node entry: SQLite in memory). */
export type TestRuntime = (app: App, options?: TestClientOptions) => Promise<TestInstance>;
let testRuntime: TestRuntime | undefined;

export function testInstance(app: App, options?: TestClientOptions): Promise<TestInstance> {
  if (!testRuntime) {
    return Promise.reject(
      new Error(
        'app.request needs a runtime: on Node.js import Berth as "berth" or "berth/core" (either answers in process); in a page, ask createBrowserServer(…).fetch',
      ),
    );
  }
  return testRuntime(app, options);
}

export async function testRequest(
  started: Promise<TestInstance>,
  input: string | URL | Request,
  init?: RequestInit,
): Promise<Response> {
  const request =
    input instanceof Request
      ? new Request(input, init)
      : new Request(
          typeof input === 'string' && input.startsWith('/') ? `http://localhost${input}` : input,
          init,
        );
  return (await started).instance.fetch(request);
}

/** Lets a runtime answer `app.request` (the Node entry does this on import). */
export function setTestRuntime(runtime: TestRuntime): void {
  testRuntime = runtime;
}
