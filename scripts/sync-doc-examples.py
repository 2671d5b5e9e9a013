#!/usr/bin/env python3
"""Copies the documentation's example tests into the documents, so the two stay identical.

Each ```swift block of README.md, MIGRATION.md and the DocC articles (Sources/*/*.docc/*.md)
that contains `@Test func NAME()` is replaced by that function as it stands in one of the
example files (Tests/BLEMockKitTests/ReadmeExampleTests.swift,
Tests/BLEMockKitTests/Documentation/*.swift, Tests/BLECBMTests/Documentation/*.swift and
Tests/BLEMockKitTestingTests/Documentation/*.swift); the block's import lines are kept. Blocks
fenced as ```swift before (old code in MIGRATION.md) are left alone. The test
`everyDocumentedSwiftBlockIsCompiled` checks the result."""
import pathlib
import re

root = pathlib.Path(__file__).resolve().parent.parent
sources = [root / "Tests/BLEMockKitTests/ReadmeExampleTests.swift"]
sources += sorted((root / "Tests/BLEMockKitTests/Documentation").glob("*.swift"))
sources += sorted((root / "Tests/BLECBMTests/Documentation").glob("*.swift"))
sources += sorted((root / "Tests/BLEMockKitTestingTests/Documentation").glob("*.swift"))
source = "\n".join(path.read_text() for path in sources)
documents = [root / "README.md", root / "MIGRATION.md"] + sorted(root.glob("Sources/*/*.docc/*.md"))


def function(name: str) -> str:
    """The example function, dedented: example files may wrap their tests in a suite."""
    start = source.index(f"@Test func {name}()")
    line_start = source.rindex("\n", 0, start) + 1
    indent = source[line_start:start]
    end = source.index(f"\n{indent}}}\n", start) + len(indent) + 3
    lines = source[start:end].split("\n")
    return "\n".join(line[len(indent):] if line.startswith(indent) else line for line in lines)


def replace(match: re.Match) -> str:
    block = match.group(1)
    name = re.search(r"@Test func (\w+)\(\)", block)
    if not name:
        return match.group(0)
    imports = "".join(line + "\n" for line in block.splitlines() if line.startswith("import "))
    separator = "\n" if imports else ""
    return "```swift\n" + imports + separator + function(name.group(1)) + "```"


for document in documents:
    if document.exists():
        text = document.read_text()
        document.write_text(re.sub(r"```swift\n(.*?)```", replace, text, flags=re.S))
