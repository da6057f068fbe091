"""Checks that docs/pipeline-runners.md shows every recipe snippet exactly as the tests run it.

A snippet is every file of recipes/<recipe>/ except test.sh. The page shows it in the fenced block
right after a line `<!-- snippet: recipes/<recipe>/<file> -->`; that block must equal the file
byte for byte (but for the final newline), and every snippet must be shown. Exits 1 naming each
difference, so a snippet edited on one side only fails CI instead of drifting.
"""
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parents[2]
page = root / "docs" / "pipeline-runners.md"
lines = page.read_text().splitlines()
shown = {}
for i, line in enumerate(lines):
    m = re.fullmatch(r"<!-- snippet: (\S+) -->", line.strip())
    if not m:
        continue
    fence = lines[i + 1]
    if not fence.startswith("```"):
        sys.exit(f"{page.name}:{i + 2}: a fenced block must follow the marker for {m.group(1)}")
    end = lines.index("```", i + 2)
    shown[m.group(1)] = "\n".join(lines[i + 2:end])

snippets = sorted(str(p.relative_to(root)) for p in (root / "recipes").glob("*/*")
                  if p.is_file() and p.parent.name != "lib" and p.name != "test.sh")
problems = []
for s in snippets:
    if s not in shown:
        problems.append(f"{s} is not shown in docs/{page.name} (add a '<!-- snippet: {s} -->' block)")
    elif shown[s] != (root / s).read_text().rstrip("\n"):
        problems.append(f"the block for {s} in docs/{page.name} differs from the file: copy the file into it")
for s in sorted(set(shown) - set(snippets)):
    problems.append(f"docs/{page.name} shows {s}, which is not a recipe snippet file")
for p in problems:
    print("FAIL [docs]: " + p, file=sys.stderr)
print(f"docs: {len(snippets)} snippets shown as tested" if not problems else "", file=sys.stderr)
sys.exit(1 if problems else 0)
