#!/usr/bin/env python3
"""Copies the README's example functions from Tests/BLEMockKitTests/ReadmeExampleTests.swift
into README.md, so the two stay identical. Each ```swift block of README.md that contains
`@Test func NAME()` is replaced by that function from the test file (imports kept)."""
import pathlib
import re

root = pathlib.Path(__file__).resolve().parent.parent
source = (root / "Tests/BLEMockKitTests/ReadmeExampleTests.swift").read_text()
readme_path = root / "README.md"
readme = readme_path.read_text()


def function(name: str) -> str:
    start = source.index(f"@Test func {name}()")
    end = source.index("\n}\n", start) + 3
    return source[start:end]


def replace(match: re.Match) -> str:
    block = match.group(1)
    name = re.search(r"@Test func (\w+)\(\)", block)
    if not name:
        return match.group(0)
    imports = "".join(line + "\n" for line in block.splitlines() if line.startswith("import "))
    separator = "\n" if imports else ""
    return "```swift\n" + imports + separator + function(name.group(1)) + "```"


readme_path.write_text(re.sub(r"```swift\n(.*?)```", replace, readme, flags=re.S))
