"""What decides whether a rule runs on a file at all: byte prefilters (`prefilters`) and gates
over CPython's syntax tree (`gates`)."""
