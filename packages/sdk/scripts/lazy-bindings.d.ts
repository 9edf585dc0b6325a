/** Types of lazy-bindings.js, for its tests. */
export function lazyBindings(code: string): {code: string; lazy: string[]}
