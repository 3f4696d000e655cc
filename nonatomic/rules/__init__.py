"""The catalogue both engines run: lint rules, replay detectors and the YAML rule packs.

Nothing here imports an engine (`nonatomic.lint`, `nonatomic.replay`).
"""
