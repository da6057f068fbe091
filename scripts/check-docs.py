#!/usr/bin/env python3
"""Checks the documentation: README.md, docs/**/*.md and the modules' README.md files.

Guarantee: when this exits 0,
  (a) every relative link and every #anchor in those files resolves to a file or directory inside
      the repository, and an anchor to a heading of the linked page (GitHub's rules: the heading's
      text lower-cased, punctuation other than '-' and '_' dropped, spaces turned into '-', a
      repeated heading suffixed -1, -2, ...); every page under docs/ is reachable from README.md by
      links; no page names a document outside the repository;
  (b) every fenced block tagged `sh` ran and exited 0 under `bash -e -o pipefail`; blocks tagged
      `bash` or `shell` fail the check, so a shell block is never left unrun by its tag alone;
  (c) every block preceded by `<!-- compiled: PATH -->` (Java examples) stands line for line (indentation
      aside, blank lines skipped) in the repository's file PATH, a test that the build compiles and
      runs; checked with --links-only too.
Convention (stated for readers at the top of docs/README.md): `sh` blocks run in order, one bash
process each, in a scratch directory whose entries link to the repository's top level (so
`./latchkey` and `./scripts/...` work and new files land in the scratch directory), with
LATCHKEY_URI set to a scratch file:// directory shared by the blocks of one page (and HOME to a scratch one). A `sh` block
preceded by `<!-- not run: REASON -->` (or by `<!-- snippet: recipes/NAME/FILE -->`: a recipe, which
recipes/NAME/test.sh runs against real servers) is skipped and counted; untagged blocks and blocks tagged
`console`, `text` or another language (`java`, `sql`, `xml`) are never run. A failure prints FILE:LINE of the block.
Usage: scripts/check-docs.sh [--links-only]
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), '..'))
RUN_TAG = 'sh'
# tags that look like a shell but would not run: make the writer choose sh (run) or console (not run)
SHELL_LOOKALIKES = {'bash', 'shell', 'zsh', 'shell-session'}
NOT_RUN = re.compile(r'<!--\s*not run:\s*(\S.*?)\s*-->')
# a recipe's snippet (docs/pipeline-runners.md) is run by its own test against real servers instead
SNIPPET = re.compile(r'<!--\s*snippet:\s*(recipes/([^/\s]+)/\S+)\s*-->')
# a Java example that a test holds verbatim (compiled and run by the build)
COMPILED = re.compile(r'<!--\s*compiled:\s*(\S+)\s*-->')
# names of documents that live outside the repository; a page must stand alone
OUTSIDE_DOCUMENTS = ('DESIGN.md', '../shared')
BLOCK_TIMEOUT_S = 120


def pages():
    found = [os.path.join(ROOT, 'README.md')]
    for base, _, files in os.walk(os.path.join(ROOT, 'docs')):
        found += [os.path.join(base, f) for f in sorted(files) if f.endswith('.md')]
    for entry in sorted(os.listdir(ROOT)):
        module_readme = os.path.join(ROOT, entry, 'README.md')
        if entry.startswith('lock-') and os.path.isfile(module_readme):
            found.append(module_readme)
    return sorted(set(found))


def rel(path):
    return os.path.relpath(path, ROOT)


class Page:
    """One markdown file split into prose lines (code removed) and fenced blocks."""

    def __init__(self, path):
        self.path = path
        self.lines = open(path, encoding='utf-8').read().split('\n')
        self.prose = []    # (line number, text) outside fences
        self.blocks = []   # (line number of the opening fence, tag, body, not-run reason or None)
        fence, tag, start, body = None, None, 0, []
        for number, line in enumerate(self.lines, 1):
            opening = re.match(r'^(\s*)(`{3,}|~{3,})\s*([^\s`]*)', line)
            if fence is None and opening:
                fence, tag, start, body = opening.group(2), opening.group(3), number, []
            elif fence is not None and line.strip().startswith(fence) and line.strip().strip(fence[0]) == '':
                self.blocks.append((start, tag, '\n'.join(body) + '\n', self.not_run_reason(start)))
                fence = None
            elif fence is not None:
                body.append(line)
            else:
                self.prose.append((number, line))
        if fence is not None:
            self.blocks.append((start, tag, '\n'.join(body), None))
            self.unclosed = start
        else:
            self.unclosed = None

    def line_above(self, fence_line):
        """The nearest non-blank line above a fence."""
        number = fence_line - 2
        while number >= 0 and not self.lines[number].strip():
            number -= 1
        return self.lines[number] if number >= 0 else ''

    def compiled_in(self, fence_line):
        """The PATH of a `<!-- compiled: PATH -->` comment on the nearest non-blank line above, or None."""
        match = COMPILED.search(self.line_above(fence_line))
        return match.group(1) if match else None

    def not_run_reason(self, fence_line):
        """The reason of a `<!-- not run: ... -->` comment on the nearest non-blank line above."""
        line = self.line_above(fence_line)
        match = NOT_RUN.search(line)
        if match:
            return match.group(1)
        snippet = SNIPPET.search(line)
        return f'{snippet.group(1)}, run by recipes/{snippet.group(2)}/test.sh (scripts/recipes.sh)' if snippet else None

    def anchors(self):
        seen, result = {}, set()
        for _, line in self.prose:
            heading = re.match(r'^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$', line)
            if heading:
                slug = github_slug(heading.group(1))
                count = seen.get(slug, 0)
                seen[slug] = count + 1
                result.add(slug if count == 0 else f'{slug}-{count}')
            for explicit in re.finditer(r'<a\s+(?:name|id)="([^"]+)"', line):
                result.add(explicit.group(1))
        return result

    def links(self):
        """(line number, target) of every inline link or image outside code, also one whose text runs
        over a line break, and of every reference definition."""
        text = '\n'.join(line for _, line in self.prose)
        text = re.sub(r'`+[^`]*`+', lambda span: re.sub(r'[^\n]', ' ', span.group(0)), text)  # keep offsets
        line_of = lambda offset: self.prose[text.count('\n', 0, offset)][0]
        for match in re.finditer(r'!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)', text):
            yield line_of(match.start(1)), match.group(1)
        for match in re.finditer(r'^\s*\[[^\]]+\]:\s*(\S+)', text, re.M):
            yield line_of(match.start(1)), match.group(1)


def compiled_mismatch(body, source_path):
    """None if the block's lines stand in order, consecutively, among the file's (both stripped, blank
    lines skipped); else what is wrong."""
    if not os.path.isfile(source_path):
        return 'names no file'
    wanted = [line.strip() for line in body.split('\n') if line.strip()]
    have = [line.strip() for line in open(source_path, encoding='utf-8').read().split('\n') if line.strip()]
    for i in range(len(have) - len(wanted) + 1):
        if have[i:i + len(wanted)] == wanted:
            return None
    # the longest prefix found, to name the first line that differs
    best = 0
    for i in range(len(have)):
        n = 0
        while n < len(wanted) and i + n < len(have) and have[i + n] == wanted[n]:
            n += 1
        best = max(best, n)
    return f'is not in that file line for line: its line {best + 1} of code ({wanted[min(best, len(wanted) - 1)]!r}) differs'


def github_slug(heading):
    text = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', heading)    # a link's text stays
    text = re.sub(r'<[^>]+>', '', text)                           # tags go
    text = text.replace('`', '').replace('*', '')
    text = text.strip().lower()
    text = re.sub(r'[^\w\- ]', '', text)                          # letters, digits, _, -, space stay
    return text.replace(' ', '-')


def check_links(all_pages):
    errors, cache, graph = [], {}, {}
    checked = 0

    def page(path):
        if path not in cache:
            cache[path] = Page(path)
        return cache[path]

    for path in all_pages:
        current = page(path)
        graph[path] = set()
        if current.unclosed:
            errors.append(f'{rel(path)}:{current.unclosed}: code fence never closed')
        for number, line in enumerate(current.lines, 1):
            for name in OUTSIDE_DOCUMENTS:
                if name in line:
                    errors.append(f'{rel(path)}:{number}: names {name!r}, a document outside the repository')
        for start, _, body, _ in current.blocks:
            source = current.compiled_in(start)
            if source:
                problem = compiled_mismatch(body, os.path.join(ROOT, source))
                if problem:
                    errors.append(f'{rel(path)}:{start}: the block marked compiled: {source} {problem}')
        for number, target in current.links():
            if re.match(r'^[a-z][a-z0-9+.-]*:', target, re.I):
                continue   # http:, https:, mailto: are not checked (no network here)
            checked += 1
            target_path, _, anchor = target.partition('#')
            target_path = urllib.parse.unquote(target_path)
            resolved = path if not target_path else os.path.realpath(
                os.path.join(os.path.dirname(path), target_path))
            where = f'{rel(path)}:{number}'
            if not (resolved == ROOT or resolved.startswith(ROOT + os.sep)):
                errors.append(f'{where}: link {target!r} leaves the repository')
                continue
            if not os.path.exists(resolved):
                errors.append(f'{where}: link {target!r}: no such file {rel(resolved)}')
                continue
            if resolved.endswith('.md') and os.path.isfile(resolved):
                graph[path].add(resolved)
                if resolved not in graph and resolved not in all_pages:
                    all_pages.append(resolved)   # a linked page's own links are checked too
            if anchor:
                if not resolved.endswith('.md'):
                    errors.append(f'{where}: link {target!r}: anchor into a file that is not markdown')
                elif urllib.parse.unquote(anchor) not in page(resolved).anchors():
                    errors.append(f'{where}: link {target!r}: no heading #{anchor} in {rel(resolved)}')
    reached, todo = set(), [os.path.join(ROOT, 'README.md')]
    while todo:
        current = todo.pop()
        if current not in reached:
            reached.add(current)
            todo += graph.get(current, ())
    for path in all_pages:
        if rel(path).startswith('docs' + os.sep) and path not in reached:
            errors.append(f'{rel(path)}:1: not reachable by links from README.md')
    return errors, checked


def scratch_tree(base):
    """A directory whose entries link to the repository's top level (new files land in it)."""
    tree = os.path.join(base, 'repo')
    os.makedirs(tree)
    for entry in os.listdir(ROOT):
        if entry not in ('.git', '.run', 'target'):
            os.symlink(os.path.join(ROOT, entry), os.path.join(tree, entry))
    return tree


