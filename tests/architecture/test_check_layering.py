#!/usr/bin/env python3
"""check_layering.py finds an include against the direction, and only such includes."""
import pathlib
import subprocess
import sys
import tempfile

SCRIPT = pathlib.Path(__file__).with_name("check_layering.py")


def run(files):
    with tempfile.TemporaryDirectory() as d:
        for name, text in files.items():
            path = pathlib.Path(d) / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        return subprocess.run([sys.executable, SCRIPT, d], capture_output=True, text=True)


def main():
    ok = run({"graph/a.h": '#include "graph/b.h"\n', "ops/c.cc": '#include "graph/a.h"\n#include <vector>\n'})
    assert ok.returncode == 0, ok.stdout
    bad = run({"graph/a.h": '#include "ops/op.h"\n', "ops/c.cc": '#include "engine/session.h"\n'})
    assert bad.returncode == 1, bad.stdout
    assert "graph/a.h: includes ops/op.h" in bad.stdout and "ops/c.cc: includes engine/session.h" in bad.stdout
    profiler = run({"profiler/r.cc": '#include "graph/shape.h"\n#include "ops/op.h"\n'})
    assert profiler.returncode == 1 and "ops/op.h" in profiler.stdout and "graph/shape.h" not in profiler.stdout
    print("check_layering.py: passes a clean tree, names each include against the direction")


if __name__ == "__main__":
    main()
