"""Code semantics the lint rules share: what a call resolves to, what is a write,
what is a retry scope.  One notion of each for the whole catalogue."""
