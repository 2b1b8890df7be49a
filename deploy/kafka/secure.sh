# shellcheck shell=bash
# secure.sh - the test broker's second, secured listener: SASL_SSL with
# SCRAM-SHA-512 and -256 over TLS, and the KRaft StandardAuthorizer.  Sourced by
# kafka.sh (it uses HOST, PORT, CPORT, DATA, tool and die from there).
#
# What it adds to the broker:
#  - a listener SASL_SSL://HOST:SPORT (SPORT = KAFKA_SASL_PORT, default
#    KAFKA_PORT + 2) beside PLAINTEXT and CONTROLLER;
#  - a CA and a broker certificate (SAN IP:127.0.0.1, DNS:localhost, so
#    clients verify the host name) made with openssl on first use in
#    $DATA/secure/; nothing is checked in;
#  - StandardAuthorizer with allow.everyone.if.no.acl.found=false, and
#    super.users = User:ANONYMOUS (the broker itself and the controller
#    talk PLAINTEXT, and so do the other tests, which stay unrestricted)
#    and User:eosaudit-admin;
#  - three users, eosaudit-admin, eosaudit (the auditor) and producer,
#    with random passwords in $DATA/secure/NAME.password: SCRAM-SHA-512
#    and SCRAM-SHA-256 credentials made when the data dir is formatted
#    (kafka-storage format --add-scram).  The ACLs belong to User:NAME.
#
#   kafka.sh secure bootstrap            print HOST:SPORT
#   kafka.sh secure ca                   print the CA certificate's path
#   kafka.sh secure password NAME        print a user's password
#   kafka.sh secure user NAME PASSWORD   create or update a SCRAM user (-512, -256)
#                                        (admin API over PLAINTEXT)
#   kafka.sh secure acl ARGS...          AclCommand over PLAINTEXT, e.g.
#       --add --allow-principal User:u --operation Read --topic t
#   kafka.sh secure admin-config FILE    write a Java client config for
#                                        eosaudit-admin over SASL_SSL

SPORT="${KAFKA_SASL_PORT:-$((PORT + 2))}"
SECURE_DIR="$DATA/secure"
SECURE_ADMIN=eosaudit-admin
SECURE_USERS="$SECURE_ADMIN eosaudit producer"

# Makes the CA, the broker's key and certificate and the users' passwords
# once per data dir.
secure_material() {
  local d="$SECURE_DIR"
  [ -f "$d/broker.pem" ] && [ -f "$d/producer.password" ] && return 0
  command -v openssl >/dev/null 2>&1 || die "openssl not found (run deploy/install-deps.sh)"
  mkdir -p "$d"
  chmod 700 "$d"
  (
    set -e
    cd "$d"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 \
      -subj "/CN=eosaudit test CA" -keyout ca.key -out ca.pem \
      -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign"
    openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
      -keyout broker.key.tmp -out broker.csr
    # Kafka's PEM keystore wants a PKCS#8 key.
    openssl pkcs8 -topk8 -nocrypt -in broker.key.tmp -out broker.key
    printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" \
      "extendedKeyUsage=serverAuth,clientAuth" >broker.ext
    openssl x509 -req -in broker.csr -CA ca.pem -CAkey ca.key \
      -CAcreateserial -days 3650 -extfile broker.ext -out broker.crt
    cat broker.key broker.crt >broker.pem.tmp
    rm -f broker.key.tmp broker.csr broker.ext
    for u in $SECURE_USERS; do openssl rand -hex 16 >"$u.password"; done
    chmod 600 ca.key broker.key broker.pem.tmp ./*.password
    mv broker.pem.tmp broker.pem
  ) >"$DATA/secure.log" 2>&1 || {
    cat "$DATA/secure.log" >&2
    die "could not make the test certificates in $d"
  }
}

# The properties appended to the runtime config (later keys win).
secure_config() {
  secure_material
  cat <<EOF
# --- the secured listener (secure.sh) ---
listeners=PLAINTEXT://$HOST:$PORT,CONTROLLER://$HOST:$CPORT,SASL_SSL://$HOST:$SPORT
advertised.listeners=PLAINTEXT://$HOST:$PORT,SASL_SSL://$HOST:$SPORT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL
sasl.enabled.mechanisms=SCRAM-SHA-512,SCRAM-SHA-256
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.ssl.keystore.type=PEM
listener.name.sasl_ssl.ssl.keystore.location=$SECURE_DIR/broker.pem
listener.name.sasl_ssl.ssl.client.auth=none
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=false
super.users=User:ANONYMOUS;User:$SECURE_ADMIN
EOF
}

secure_password() { cat "$SECURE_DIR/$1.password"; }

# Extra arguments of the first kafka-storage format: the SCRAM users.
# (Quoted values: the parser reads a bare hex string as something else.)
secure_format_args() {
  local u
  secure_material
  for u in $SECURE_USERS; do
    echo "--add-scram SCRAM-SHA-512=[name=\"$u\",password=\"$(secure_password "$u")\"]"
    echo "--add-scram SCRAM-SHA-256=[name=\"$u\",password=\"$(secure_password "$u")\"]"
  done
}

secure_cmd() {
  local sub="${1:-}"
  [ $# -gt 0 ] && shift
  case "$sub" in
    bootstrap) echo "$HOST:$SPORT" ;;
    ca) echo "$SECURE_DIR/ca.pem" ;;
    password) [ $# -eq 1 ] || die "usage: kafka.sh secure password NAME"; secure_password "$1" ;;
    user)
      [ $# -eq 2 ] || die "usage: kafka.sh secure user NAME PASSWORD"
      # One mechanism a request: the broker refuses two for one user.
      local m
      for m in SCRAM-SHA-512 SCRAM-SHA-256; do
        tool org.apache.kafka.tools.ConfigCommand --bootstrap-server "$HOST:$PORT" \
          --alter --entity-type users --entity-name "$1" \
          --add-config "$m=[iterations=4096,password=$2]" >/dev/null
      done
      ;;
    acl) tool org.apache.kafka.tools.AclCommand --bootstrap-server "$HOST:$PORT" "$@" ;;
    admin-config)
      [ $# -eq 1 ] || die "usage: kafka.sh secure admin-config FILE"
      (umask 077 && cat >"$1" <<EOF
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="$SECURE_ADMIN" password="$(secure_password "$SECURE_ADMIN")";
ssl.truststore.type=PEM
ssl.truststore.location=$SECURE_DIR/ca.pem
EOF
      ) ;;
    *) sed -n '24,36p' "$DIR/secure.sh" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
}
