#!/usr/bin/env bash
# The whole test suite on a fresh machine: install the servers' software, model-check the lock
# protocols (scripts/model-check.sh), then mvn deploy to a file repository and the artifacts' check,
# the pipeline recipes, the docs' check and the out-of-tree Redis example as a plugin.
# Each backend's tests start (and stop) their own server through scripts/<name>.sh, or use the
# server named by LATCHKEY_TEST_<NAME>_URI when set. Then the PostgreSQL and Azure suites run again on
# the container route, against images built here from Debian's and npm's packages (docs/testing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
# the protocol models first: a minute or three, and a broken protocol fails before the long suite
bash scripts/model-check.sh
# deploy, not only verify: the same run installs the artifacts and deploys them to a file repository,
# which scripts/check-artifacts.sh then checks as Maven Central and a user would see them
mvn -B -ntp deploy -DaltDeploymentRepository=local::file:"$PWD/.run/deploy" "$@"
bash scripts/check-artifacts.sh .run/deploy
# the container route: the two backends' contract suites, their servers in containers (the modules just installed by
# the deploy); the images are built on the first run only (1.5 to 4 min each), then found by their hash
(
  DOCKER_HOST="$(bash scripts/install-docker.sh --force | tail -n 1)"; export DOCKER_HOST
  # what a killed test JVM left: containers, fault tests' networks (a JVM that ends stops its own)
  trap 'docker ps -aq --filter label=dev.latchkey.test | xargs -r docker rm -f >/dev/null
        docker network prune -f --filter label=dev.latchkey.test >/dev/null' EXIT
  bash scripts/images/build.sh postgres >/dev/null
  bash scripts/images/build.sh azurite >/dev/null
  # the kit's contracts of both modes of each, and the faults only containers make (about 4 min; the
  # whole two suites take about 8, too long for CI's budget beside the rest). Not the server-clock
  # tests: they start a server of their own under libfaketime through the script on either route, so
  # the deploy above ran them already
  mvn -B -ntp -o verify -pl lock-postgres,lock-azure -Dlatchkey.test.servers=containers \
    -Dtest='AdvisoryTckTest,LeaseTckTest,ContainerFaultTest,AzureLeaseTckTest,AzureEtagTckTest,!*#serverClock*' \
    -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=none -Dfailsafe.failIfNoSpecifiedTests=false "$@"
)
bash scripts/recipes.sh  # the recipes of docs/pipeline-runners.md, each tested against the real servers
bash scripts/check-docs.sh  # links, anchors and the sh blocks of README.md and docs/ (about half a minute)
# the out-of-tree backend example, on its own POM against the installed kit, then as a plugin of the command (~4 min)
bash examples/lock-redis/test.sh
