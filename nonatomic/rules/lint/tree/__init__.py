"""The libcst tree as the rules read it: one batched walk (`walk`) and positions generated
only around a finding (`positions`)."""
