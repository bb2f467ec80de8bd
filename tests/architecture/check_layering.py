#!/usr/bin/env python3
"""The direction of dependencies (docs/architecture.md), checked on every #include:
each layer may include only itself and the layers below it. Prints each include that
runs against the direction and exits 1; exits 0 when there is none.

    python3 tests/architecture/check_layering.py [SOURCE_DIR]
"""
import pathlib
import re
import sys

# Layer -> the layers its files may include (besides its own).
ALLOWED = {
    "graph": set(),
    "profiler": {"graph"},
    "ops": {"graph", "profiler"},
    "engine": {"graph", "profiler", "ops"},
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def violations(root: pathlib.Path):
    for layer, allowed in ALLOWED.items():
        folder = root / layer
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*")):
            if path.suffix not in (".h", ".cc"):
                continue
            for target in INCLUDE.findall(path.read_text(errors="replace")):
                top = target.split("/", 1)[0]
                if top == layer or top not in ALLOWED:
                    continue  # its own layer, or a library header
                if top not in allowed:
                    yield f"{path.relative_to(root)}: includes {target} ({layer} must not depend on {top})"


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
    found = list(violations(root))
    for line in found:
        print(line)
    print(f"{len(found)} include(s) against the direction of dependencies")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
