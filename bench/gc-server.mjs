// @ts-check
// Runs the built server with a way to ask for a full GC (an IPC message), so the memory phase
// reads RSS (and the V8 heap) after garbage is collected rather than whenever V8 last ran. Needs --expose-gc.
process.on('message', (message) => {
  if (message !== 'gc') return;
  globalThis.gc?.();
  globalThis.gc?.();
  process.send?.({ gcDone: true, ...process.memoryUsage() });
});
// A URL rather than a literal specifier: the type check then leaves the built server (dist/,
// which may not exist yet) out of its program.
await import(new URL('../dist/main.js', import.meta.url).href);
