"""Write Memory's forwarding block: one `name = forward("part", Service.name)` line for each
public call of each service `Memory.__init__` composes, in the order it composes them and
the order each service defines its calls. Memory's flat API is generated from the services
this way, as AsyncMemory's is generated from Memory's, so a call added to a service is one
edit and one run of this script; tests/test_services.py fails until it has been run.

    python tools/forwards.py            # rewrites the block in src/clew/memory.py
    python tools/forwards.py --check    # exits 1 if the block is not what it would write
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

MEMORY = Path(__file__).resolve().parents[1] / "src" / "clew" / "memory.py"
BEGIN = "    # -- forwarded calls: written by tools/forwards.py, do not edit by hand --"
END = "    # -- end of forwarded calls --"


def composed(source: str) -> list[tuple[str, str]]:
    """(attribute, class name) of each service Memory's constructor makes, in order: the
    lines `self.part = Class(self, ...)`."""
    tree = ast.parse(source)
    memory = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Memory")
    init = next(n for n in memory.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    found = []
    for node in ast.walk(init):  # in source order, inside `with self._composed():` too
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
            continue
        target, call = node.targets[0], node.value
        made_with_self = (
            call.args and isinstance(call.args[0], ast.Name) and call.args[0].id == "self"
        )
        if isinstance(target, ast.Attribute) and isinstance(call.func, ast.Name) and made_with_self:
            found.append((target.attr, call.func.id))
    return found


def public_calls(cls: type) -> list[str]:
    """The public methods a service class defines itself, in the order it defines them."""
    return [n for n, v in vars(cls).items() if callable(v) and not n.startswith("_")]


def block(source: str) -> str:
    """The forwarding block as it should read, from Memory's constructor and the services."""
    import importlib

    memory = importlib.import_module("clew.memory")
    lines = [BEGIN]
    for part, name in composed(source):
        cls = getattr(memory, name)
        lines += [f'    {call} = forward("{part}", {name}.{call})' for call in public_calls(cls)]
    lines.append(END)
    return "\n".join(lines)


def rewritten(source: str) -> str:
    """`source` with its forwarding block replaced by the generated one."""
    start, end = source.index(BEGIN), source.index(END) + len(END)
    return source[:start] + block(source) + source[end:]


def main(argv: list[str]) -> int:
    source = MEMORY.read_text(encoding="utf-8")
    wanted = rewritten(source)
    if "--check" in argv:
        if wanted != source:
            print("memory.py's forwarded calls are stale: run python tools/forwards.py")
            return 1
        return 0
    MEMORY.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(MEMORY.parents[1]))
    raise SystemExit(main(sys.argv[1:]))
