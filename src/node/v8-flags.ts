import v8 from 'node:v8';

// On globalThis, so the listeners of every copy of this module are called:
// bin/berth loads the compile cache from dist/, the command runs from its bundle.
const listenersKey = Symbol.for('berth.beforeV8FlagsChange');
type WithListeners = { [listenersKey]?: Array<() => void> };

/**
 * Calls `listener` just before Berth changes a V8 flag in a running process.
 * V8 stamps the code it caches with a hash of its flags and refuses code
 * stamped with other flags than its own at start (src/node/compile-cache.ts).
 */
export function beforeV8FlagsChange(listener: () => void): void {
  ((globalThis as WithListeners)[listenersKey] ??= []).push(listener);
}

/** Changes V8 flags in this process (v8.setFlagsFromString), telling the listeners first. */
export function setV8Flags(flags: string): void {
  for (const listener of (globalThis as WithListeners)[listenersKey] ?? []) listener();
  v8.setFlagsFromString(flags);
}
