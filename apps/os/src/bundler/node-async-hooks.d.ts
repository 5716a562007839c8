// The one Node API the bundler uses (nodejs_compat provides it in workerd); the OS's types are
// the Workers runtime's, without @types/node, so it is declared here as far as it is used.
declare module "node:async_hooks" {
  export class AsyncLocalStorage<T> {
    getStore(): T | undefined;
    run<R>(store: T, callback: () => R): R;
  }
}
