# Makefile fragment: include from the top Makefile.
#   include deploy/kafka/kafka.mk
# KAFKA_SH is resolved relative to this fragment, so any include path works.
KAFKA_SH := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))/kafka.sh

.PHONY: kafka-up kafka-down kafka-status kafka-reset kafka-fetch

kafka-up:
	@$(KAFKA_SH) up

kafka-down:
	@$(KAFKA_SH) down

kafka-status:
	@$(KAFKA_SH) status

kafka-reset:
	@$(KAFKA_SH) reset

kafka-fetch:
	@$(KAFKA_SH) fetch