FAILED_LINE = re.compile(r'^check-docs-failed-line (\d+)$', re.M)


def run_block(body, cwd, env):
    """Runs one block in a session of its own; whatever it leaves running is killed when it ends.
    Returns (status, output, line of the block that failed, 1-based, or None)."""
    # line 1 is the trap, so the block's line k is bash's line k + 1
    script = "trap 'echo check-docs-failed-line $((LINENO - 1)) >&2' ERR\n" + body
    with tempfile.TemporaryFile(mode='w+') as log:   # a file, not a pipe: background jobs cannot hold it up
        process = subprocess.Popen(['bash', '-e', '-o', 'pipefail', '-c', script], cwd=cwd, env=env,
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   text=True, start_new_session=True)
        try:
            status = process.wait(timeout=BLOCK_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            status = f'timeout after {BLOCK_TIMEOUT_S} s'
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()
        log.seek(0)
        output = log.read()
    failed = FAILED_LINE.search(output)
    return status, FAILED_LINE.sub('', output), int(failed.group(1)) if failed else None


def run_blocks(all_pages):
    errors, ran, skipped = [], 0, 0
    for path in all_pages:
        current = Page(path)
        scratch = None
        for start, tag, body, reason in current.blocks:
            where = f'{rel(path)}:{start}'
            if tag in SHELL_LOOKALIKES:
                errors.append(f'{where}: block tagged `{tag}`: tag it `sh` (run here) or `console` (not run)')
                continue
            if tag != RUN_TAG:
                continue
            if reason is not None:
                skipped += 1
                print(f'check-docs: {where}: not run: {reason}')
                continue
            if scratch is None:
                scratch = tempfile.mkdtemp(prefix='check-docs-')
                tree = scratch_tree(scratch)
            # HOME too: a block's `~/…` (a plugin folder, say) must never reach the real home directory
            home = os.path.join(scratch, 'home')
            os.makedirs(home, exist_ok=True)
            env = dict(os.environ, LATCHKEY_URI='file://' + os.path.join(scratch, 'locks'), HOME=home)
            began = time.monotonic()
            status, output, failed_line = run_block(body, tree, env)
            ran += 1
            if status != 0:
                tail = '\n'.join('    ' + line for line in output.strip().split('\n')[-15:])
                line = f' at {rel(path)}:{start + failed_line}' if failed_line else ''
                errors.append(f'{where}: sh block failed (exit {status}){line}:\n{tail}')
            else:
                print(f'check-docs: {where}: ran ({time.monotonic() - began:.1f} s)')
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    return errors, ran, skipped


def main():
    links_only = '--links-only' in sys.argv[1:]
    all_pages = pages()
    errors, links = check_links(all_pages)
    ran = skipped = 0
    if not links_only:
        block_errors, ran, skipped = run_blocks(all_pages)
        errors += block_errors
    for error in errors:
        print(f'check-docs: {error}', file=sys.stderr)
    print(f'check-docs: {len(all_pages)} pages, {links} relative links, {ran} sh blocks ran, {skipped} marked not run, '
          f'{len(errors)} problems')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
