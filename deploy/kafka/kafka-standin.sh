#!/bin/sh
# The entry points of deploy/docker/Dockerfile.kafka (the compose stack's
# local Kafka), by the name it is called with:
#   kafka-server-start.sh            write server.properties from the
#                                    KAFKA_* environment (KAFKA_NODE_ID ->
#                                    node.id), format the data dir with
#                                    CLUSTER_ID once, run the broker
#   kafka-topics.sh ARGS             Kafka's TopicCommand
#   kafka-broker-api-versions.sh ARGS  BrokerApiVersionsCommand
set -eu
CP='/opt/kafka/libs/*'
CONF=/opt/kafka/config
tool() {
  cls="$1"; shift
  exec java -Xmx256m -cp "$CP" -Dlog4j2.configurationFile="$CONF/log4j2-tools.properties" "$cls" "$@"
}
case "$(basename "$0")" in
  kafka-topics.sh) tool org.apache.kafka.tools.TopicCommand "$@" ;;
  kafka-broker-api-versions.sh) tool org.apache.kafka.tools.BrokerApiVersionsCommand "$@" ;;
  kafka-server-start.sh) ;;
  *) echo "kafka-standin.sh: called as $0?" >&2; exit 2 ;;
esac

cfg="$CONF/server.properties"
{
  echo "log.dirs=${KAFKA_LOG_DIRS:-/var/lib/kafka/data}"
  # KAFKA_FOO_BAR=v -> foo.bar=v, as apache/kafka does.
  env | while IFS='=' read -r k v; do
    case "$k" in
      KAFKA_HEAP_OPTS|KAFKA_LOG_DIRS|KAFKA_OPTS) ;;
      KAFKA_*) echo "$(echo "${k#KAFKA_}" | tr 'A-Z_' 'a-z.')=$v" ;;
    esac
  done
} >"$cfg"
data="${KAFKA_LOG_DIRS:-/var/lib/kafka/data}"
if [ ! -f "$data/meta.properties" ]; then
  java -Xmx256m -cp "$CP" -Dlog4j2.configurationFile="$CONF/log4j2-tools.properties" \
    kafka.tools.StorageTool format -t "${CLUSTER_ID:?CLUSTER_ID is not set}" \
    -c "$cfg" --ignore-formatted
fi
# shellcheck disable=SC2086
exec java ${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m} -server -XX:+UseG1GC \
  -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true \
  -Dlog4j2.configurationFile="$CONF/log4j2.properties" \
  -cp "$CP" kafka.Kafka "$cfg"
