#!/usr/bin/env python3
"""Every C++ file of the project laid out as .clang-format says: prints each file that
clang-format would change and exits 1; exits 0 when there is none.

    python3 tests/architecture/check_format.py [SOURCE_DIR]

`clang-format -i <file>` fixes one (Debian's clang-format, version 14).
"""
import pathlib
import shutil
import subprocess
import sys

FOLDERS = ("bench", "engine", "graph", "ops", "profiler", "python", "tests")


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
    tool = shutil.which("clang-format-14") or shutil.which("clang-format")
    if tool is None:
        print("check_format.py: clang-format is not installed (scripts/install_deps.sh installs it)")
        return 1
    files = sorted(p for folder in FOLDERS for p in (root / folder).rglob("*") if p.suffix in (".cc", ".h"))
    unformatted = []
    for path in files:
        formatted = subprocess.run([tool, f"--style=file:{root / '.clang-format'}", str(path)],
                                   capture_output=True, text=True, check=True).stdout
        if formatted != path.read_text():
            unformatted.append(path.relative_to(root))
    for path in unformatted:
        print(f"{path}: not as .clang-format lays it out (clang-format -i {path})")
    print(f"{len(unformatted)} of {len(files)} C++ files to reformat")
    return 1 if unformatted else 0


if __name__ == "__main__":
    sys.exit(main())
