"""Prints the command a recipe's snippet runs, read from the snippet file itself, so that the
tests run exactly what the documentation shows (Python's standard library only: no YAML parser
is assumed on the machine, so the YAML forms read here are the ones the snippets use).

  extract.py gha-run FILE STEP          the `run: |` block of the GitHub Actions step named STEP
  extract.py gitlab-script FILE JOB     the `script:` items of GitLab CI job JOB, one per line
  extract.py k8s-command FILE           the container's `command: [...]` (a flow list), NUL-separated
  extract.py airflow FILE TASK ATTR     the BashOperator TASK's keyword ATTR (bash_command, skip_on_exit_code)
"""
import ast
import json
import sys


def indent(line):
    return len(line) - len(line.lstrip(" "))


def block_after(lines, start, key):
    """The literal block scalar `key: |` at or after line `start`, dedented."""
    for i in range(start, len(lines)):
        if lines[i].strip() == key + ": |":
            base = indent(lines[i])
            body = []
            for line in lines[i + 1:]:
                if line.strip() and indent(line) <= base:
                    break
                body.append(line)
            width = min(indent(l) for l in body if l.strip())
            return "\n".join(l[width:] for l in body).strip("\n")
    sys.exit(f"no '{key}: |' block after line {start + 1}")


def gha_run(path, step):
    lines = open(path).read().splitlines()
    for i, line in enumerate(lines):
        if line.strip() == f"- name: {step}":
            return block_after(lines, i, "run")
    sys.exit(f"{path}: no step named '{step}'")


def gitlab_script(path, job):
    lines = open(path).read().splitlines()
    start = lines.index(f"{job}:")
    for i in range(start + 1, len(lines)):
        if lines[i].strip() == "script:":
            items = []
            for line in lines[i + 1:]:
                if not line.strip().startswith("- "):
                    break
                items.append(line.strip()[2:])
            return "\n".join(items)
    sys.exit(f"{path}: job '{job}' has no script")


def k8s_command(path):
    for line in open(path):
        if line.strip().startswith("command: ["):
            return "\0".join(json.loads(line.split(":", 1)[1]))
    sys.exit(f"{path}: no 'command: [...]'")


def airflow(path, task, attr):
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "BashOperator":
            kw = {k.arg: ast.literal_eval(k.value) for k in node.keywords
                  if isinstance(k.value, ast.Constant)}
            if kw.get("task_id") == task:
                return str(kw[attr])
    sys.exit(f"{path}: no BashOperator with task_id '{task}'")


if __name__ == "__main__":
    what, *args = sys.argv[1:]
    out = {"gha-run": gha_run, "gitlab-script": gitlab_script,
           "k8s-command": k8s_command, "airflow": airflow}[what](*args)
    sys.stdout.write(out)
