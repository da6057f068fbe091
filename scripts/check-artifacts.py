#!/usr/bin/env python3
"""Check (a) of scripts/check-artifacts.sh, which calls it: every artifact deployed under REPO is what
Maven Central needs (see that script's header for the list). Usage: check-artifacts.py REPO.
Prints "VERSION DIST_ARCHIVE" on stdout on success; fails naming each thing to fix on stderr."""
import re, sys, zipfile, xml.etree.ElementTree as ET
from pathlib import Path

repo = Path(sys.argv[1]) / "dev" / "latchkey"
NS = {"m": "http://maven.apache.org/POM/4.0.0"}
errors = []

def versions_of(artifact):
    return sorted(p.name for p in (repo / artifact).iterdir() if p.is_dir())

def file_of(artifact, version, classifier, ext):
    """The deployed file, for a snapshot the newest timestamped one its maven-metadata.xml names."""
    d = repo / artifact / version
    value = version
    meta = d / "maven-metadata.xml"
    if version.endswith("-SNAPSHOT") and meta.exists():
        for sv in ET.parse(meta).getroot().iterfind("versioning/snapshotVersions/snapshotVersion"):
            if sv.findtext("extension") == ext and (sv.findtext("classifier") or "") == classifier:
                value = sv.findtext("value")
    f = d / (f"{artifact}-{value}" + (f"-{classifier}" if classifier else "") + f".{ext}")
    return f if f.exists() else None

def check_pom(artifact, version, bom=False):
    f = file_of(artifact, version, "", "pom")
    if f is None:
        errors.append(f"{artifact}: no POM deployed"); return None
    text = f.read_text()
    root = ET.fromstring(text)
    where = f"{artifact}: deployed POM"
    if root.find("m:parent", NS) is not None:
        errors.append(f"{where} has a parent: it must be flattened (flatten-maven-plugin, inherited from the root pom.xml)")
    unresolved = sorted(set(re.findall(r"\$\{[^}]*\}", text)))
    if unresolved:
        errors.append(f"{where} has unresolved variables: {unresolved}")
    for path in ("m:name", "m:description", "m:url", "m:licenses/m:license/m:name", "m:licenses/m:license/m:url",
                 "m:developers/m:developer/m:name", "m:scm/m:url", "m:scm/m:connection"):
        if not (root.findtext(path, namespaces=NS) or "").strip():
            errors.append(f"{where} lacks {path.replace('m:', '')} (Maven Central requires it)")
    if not bom and root.find("m:dependencyManagement", NS) is not None:
        errors.append(f"{where} has a dependencyManagement section: a consumer would import its BOMs")
    for dep in root.iterfind(".//m:dependency", NS):
        if not (dep.findtext("m:version", namespaces=NS) or "").strip():
            errors.append(f"{where}: dependency {dep.findtext('m:groupId', namespaces=NS)}:"
                          f"{dep.findtext('m:artifactId', namespaces=NS)} has no version")
    return root

# the artifacts that may hold bench code: lock-bench itself, and the command, whose `latchkey bench` runs it
BENCH_ARTIFACTS = {"lock-bench", "lock-cli"}

bom_versions = versions_of("latchkey-bom") if (repo / "latchkey-bom").is_dir() else []
if len(bom_versions) != 1:
    sys.exit(f"check-artifacts: expected one version of latchkey-bom in {repo}, found {bom_versions}")
version = bom_versions[0]
bom = check_pom("latchkey-bom", version, bom=True)
managed = set()
if bom is not None:
    for dep in bom.iterfind("m:dependencyManagement/m:dependencies/m:dependency", NS):
        managed.add(dep.findtext("m:artifactId", namespaces=NS))
        if dep.findtext("m:version", namespaces=NS) != version or dep.find("m:scope", NS) is not None:
            errors.append(f"latchkey-bom: {dep.findtext('m:artifactId', namespaces=NS)} must have version {version} and no scope")
deployed = {p.name for p in repo.iterdir() if p.is_dir()} - {"latchkey-bom"}
for a in sorted(deployed - managed):
    errors.append(f"{a} is deployed but not in latchkey-bom: add it to latchkey-bom/pom.xml")
for a in sorted(managed - deployed):
    errors.append(f"{a} is in latchkey-bom but was not deployed")

for artifact in sorted(deployed & managed):
    if version not in versions_of(artifact):
        errors.append(f"{artifact}: version {version} not deployed"); continue
    pom = check_pom(artifact, version)
    jar = file_of(artifact, version, "", "jar")
    if jar is None:
        errors.append(f"{artifact}: no jar"); continue
    with zipfile.ZipFile(jar) as z:
        manifest = z.read("META-INF/MANIFEST.MF").decode()
        entries = z.namelist()
    # bench code (floors, the Baseline SPI) ships in lock-bench and the command only: a backend's floors live
    # in its src/bench/java, compiled into its tests and lock-bench-peers, never into its jar
    if artifact not in BENCH_ARTIFACTS:
        bench = [n for n in entries if n.startswith("dev/latchkey/bench/") or n == "META-INF/services/dev.latchkey.bench.Baseline"
                 or (n.endswith(".class") and "Baseline" in n.rsplit("/", 1)[-1])]
        if bench:
            errors.append(f"{artifact}: jar holds bench code {bench[:5]}: move it to {artifact}/src/bench/java")
        if pom is not None and any(d.findtext("m:artifactId", namespaces=NS) == "lock-bench"
                                   for d in pom.iterfind("m:dependencies/m:dependency", NS)):
            errors.append(f"{artifact}: deployed POM depends on lock-bench: only test scope may (bench floors)")
    name = re.search(r"^Automatic-Module-Name: *(\S+)", manifest, re.M)
    if not name or not re.fullmatch(r"dev\.latchkey(\.[a-z][a-z0-9]*)+", name.group(1)):
        errors.append(f"{artifact}: jar's Automatic-Module-Name is {name.group(1) if name else 'missing'}: "
                      f"set <automatic.module.name>dev.latchkey.NAME</automatic.module.name> in {artifact}/pom.xml")
    for classifier, proof in (("sources", ".java"), ("javadoc", "index.html")):
        f = file_of(artifact, version, classifier, "jar")
        if f is None:
            errors.append(f"{artifact}: no {classifier} jar")
            continue
        with zipfile.ZipFile(f) as z:
            if not any(n.endswith(proof) for n in z.namelist()):
                errors.append(f"{artifact}: {classifier} jar has no {proof}")

dist = file_of("lock-cli", version, "dist", "tar.gz")
all_jar = file_of("lock-cli", version, "all", "jar")
if dist is None: errors.append("lock-cli: no dist tar.gz (maven-assembly-plugin in lock-cli/pom.xml)")
if all_jar is None: errors.append("lock-cli: no jar with classifier all (build-helper-maven-plugin in lock-cli/pom.xml)")
if errors:
    print("check-artifacts: " + "\n  ".join(["the deployed artifacts are not ready:"] + errors), file=sys.stderr)
    sys.exit(1)
print(f"check-artifacts: (a) {len(managed)} artifacts + latchkey-bom {version}: jars, sources, javadoc, "
      f"module names, flattened POMs with licence, scm and developers, no bench code outside lock-bench and lock-cli", file=sys.stderr)
print(version, dist)
