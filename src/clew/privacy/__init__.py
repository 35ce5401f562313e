"""What clew keeps out of what it stores: secrets taken out of free text before an event is
made (`redaction`, with the shapes a secret takes in `secret_shapes` and the fields that are
free text in `free_text`), and the sealing key kept outside the store (`sealing`).

Owns only pure code. May import: `clew.core`, `clew.errors`, `clew.models`.
"""
