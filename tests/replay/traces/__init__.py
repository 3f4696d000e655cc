"""Trace generators: real agent frameworks and their instrumentation, run around fake models and a mock provider."""
