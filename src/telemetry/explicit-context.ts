import { type Context, type ContextManager, ROOT_CONTEXT } from "@opentelemetry/api";

/**
 * A context manager that carries nothing across asynchronous calls: the active context is always
 * the root. Parkway gives every span its parent explicitly (a stored `traceparent`), so it needs no
 * implicit context; the SDK's default (AsyncLocalStorage) would instead add a hook to every promise
 * of the process once the first span is exported, which costs every `await` of the server.
 */
export class ExplicitContextManager implements ContextManager {
  active(): Context {
    return ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    _context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return fn.call(thisArg, ...args);
  }

  bind<T>(_context: Context, target: T): T {
    return target;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    return this;
  }
}
