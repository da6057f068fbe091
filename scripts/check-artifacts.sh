#!/usr/bin/env bash
# Proves that what `mvn deploy` wrote to a file repository is what Maven Central needs and what a user
# can consume (docs/artifacts.md). Usage: scripts/check-artifacts.sh [REPO]   (default: .run/deploy,
# where scripts/test.sh deploys). Three checks, each failing with what to fix:
#  (a) every published artifact (the deployed dev/latchkey/* and the entries of latchkey-bom, which must
#      be the same set) has its jar, sources jar and javadoc jar; the jar names its module
#      (Automatic-Module-Name dev.latchkey.*); the POM has no parent, no ${...}, a version on every
#      dependency, and name, description, url, licence, developer and scm; lock-cli has its `all` jar
#      and `dist` archive; no jar but lock-bench's and lock-cli's holds bench code (dev/latchkey/bench/,
#      a *Baseline* class, a dev.latchkey.bench.Baseline service) and no other POM depends on lock-bench.
#  (b) a fresh project that imports latchkey-bom and depends on lock-api resolves with an empty local
#      repository and REPO as its only repository (any other POM or BOM it asked for would not be
#      found), and gets lock-api alone. Plugins come from LATCHKEY_PLUGIN_REPO (default
#      ~/.m2/repository, where the build put them), which Maven consults for plugins only.
#  (c) the distribution archive, unpacked anywhere, runs `bin/latchkey run --key demo -- echo hello`
#      with the default file:// backend (under a throwaway HOME), and its class-data sharing archive
#      behaves as scripts/check-launcher.sh checks (made on first use, mapped next, replaced when the
#      jar changes, safe when runs start at once or the archive cannot be made).
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(readlink -f "${1:-.run/deploy}")"
plugins="$(readlink -f "${LATCHKEY_PLUGIN_REPO:-$HOME/.m2/repository}")"
[[ -d "$repo/dev/latchkey" ]] || { echo "check-artifacts: no dev/latchkey under $repo: run mvn deploy first (see scripts/test.sh)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# (a) prints "VERSION DIST_ARCHIVE" on success
read -r version dist < <(python3 - "$repo" <<'PY'
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
PY
)

# (b) the only repository is $repo: `central` points there for dependencies, and every other repository a
# POM may name is mirrored there too, so a third-party POM or BOM is simply not found
mkdir -p "$work/consumer" "$work/local"
cat > "$work/settings.xml" <<EOF
<settings>
  <mirrors><mirror><id>only-the-deployed</id><mirrorOf>*,!central</mirrorOf><url>file://$repo</url></mirror></mirrors>
  <profiles><profile><id>only-the-deployed</id>
    <repositories><repository><id>central</id><url>file://$repo</url>
      <releases><enabled>true</enabled></releases><snapshots><enabled>true</enabled></snapshots></repository></repositories>
    <pluginRepositories><pluginRepository><id>central</id><url>file://$plugins</url>
      <releases><checksumPolicy>ignore</checksumPolicy></releases></pluginRepository></pluginRepositories>
  </profile></profiles>
  <activeProfiles><activeProfile>only-the-deployed</activeProfile></activeProfiles>
</settings>
EOF
cat > "$work/consumer/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId><artifactId>consumer</artifactId><version>1</version>
  <dependencyManagement><dependencies>
    <dependency><groupId>dev.latchkey</groupId><artifactId>latchkey-bom</artifactId><version>$version</version><type>pom</type><scope>import</scope></dependency>
  </dependencies></dependencyManagement>
  <dependencies><dependency><groupId>dev.latchkey</groupId><artifactId>lock-api</artifactId></dependency></dependencies>
</project>
EOF
if ! (cd "$work/consumer" && mvn -B -ntp -s "$work/settings.xml" -Dmaven.repo.local="$work/local" \
        org.apache.maven.plugins:maven-dependency-plugin:3.8.1:list -DoutputFile="$work/list.txt" -DexcludeTransitive=false \
        > "$work/consumer.log" 2>&1); then
  grep -E "^\[ERROR\] [^ []" "$work/consumer.log" | grep -v "To see the full\|Re-run Maven\|For more information" | head -10 >&2
  echo "check-artifacts: (b) a project using only latchkey-bom and lock-api does not resolve from $repo alone (above)" >&2
  exit 1
fi
resolved="$(grep -Eo '[^ ]+:[^ ]+:jar:[^ ]+:[a-z]+' "$work/list.txt" | sed 's/ *$//' | sort)"
if [[ "$resolved" != "dev.latchkey:lock-api:jar:$version:compile" ]]; then
  echo "check-artifacts: (b) lock-api should bring nothing with it, but resolved:" >&2
  echo "$resolved" >&2
  exit 1
fi
echo "check-artifacts: (b) latchkey-bom + lock-api resolved from $repo alone: $resolved" >&2

# (c) the archive as a user installs it
tar -xzf "$dist" -C "$work"
home="$work/home"; mkdir -p "$home"
out="$(cd "$work" && env -u LATCHKEY_URI -u XDG_CACHE_HOME -u LATCHKEY_CDS HOME="$home" "$work/latchkey-$version/bin/latchkey" run --key demo -- echo hello)"
if [[ "$out" != "hello" ]]; then
  echo "check-artifacts: (c) bin/latchkey run --key demo -- echo hello printed '$out'" >&2
  exit 1
fi
[[ -d "$home/.latchkey/locks" ]] || { echo "check-artifacts: (c) the default file:// backend left no $home/.latchkey/locks" >&2; exit 1; }
echo "check-artifacts: (c) $(basename "$dist") runs bin/latchkey run --key demo -- echo hello: ok" >&2

# (c) class-data sharing: the launcher's archive, checked on this unpacked copy (its jar gets touched)
bash scripts/check-launcher.sh "$work/latchkey-$version"
