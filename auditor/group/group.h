/*
 * group.h - serve --group as an audit mode (../audit/mode.h): the
 * partitions of the audited topics shared by the eosaudit processes of
 * one consumer group, their state carried from one owner to the next by
 * a compacted topic (group.c; docs/GROUP.md).  Set audit_conf.mode to it
 * with audit_conf.group.
 */
#ifndef EOSAUDIT_GROUP_H
#define EOSAUDIT_GROUP_H

#include "../audit/mode.h"

extern const struct audit_mode audit_mode_group;

#endif /* EOSAUDIT_GROUP_H */
