#!/usr/bin/env python3
"""Copies the documentation's example tests into the documents, so the two stay identical.

Each ```swift block of README.md, MIGRATION.md and the DocC articles (Sources/*/*.docc/*.md)
that contains `@Test func NAME()` (or `@Test(TRAITS)` and `func NAME()` on the next line) is
replaced by that function as it stands in one of the example files, with the attributes on
the lines above it (`@available(...)`, which the examples that run a self-driving scope or an
exploration need) (Tests/BLEMockKitTests/ReadmeExampleTests.swift,
Tests/BLEMockKitTests/Documentation/*.swift, Tests/BLECBMTests/Documentation/*.swift and
Tests/BLEMockKitTestingTests/Documentation/*.swift); the block's import lines are kept. Blocks
fenced as ```swift before (old code in MIGRATION.md) are left alone. The test
`everyDocumentedSwiftBlockIsCompiled` checks the result.

With `--check`, nothing is written: the script lists the documents that are out of date and
exits with status 1 if there are any."""
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
sources = [root / "Tests/BLEMockKitTests/ReadmeExampleTests.swift"]
sources += sorted((root / "Tests/BLEMockKitTests/Documentation").glob("*.swift"))
sources += sorted((root / "Tests/BLECBMTests/Documentation").glob("*.swift"))
sources += sorted((root / "Tests/BLEMockKitTestingTests/Documentation").glob("*.swift"))
source = "\n".join(path.read_text() for path in sources)
documents = [root / "README.md", root / "MIGRATION.md"] + sorted(root.glob("Sources/*/*.docc/*.md"))


def function(name: str) -> str:
    """The example function, dedented: example files may wrap their tests in a suite."""
    test = re.search(rf"^([ \t]*)@Test(\([^\n]*\))?[ \t]*(\n[ \t]*)?func {name}\(\)", source, flags=re.M)
    if not test:
        raise SystemExit(f"no example test named {name}() in the example files")
    start = line_start = test.start()
    indent = test.group(1)
    start += len(indent)
    # Attributes on the lines above (`@available`) belong to the example.
    while line_start > 0:
        previous_start = source.rindex("\n", 0, line_start - 1) + 1
        previous = source[previous_start : line_start - 1]
        if not (previous.startswith(indent + "@") and not previous.startswith(indent + "@Test")):
            break
        start = line_start = previous_start
    end = source.index(f"\n{indent}}}\n", start) + len(indent) + 3
    lines = source[start:end].split("\n")
    return "\n".join(line[len(indent):] if line.startswith(indent) else line for line in lines)


def replace(match: re.Match) -> str:
    block = match.group(1)
    name = re.search(r"@Test(?:\([^\n]*\))?[ \t]*\n?[ \t]*func (\w+)\(\)", block)
    if not name:
        return match.group(0)
    imports = "".join(line + "\n" for line in block.splitlines() if line.startswith("import "))
    separator = "\n" if imports else ""
    return "```swift\n" + imports + separator + function(name.group(1)) + "```"


check = "--check" in sys.argv[1:]
stale = []
for document in documents:
    if document.exists():
        text = document.read_text()
        synced = re.sub(r"```swift\n(.*?)```", replace, text, flags=re.S)
        if synced != text:
            stale.append(document.relative_to(root))
            if not check:
                document.write_text(synced)
if check and stale:
    for document in stale:
        print(f"{document}: examples differ from the tests; run scripts/sync-doc-examples.py")
    sys.exit(1)
